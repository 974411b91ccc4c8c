"""End to end: an agent CLI configured by `install` gets the state after /clear and cannot stop
with a step half done (a fake agent CLI runs the hooks exactly as the real one would)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo

FAKE = Path(__file__).parent / "fakes" / "fake_agent.py"


def agent(name: str, repo: Repo, kind: str, *extra: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(FAKE), name, str(repo.path), kind, *extra],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize(
    ("name", "scope"),
    [
        ("claude", "project"),
        ("claude", "user"),
        ("gemini", "project"),
        ("gemini", "user"),
        ("agy", "project"),
    ],
)
def test_installed_agent_resumes_and_is_guarded(
    repo: Repo, cli: Any, name: str, scope: str
) -> None:
    result = cli("install", "--agent", name, "--scope", scope)
    assert result.exit_code == 0, result.output
    assert (
        cli(
            "patch", "--set", "goal=Make the pool retry", "--todo", "write the test", "--start", "1"
        ).exit_code
        == 0
    )

    started = agent(name, repo, "start", "--source", "clear")
    assert started["ran"] == 1
    (context,) = started["context"]
    assert "Resume from the first next step" in context
    assert context.endswith(repo.view.read_text() + "=== END agy-state notes ===\n")

    stopping = agent(name, repo, "stop")
    assert stopping["blocked"] is True
    assert '"write the test"' in stopping["reasons"][0]
    assert agent(name, repo, "stop", "--again")["blocked"] is False  # never loops

    assert cli("patch", "--done", "1", "--verify", "pytest passes").exit_code == 0
    assert agent(name, repo, "stop")["blocked"] is False

    result = cli("uninstall", "--agent", name, "--scope", scope)
    assert result.exit_code == 0, result.output
    assert agent(name, repo, "start", "--source", "clear")["ran"] == 0


def test_claude_compaction_saves_unsaved_edits(repo: Repo, cli: Any) -> None:
    cli("install", "--agent", "claude")
    cli("patch", "--todo", "later")
    repo.view.write_text(
        repo.view.read_text().replace("## Open issues\n", "## Open issues\n- kept\n")
    )
    assert agent("claude", repo, "compact")["ran"] == 1
    assert "- kept" in repo.git("show", "refs/agy/state:STATE.md")


def test_agy_later_invocations_are_not_injected_again(repo: Repo, cli: Any) -> None:
    cli("install", "--agent", "agy")
    cli("patch", "--todo", "later")
    assert agent("agy", repo, "start")["context"]
    assert agent("agy", repo, "start", "--again")["context"] == []
