"""`job doctor` (can jobs run here?) and `job quota` (the agent's usage windows).

doctor checks the agent CLI (present, `--version`), git, Python, the settings, and that the
worktree folder is writable; missing agent login folders are only a warning (the agent may
authenticate another way). quota runs the command the agent's job adapter names and lets the
adapter read its answer (gitstate/agents/: agy's `/usage`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from gitstate import agents
from gitstate.errors import AgentMissing, AgyError, Failure
from gitstate.jobs.document import config as config_mod
from gitstate.jobs.storage import records
from gitstate.jobs.usecases.agents import Agent, Quota, configured
from gitstate.jobs.usecases.submit import require_agent
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
        config = config_mod.load(store.config_value)
        agent = configured(config)
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


def quota(layout: Layout) -> Quota:
    """The configured agent's usage windows, read by its adapter (gitstate/agents/)."""
    config = config_mod.load(records.main_store(layout).config_value)
    agent = configured(config)
    argv = agent.quota_argv()
    if argv is None:  # the agent's CLI reports no usage windows
        askable = agents.quota_agents()
        whose = " or ".join(f"{module.TITLE}'s" for module in askable)
        raise Failure(
            f"quota reads {whose} usage; the configured agent is {agent.kind}",
            hint=f"git config agy.agent {askable[0].NAME}" if askable else None,
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
        asked = shlex.join([agent.name, *argv[len(agent.command) :]])
        raise Failure(f"{asked} failed: {proc.stderr.strip()[:200]}")
    return agent.read_quota(proc.stdout)


def parse_quota(text: str, kind: str | None = None) -> dict[str, Any]:
    """`{"source", "windows"}` read from `text` by the adapter of `kind` (default: the jobs'
    default agent), as `job quota --json` prints it."""
    return agents.job_adapter(kind or agents.default_job_agent()).read_quota(text).as_json()
