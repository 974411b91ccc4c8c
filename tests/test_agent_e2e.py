"""End to end: an agent CLI configured by `install` gets the state after /clear and cannot stop
with a step half done (a fake agent CLI runs the hooks exactly as the real one would)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo

FAKE = Path(__file__).parent / "fakes" / "fake_agent.py"


def agent(name: str, repo: Repo, kind: str, *extra: str, trusted: bool = True) -> dict[str, Any]:
    """What the fake CLI did; Gemini CLI in a trusted folder unless told (it runs no hook in
    an untrusted one)."""
    env = {**os.environ, "GEMINI_CLI_TRUST_WORKSPACE": "true" if trusted else "false"}
    proc = subprocess.run(
        [sys.executable, str(FAKE), name, str(repo.path), kind, *extra],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
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
    view = repo.view.read_text()
    if name == "gemini":  # as the model sees it, escaped, with our note saying so
        assert "[&gt;] in it is the in-progress marker" in context
        view = view.replace(">", "&gt;")
    assert context.endswith(view + "=== END agy-state notes ===\n")

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


@pytest.mark.parametrize("scope", ["project", "user"])
def test_gemini_runs_no_hook_of_ours_in_an_untrusted_folder(
    repo: Repo, cli: Any, scope: str
) -> None:
    result = cli("install", "--agent", "gemini", "--scope", scope)
    assert "GEMINI_CLI_TRUST_WORKSPACE=true" in result.output  # the note says how to trust
    cli("patch", "--todo", "later", "--start", "1")
    assert agent("gemini", repo, "start", trusted=False)["ran"] == 0
    assert agent("gemini", repo, "stop", trusted=False)["blocked"] is False
