"""No code from the work tree or the environment runs as the tool (docs/security.md).

A checked-out branch can hold a `gitstate/` package, and PYTHONPATH can name another: `python -m
gitstate` started inside the work tree would import either in place of the tool. The job
supervisor and every agent hook command that `install` writes must start the installed tool
alone. (The git hooks have the same test in tests/test_git_hooks.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, submit

__all__ = ["agents", "jobs_repo"]  # fixtures

HOSTILE = """import os, pathlib
pathlib.Path({marker!r}).write_text("hijacked by " + __file__)
"""


def plant(folder: Path, marker: Path) -> None:
    """A `gitstate` package in `folder` that leaves `marker` behind when imported or run."""
    package = folder / "gitstate"
    package.mkdir(parents=True, exist_ok=True)
    for name in ("__init__.py", "__main__.py"):
        (package / name).write_text(HOSTILE.format(marker=str(marker)))
    # Every module path the tool might be started by, so `-m gitstate.x.y` is caught too.
    for sub in ("usecases", "usecases/jobs", "hooks", "cli"):
        (package / sub).mkdir(parents=True, exist_ok=True)
        (package / sub / "__init__.py").write_text(HOSTILE.format(marker=str(marker)))
    (package / "usecases" / "jobs" / "supervise.py").write_text(HOSTILE.format(marker=str(marker)))


@pytest.fixture
def hostile(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The repository's branch holds a hostile package, and PYTHONPATH names another."""
    marker = tmp_path / "HIJACKED"
    plant(repo.path, marker)
    repo.git("add", "gitstate")
    repo.git("commit", "-q", "-m", "a branch with a gitstate package")
    elsewhere = tmp_path / "pythonpath"
    plant(elsewhere, marker)
    monkeypatch.setenv("PYTHONPATH", str(elsewhere))
    return marker


def test_the_job_supervisor_runs_the_installed_tool(
    jobs_repo: Repo, agents: Agents, cli: Any, hostile: Path
) -> None:
    body = submit(cli, "Add a file")
    [row] = finish(cli, body["job_id"])
    assert row["state"] == "done"
    assert not hostile.exists(), hostile.read_text()


def _commands(settings: Path) -> list[str]:
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "command" and isinstance(item, str):
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(settings.read_text()))
    return found


PAYLOADS: dict[str, dict[str, Any]] = {
    "claude": {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s"},
    "gemini": {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s"},
    "agy": {"conversationId": "c", "invocationNum": 1, "executionNum": 1},
}
SETTINGS = {"claude": ".claude/settings*.json", "gemini": ".gemini/settings*.json"}


@pytest.mark.parametrize("agent", sorted(PAYLOADS))
def test_installed_agent_hook_commands_run_the_installed_tool(
    repo: Repo, cli: Any, hostile: Path, agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No agy on PATH: agy's hooks go to the workspace hooks file (.agents/hooks.json).
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                               if not (Path(p) / "agy").exists()))  # fmt: skip
    assert cli("patch", "--set", "goal=Guard the hooks", "--todo", "one").exit_code == 0
    result = cli("install", "--agent", agent)
    assert result.exit_code == 0, result.stderr
    pattern = SETTINGS.get(agent, ".agents/hooks.json")
    files = [p for p in repo.path.glob(pattern) if p.is_file()]
    commands = [c for f in files for c in _commands(f) if " hook " in c]
    assert commands, files
    where = {"workspacePaths": [str(repo.path)]} if agent == "agy" else {"cwd": str(repo.path)}
    payload = json.dumps({**PAYLOADS[agent], **where})
    for command in commands:
        # As the agent CLI runs it: a shell, in the project, with the user's environment.
        proc = subprocess.run(
            ["sh", "-c", command],
            cwd=repo.path,
            input=payload,
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=60,
            check=False,
        )
        assert proc.returncode in (0, 2), (command, proc.stderr)
        assert not hostile.exists(), (command, hostile.read_text())
    inject = next(c for c in commands if "hook inject" in c)
    proc = subprocess.run(
        ["sh", "-c", inject], cwd=repo.path, input=payload, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert "Guard the hooks" in proc.stdout


def test_install_refuses_an_interpreter_that_isolated_mode_cannot_serve(
    repo: Repo, tmp_path: Path
) -> None:
    """A tool that only imports through PYTHONPATH (as a `--user` install only imports through
    the user site) would give hooks that fail or run other code: install says so instead."""
    import sys

    import gitstate

    source = Path(gitstate.__file__).resolve().parent.parent
    venv = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # click and pygit2 come from this test run's environment; gitstate only from PYTHONPATH.
    site = [p for p in sys.path if p.endswith("site-packages")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), *site])}
    proc = subprocess.run(
        [str(python), "-m", "gitstate", "install", "--agent", "claude"],
        cwd=repo.path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error: ") and "-I" in proc.stderr
    assert not (repo.path / ".claude").exists()
