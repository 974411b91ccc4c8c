"""Shared material for the job tests: fake agent CLIs on PATH, and small drivers of the CLI."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from conftest import Repo

FAKE = Path(__file__).parent / "fakes" / "fake_job_agent.py"


class Agents(NamedTuple):
    bin: Path
    log: Path

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def starts(self) -> list[dict[str, Any]]:
        return [e for e in self.entries() if e["event"] == "start"]


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Agents:
    """`agy` and `claude` on PATH: the fake agent CLI in each flavour."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for flavour in ("agy", "claude"):
        script = folder / flavour
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" {flavour} "$@"\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    log = tmp_path / "agent.log"
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    return Agents(folder, log)


@pytest.fixture
def jobs_repo(repo: Repo, agents: Agents) -> Iterator[Repo]:
    """A repository with fake agents; any job still active at the end is cancelled."""
    yield repo
    from gitstate.jobs.usecases import control, lifecycle
    from gitstate.storage.layout import discover

    layout = discover(repo.path)
    if layout is None:
        return
    for meta in lifecycle.read_all(layout):
        if meta.get("state") in lifecycle.ACTIVE:
            control.cancel(layout, meta["id"])


def run_json(cli: Any, *args: str, code: int = 0) -> Any:
    result = cli(*args, "--json")
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def submit(cli: Any, text: str = "Add a file", *args: str) -> dict[str, Any]:
    body = run_json(cli, "job", "run", "--text", text, *args)
    assert isinstance(body, dict)
    return body


def finish(cli: Any, *job_ids: str, code: int = 0) -> list[dict[str, Any]]:
    rows = run_json(
        cli, "job", "watch", *job_ids, "--interval", "0.5", "--timeout", "60s", code=code
    )
    assert isinstance(rows, list)
    return rows


def meta(repo: Repo, job_id: str) -> dict[str, Any]:
    path = repo.path / ".git" / "agy" / "jobs" / job_id / "meta.json"
    value = json.loads(path.read_text())
    assert isinstance(value, dict)
    return value
