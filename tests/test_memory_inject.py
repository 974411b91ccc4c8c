"""The memory core in the session-start injection: read from the plain-text cache (no pygit2),
after the state, within agy.memoryBudget, only at startup and resume (docs/memory.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from memory_support import brain_file, ok

from gitstate.hooks.frame import BEGIN, END, MEMORY_BEGIN, MEMORY_END
from gitstate.memory.storage.layout import BrainLayout
from gitstate.memory.usecases import write as memory_write

HEADER = "=== Memory (git agy-state memory) ==="


def hook(cwd: Path, payload: object | None, *args: str) -> subprocess.CompletedProcess[str]:
    feed: dict[str, Any] = (
        {"input": json.dumps(payload)} if payload is not None else {"stdin": subprocess.DEVNULL}
    )
    return subprocess.run(
        [sys.executable, "-m", "gitstate", "hook", "inject", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        **feed,
    )


def claude(cwd: Path, source: str) -> str:
    payload = {
        "session_id": "s",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": source,
    }
    proc = hook(cwd, payload)
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    return str(body["hookSpecificOutput"]["additionalContext"]) if body else ""


def agy(cwd: Path, conversation: str, invocation: int = 1) -> str:
    payload = {
        "conversationId": conversation,
        "workspacePaths": [str(cwd)],
        "invocationNum": invocation,
    }
    proc = hook(cwd, payload)
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(proc.stdout)["injectSteps"]
    return str(steps[0]["ephemeralMessage"]) if steps else ""


@pytest.fixture
def remembered(repo: Repo, cli: Any) -> Repo:
    ok(cli("patch", "--set", "goal=ship it", "--todo", "write the test", "--start", "1"))
    ok(cli("memory", "add", "--layer", "identity", "answers in English"))
    ok(cli("memory", "add", "--layer", "knowledge", "libgit2 logs bare reflogs only when told"))
    ok(cli("memory", "add", "--layer", "project", "this project is a CLI"))
    now = time.time()
    memory_write.session("today's work", repo.path.name, now=now)
    memory_write.session("someone else's project", "elsewhere", now=now)
    memory_write.session("yesterday's work", repo.path.name, now=now - 86400)
    memory_write.session("older work", repo.path.name, now=now - 3 * 86400)
    return repo


class TestCore:
    def test_startup_gets_state_then_memory(self, remembered: Repo) -> None:
        text = claude(remembered.path, "startup")
        state = remembered.view.read_text()
        assert text.startswith(BEGIN + "\n")
        assert state + END + "\n\n" + MEMORY_BEGIN + "\nSource: the memory brain " in text
        memory = text[text.index(HEADER) :]
        assert text.index(state.rstrip("\n")) < text.index(HEADER)
        assert memory.endswith(MEMORY_END + "\n")
        order = [
            memory.index(s)
            for s in (
                "--- USER.md ---\n## Coding Preferences\n- answers in English",
                f"--- projects/{remembered.path.name}.md ---\n## Context\n- this project is a CLI",
                "--- MEMORY.md ---\n## Technical Knowledge\n- libgit2 logs",
                "### Summary\ntoday's work",
                "### Summary\nyesterday's work",
            )
        ]
        assert order == sorted(order)  # USER, project, MEMORY, today, yesterday (newest first)
        assert "### Summary\nolder work" not in memory  # linked from the timeline, not shown
        assert "someone else's project" not in memory

    def test_after_a_compaction_the_state_only(self, remembered: Repo) -> None:
        text = claude(remembered.path, "compact")
        assert text.startswith(BEGIN) and HEADER not in text
        assert HEADER in claude(remembered.path, "resume")
        assert HEADER in claude(remembered.path, "clear")

    def test_agy_once_per_conversation(self, remembered: Repo) -> None:
        assert HEADER in agy(remembered.path, "conv-1")
        again = agy(remembered.path, "conv-1")
        assert again.startswith(BEGIN) and HEADER not in again
        assert agy(remembered.path, "conv-1", invocation=2) == ""
        assert HEADER in agy(remembered.path, "conv-2")

    def test_memory_without_a_state_or_a_work_tree(self, remembered: Repo, tmp_path: Path) -> None:
        remembered.view.unlink()
        text = claude(remembered.path, "startup")
        assert text.startswith(MEMORY_BEGIN + "\n") and "today's work" in text
        assert text.endswith(MEMORY_END + "\n") and HEADER in text
        outside = tmp_path / "not-a-repo"
        outside.mkdir()
        text = claude(outside, "startup")
        assert text.startswith(MEMORY_BEGIN) and "answers in English" in text
        assert "today's work" not in text  # no project here
        plain = hook(outside, None)
        assert plain.returncode == 0 and plain.stdout.startswith(MEMORY_BEGIN)

    def test_off_and_budget(self, remembered: Repo) -> None:
        remembered.git("config", "agy.memoryInject", "off")
        assert HEADER not in claude(remembered.path, "startup")
        remembered.git("config", "agy.memoryInject", "core")
        remembered.git("config", "agy.memoryBudget", "1200")
        text = claude(remembered.path, "startup")
        memory = text[text.index(MEMORY_BEGIN) :]
        assert len(memory.encode()) <= 1200  # the whole block, its frame included
        assert "(Cut to fit agy.memoryBudget:" in memory
        assert "git agy-state memory show" in memory
        assert memory.count("## Session") == memory.count("### Summary")  # whole blocks only
        remembered.git("config", "agy.injectBudget", "300")  # the state's own budget is apart
        assert HEADER in claude(remembered.path, "startup")

    def test_the_whole_text_stays_within_both_budgets(self, remembered: Repo) -> None:
        view = remembered.view
        view.write_text(view.read_text().replace("## Done\n", "## Done\n" + "- x\n" * 900_000))
        remembered.git("config", "agy.injectBudget", "4096")
        remembered.git("config", "agy.memoryBudget", "3000")
        text = claude(remembered.path, "startup")
        assert len(text.encode()) <= 4096 + 3000 + 1  # the two blocks, joined by a newline
        state, memory = text.split("\n" + MEMORY_BEGIN)
        assert len(state.encode()) <= 4096 and state.endswith(END + "\n")
        assert len((MEMORY_BEGIN + memory).encode()) <= 3000

    def test_no_brain_no_memory(self, repo: Repo, cli: Any) -> None:
        ok(cli("patch", "--set", "goal=g", "--todo", "t"))
        assert HEADER not in claude(repo.path, "startup")

    def test_a_missing_cache_is_silence_not_an_error(self, remembered: Repo) -> None:
        shutil.rmtree(BrainLayout().cache_dir)
        text = claude(remembered.path, "startup")
        assert text.startswith(BEGIN) and HEADER not in text


class TestCache:
    def test_every_memory_commit_refreshes_the_cache(self, remembered: Repo, cli: Any) -> None:
        cache = BrainLayout().cache_dir
        assert (cache / "MEMORY.md").read_text() == brain_file("MEMORY.md")
        ok(cli("memory", "add", "--layer", "knowledge", "a new fact"))
        assert "a new fact" in (cache / "MEMORY.md").read_text()
        ok(cli("memory", "forget", "--layer", "knowledge", "a new fact"))
        assert "a new fact" not in (cache / "MEMORY.md").read_text()
        tip = subprocess.run(
            ["git", "--git-dir", str(BrainLayout().path), "rev-parse", "refs/agy/memory"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert (cache / ".tip").read_text().strip() == tip

    def test_the_hook_path_loads_neither_pygit2_nor_click(self, remembered: Repo) -> None:
        payload = json.dumps(
            {
                "session_id": "s",
                "cwd": str(remembered.path),
                "hook_event_name": "SessionStart",
                "source": "startup",
            }
        )
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "gitstate", "hook", "inject"],
            cwd=remembered.path,
            input=payload,
            capture_output=True,
            text=True,
            check=True,
        )
        assert HEADER in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
        assert {"gitstate.hooks.memory", "gitstate.memory.document.core"} <= modules
        assert not {m for m in modules if m.split(".")[0] in ("click", "pygit2", "sqlite3")}
        assert "typing" not in modules
