"""`job doctor` (can jobs run here?) and `job quota` (agy's usage windows, parsed).

doctor checks the agent CLI (present, `--version`), git, Python, the settings, and that the
worktree folder is writable; missing agent login folders are only a warning (the agent may
authenticate another way). The quota output format of agy is not documented; the parser takes
`command.data.groups` when present and falls back to tab-separated text.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from gitstate.errors import AgentMissing, AgyError, Failure
from gitstate.jobs.storage import records
from gitstate.jobs.usecases.agents import Agent
from gitstate.jobs.usecases.submit import job_config, require_agent
from gitstate.storage.layout import Layout

VERSION_TIMEOUT = 15.0
QUOTA_TIMEOUT = 75.0
MIN_PYTHON = (3, 10)


class Report(NamedTuple):
    ok: bool
    agent_missing: bool
    body: dict[str, Any]


def doctor(layout: Layout) -> Report:
    issues: list[str] = []
    warnings: list[str] = []
    hints: list[str] = []
    store = records.main_store(layout)
    body: dict[str, Any] = {}
    agent: Agent | None = None
    try:
        config = job_config(store)
        agent = Agent.from_config(config)
        body["config"] = {
            "agent": list(config.agent),
            "agent_kind": config.kind,
            "max_concurrent": config.max_concurrent,
            "queue_timeout_seconds": config.queue_timeout,
            "max_retries": config.max_retries,
            "skip_permissions": config.skip_permissions,
            "model": config.model,
            "effort": config.effort,
            "timeout": config.timeout,
        }
    except AgyError as exc:
        issues.append(f"configuration: {exc.message}")
    missing = False
    if agent is not None:
        path = shutil.which(agent.name)
        body.update(agent=agent.name, agent_path=path, agent_version=None)
        if path is None:
            missing = True
            issues.append(f"the agent CLI {agent.name!r} is not on PATH")
            hints.append("install it, or git config agy.agent <command>")
        else:
            version, problem = _run(agent.version_argv(), VERSION_TIMEOUT)
            body["agent_version"] = version
            if problem:
                issues.append(f"{agent.name} --version failed: {problem}")
        home = Path(os.environ.get("HOME", "~")).expanduser()
        dirs = agent.auth_dirs(home)
        body["auth_dirs"] = [str(d) for d in dirs]
        body["auth_found"] = [str(d) for d in dirs if d.is_dir()]
        if not body["auth_found"]:
            warnings.append(
                "no login folder of the agent found (" + ", ".join(map(str, dirs)) + ")"
            )
    git_version, problem = _run(["git", "--version"], VERSION_TIMEOUT)
    body["git_version"] = git_version
    if problem:
        issues.append(f"git: {problem}")
    body["python_version"] = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info[:2] < MIN_PYTHON:
        issues.append("Python 3.10 or newer is needed")
    try:
        folder = records.main_workdir(store) / ".agy" / "worktrees"
        body["worktree_dir"] = str(folder)
        existing = next(p for p in (folder, *folder.parents) if p.exists())
        if not os.access(existing, os.W_OK | os.X_OK):
            issues.append(f"{existing} is not writable: job worktrees cannot be created")
    except AgyError as exc:
        issues.append(exc.message)
    body.update(ok=not issues, issues=issues, warnings=warnings, hints=hints)
    return Report(not issues, missing, body)


def _run(argv: list[str], timeout: float) -> tuple[str | None, str | None]:
    """(first line of output, problem or None)."""
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        return None, "not installed"
    except subprocess.TimeoutExpired:
        return None, f"no answer within {timeout:g}s"
    except OSError as exc:
        return None, str(exc)
    text = (proc.stdout or proc.stderr).strip()
    first = text.splitlines()[0] if text else ""
    if proc.returncode != 0:
        return first or None, f"exit code {proc.returncode}"
    return first, None


# ---- quota --------------------------------------------------------------------------------


def quota(layout: Layout) -> dict[str, Any]:
    config = job_config(records.main_store(layout))
    agent = Agent.from_config(config)
    argv = agent.quota_argv()
    if argv is None:  # the agent's CLI reports no usage windows (gitstate/agents/)
        raise Failure(
            f"quota reads agy's usage; the configured agent is {agent.kind}",
            hint="git config agy.agent agy",
        )
    require_agent(config)
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=QUOTA_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise AgentMissing(f"the agent CLI {agent.name!r} is not installed") from None
    except subprocess.TimeoutExpired:
        raise Failure(f"{agent.name} gave no usage answer within {QUOTA_TIMEOUT:g}s") from None
    if proc.returncode != 0 and not proc.stdout.strip():
        raise Failure(f"{agent.name} -p /usage failed: {proc.stderr.strip()[:200]}")
    return parse_quota(proc.stdout)


def parse_quota(text: str) -> dict[str, Any]:
    """{"windows": [{"name", "used", "limit", "remaining", "percent", "resets_at"}], "source"}."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    groups = _dig(data, "command", "data", "groups")
    if isinstance(groups, list):
        return {"source": "json", "windows": [_window(g) for g in groups if isinstance(g, dict)]}
    rows = [line.split("\t") for line in text.splitlines() if "\t" in line]
    if rows:
        head = [h.strip().lower() for h in rows[0]]
        named = any(h in ("window", "name", "used", "limit") for h in head)
        body = rows[1:] if named else rows
        keys = head if named else ["name", "used", "limit", "remaining", "resets_at"]
        windows = [_window(dict(zip(keys, (c.strip() for c in row), strict=False))) for row in body]
        return {"source": "text", "windows": windows}
    raise Failure("could not read agy's usage answer", hint=text.strip()[:200] or None)


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _window(group: dict[str, Any]) -> dict[str, Any]:
    def pick(*names: str) -> Any:
        for name in names:
            if group.get(name) not in (None, ""):
                return group[name]
        return None

    return {
        "name": pick("window", "name", "label", "title", "id"),
        "used": pick("used", "usage", "consumed"),
        "limit": pick("limit", "quota", "max", "total"),
        "remaining": pick("remaining", "left", "available"),
        "percent": pick("percent", "percentage", "used_percent", "pct"),
        "resets_at": pick("resets_at", "reset_at", "resetsAt", "reset", "resets"),
    }
