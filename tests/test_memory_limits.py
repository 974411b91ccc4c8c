"""Review follow-ups of issue 13 (docs/memory.md: "Files and routing", "Import", "Search"): a
project name is at most PROJECT_NAME_LIMIT characters on every route in (add, import, sync), a
brain file with a name the brain never writes never breaks the cache or search, a query is
bounded, and `memory import` never merges two sources silently, takes only real dates as session
logs and prints source names escaped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memory_support import as_json, brain_file, brain_git, ok

from gitstate.memory.document import files, importing
from gitstate.memory.usecases.search import MAX_QUERY_CHARS, MAX_QUERY_WORDS
from gitstate.storage import private

LONG = "p" * 240


def console(*args: str) -> subprocess.CompletedProcess[str]:
    """`git agy-state ARGS…` through gitstate/entry.py (the click-free search path)."""
    return subprocess.run(
        [sys.executable, "-m", "gitstate", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def still_works(cli: Any) -> None:
    ok(cli("memory", "add", "--layer", "knowledge", "the brain still takes writes"))
    hits = as_json(cli("memory", "search", "--json", "writes"))
    assert [h["path"] for h in hits] == ["MEMORY.md"]
    ok(cli("memory", "index", "--rebuild"))


class TestProjectNames:
    def test_add_refuses_an_over_long_project_before_any_commit(self, cli: Any) -> None:
        ok(cli("memory", "init"))
        before = brain_git("rev-parse", "refs/agy/memory")
        done = cli("memory", "add", "--layer", "project", "--project", LONG, "a fact")
        assert done.exit_code == 64
        assert "hint:" in done.stderr and LONG not in done.stderr.split("hint:")[0][:120]
        assert brain_git("rev-parse", "refs/agy/memory") == before
        at_limit = "q" * files.PROJECT_NAME_LIMIT
        ok(cli("memory", "add", "--layer", "project", "--project", at_limit, "a fact"))
        assert "a fact" in brain_file(f"projects/{at_limit}.md")
        still_works(cli)

    def test_import_shortens_a_long_name_with_a_hash(self, tmp_path: Path, cli: Any) -> None:
        folder = tmp_path / "notes"
        deep = folder / "d" / ("x" * 200)
        deep.mkdir(parents=True)
        (deep / ("y" * 200 + ".md")).write_text("# deep\n\n## Context\n- from deep down\n")
        (folder / "projects").mkdir()
        (folder / "projects" / (LONG + ".md")).write_text("# long\n\n## Context\n- long one\n")
        done = as_json(cli("memory", "import", "--json", str(folder)))
        paths = sorted(f["path"] for f in done["files"])
        assert len(paths) == 2 and len(set(paths)) == 2
        for path in paths:
            name = path[len("projects/") : -len(".md")]
            assert files.valid_project(name) and files.is_memory_path(path)
            assert len(name.encode()) <= files.PROJECT_NAME_LIMIT
        assert "from deep down" in brain_file(paths[0]) + brain_file(paths[1])
        still_works(cli)
        # the same folder again lands on the same names
        again = as_json(cli("memory", "import", "--json", str(folder)))
        assert sorted(f["path"] for f in again["files"]) == paths
        assert {f["action"] for f in again["files"]} == {"unchanged"}

    def test_an_over_long_name_from_a_remote_never_breaks_the_brain(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any
    ) -> None:
        remote = tmp_path / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        ok(cli("memory", "add", "--layer", "knowledge", "local fact"))
        ok(cli("memory", "sync", str(remote)))
        # Another machine (an older version, or a hand-made tree) pushes a long name.
        env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}

        def git(*args: str, input: str | None = None) -> str:
            return subprocess.run(
                ["git", "--git-dir", str(remote), *args],
                input=input,
                capture_output=True,
                text=True,
                check=True,
                env=env,
            ).stdout.strip()

        blob = git("hash-object", "-w", "--stdin", input="# long\n\n## Context\n- remote one\n")
        git("read-tree", "refs/agy/memory")
        git("update-index", "--add", "--cacheinfo", f"100644,{blob},projects/{LONG}.md")
        tree = git("write-tree")
        commit = git("commit-tree", tree, "-p", "refs/agy/memory", "-m", "long name")
        git("update-ref", "refs/agy/memory", commit)
        ok(cli("memory", "sync"))
        still_works(cli)
        assert as_json(cli("memory", "search", "--json", "remote")) == []


class TestTemporaryNames:
    def test_a_file_near_the_name_limit_is_written(self, tmp_path: Path) -> None:
        target = tmp_path / ("n" * 250)
        private.write_file(target, b"data")
        assert target.read_bytes() == b"data"
        assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


@pytest.fixture
def brain(cli: Any) -> None:
    ok(cli("memory", "add", "--layer", "knowledge", "the pool retries with backoff"))
    ok(cli("memory", "index"))


class TestQuery:
    @pytest.mark.parametrize(
        "query", ["ab " * 40_000, "w " * (MAX_QUERY_WORDS + 1), "x" * (MAX_QUERY_CHARS + 1)]
    )
    def test_an_over_long_query_is_a_usage_error_on_both_paths(
        self, brain: None, cli: Any, query: str
    ) -> None:
        clicked = cli("memory", "search", "--", query)
        fast = console("memory", "search", query)
        for done in (clicked, fast):
            assert done.returncode if hasattr(done, "returncode") else done.exit_code == 64
            lines = done.stderr.splitlines()
            assert lines[0].startswith("error: ") and lines[1].startswith("hint: ")
            assert len(done.stderr) < 1000
        assert fast.returncode == 64 and clicked.exit_code == 64
        assert clicked.stderr == fast.stderr

    def test_the_mcp_tool_refuses_it_too(self, brain: None) -> None:
        from gitstate.errors import UsageError
        from gitstate.mcp import tools

        with pytest.raises(UsageError, match="over the limit"):
            tools.memory_search("ab " * 300_000)
        assert [h["path"] for h in tools.memory_search("pool")["hits"]] == ["MEMORY.md"]

    def test_at_the_limits_it_searches(self, brain: None, cli: Any) -> None:
        query = " ".join(["pool"] * MAX_QUERY_WORDS)
        assert [h["path"] for h in as_json(cli("memory", "search", "--json", query))] == [
            "MEMORY.md"
        ]

    def test_no_match_echoes_a_bounded_excerpt(self, brain: None, cli: Any) -> None:
        query = "z" * MAX_QUERY_CHARS
        clicked, fast = ok(cli("memory", "search", query)), console("memory", "search", query)
        assert fast.returncode == 0 and clicked.stdout == fast.stdout
        assert clicked.stdout.startswith("no match for ") and len(clicked.stdout) < 200


class TestImportDetails:
    def test_two_sources_for_one_target_are_refused_naming_both(
        self, tmp_path: Path, cli: Any
    ) -> None:
        folder = tmp_path / "notes"
        (folder / "notes" / "a-b").mkdir(parents=True)
        (folder / "notes-a").mkdir()
        (folder / "notes" / "a-b" / "c.md").write_text("# one\n")
        (folder / "notes-a" / "b-c.md").write_text("# two\n")
        done = cli("memory", "import", str(folder))
        assert done.exit_code == 64
        assert "notes/a-b/c.md" in done.stderr and "notes-a/b-c.md" in done.stderr
        assert "projects/notes-a-b-c.md" in done.stderr
        assert brain_git("rev-parse", "refs/agy/memory", check=False) == ""

    def test_a_session_log_needs_a_real_date(self, tmp_path: Path) -> None:
        assert importing.route("sessions/2026-02-28.md").reason == "as is"
        assert importing.route("sessions/2028-02-29.md").reason == "as is"
        for fake in ("2026-13-45", "2026-02-29", "2026-00-10", "2026-04-31"):
            routed = importing.route(f"sessions/{fake}.md")
            assert routed.path == f"projects/sessions-{fake}.md"
            assert not files.is_memory_path(f"sessions/{fake}.md")

    def test_a_control_character_in_a_source_name_is_escaped(
        self, tmp_path: Path, cli: Any
    ) -> None:
        folder = tmp_path / "notes"
        folder.mkdir()
        (folder / "evil\nname\x1b[31m.md").write_text("# evil\n\n## Context\n- a note\n")
        (folder / "evil\rskip.txt").write_text("not markdown")
        for args in ([], ["--dry-run"]):
            done = ok(cli("memory", "import", *args, str(folder)))
            assert "\x1b" not in done.stdout and "\r" not in done.stdout
            assert "evil\\nname" in done.stdout
            assert len(done.stdout.splitlines()) == 3
        raw = ok(cli("memory", "import", "--json", "--dry-run", str(folder))).stdout
        assert "\x1b" not in raw
        assert json.loads(raw)["files"][0]["source"].startswith("evil\nname")
