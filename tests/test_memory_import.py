"""`memory import PATH`: an Agent Brain (or a folder of Markdown) into the brain in one commit,
merged with what it holds, bounded and scanned (docs/memory.md, "Import")."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from memory_support import as_json, brain_file, brain_git, ok, tip

from gitstate.memory.storage.layout import brain_path
from gitstate.memory.usecases import importing

MEMORY = """\
# Agent Brain — Long-Term Memory
> Last updated: 2026-05-01 10:00

## Technical Knowledge
- pygit2 needs libgit2 1.9

## Environment
- Debian 12 on the laptop
"""

LOG = """\
# Session Log — 2026-04-01

## Session 10:00:00 — app
**Time**: 2026-04-01T10:00:00+00:00

### Summary
重構連線池

---

## Session 11:00:00 — app
**Time**: 2026-04-01T11:00:00+00:00

### Summary
more retries
"""


def agent_brain(root: Path) -> Path:
    """A ~/.agent-brain/ as Agent Brain leaves it."""
    (root / "sessions").mkdir(parents=True)
    (root / "projects").mkdir()
    (root / "tmp").mkdir()
    (root / "MEMORY.md").write_text(MEMORY)
    (root / "USER.md").write_text("# User Profile\n\n## Communication Style\n- 回覆用繁體中文\n")
    (root / "STATE.md").write_text("# Active State\n\n## Current Focus\n- never imported\n")
    (root / ".env").write_text("PCLOUD_ACCESS_TOKEN=never-imported\n")
    (root / ".sync-manifest.json").write_text('{"files": {}}')
    (root / "brain.db").write_bytes(b"SQLite format 3\x00")
    (root / "tmp" / "conflict.md").write_text("# never imported\n")
    (root / "sessions" / "2026-04-01.md").write_text(LOG)
    (root / "projects" / "app.md").write_text("# Project: app\n\n## Context\n- a web app\n")
    return root


def commits() -> int:
    return int(brain_git("rev-list", "--count", "refs/agy/memory").strip())


class TestAgentBrain:
    def test_an_agent_brain_lands_in_one_commit(self, tmp_path: Path, cli: Any) -> None:
        source = agent_brain(tmp_path / "agent-brain")
        done = as_json(cli("memory", "import", "--json", str(source)))
        assert commits() == 2  # the root, then the import
        assert done["commit"] == tip() and not done["dry_run"]
        assert done["paths"] == [
            "MEMORY.md",
            "USER.md",
            "projects/app.md",
            "sessions/2026-04-01.md",
        ]
        skipped = {s["source"]: s["reason"] for s in done["skipped"]}
        assert set(skipped) == {".env", ".sync-manifest.json", "STATE.md", "brain.db", "tmp/"}
        memory = brain_file("MEMORY.md")
        assert "- pygit2 needs libgit2 1.9" in memory and "- Debian 12 on the laptop" in memory
        assert "Last updated" not in memory  # Agent Brain's stamp is no fact
        assert memory.count("# Agent Brain — Long-Term Memory") == 1
        assert "- 回覆用繁體中文" in brain_file("USER.md")
        log = brain_file("sessions/2026-04-01.md")
        assert "重構連線池" in log and "more retries" in log and "---" not in log
        listed = brain_git("ls-tree", "-r", "--name-only", "refs/agy/memory").split()
        assert "STATE.md" not in listed and not any("tmp" in p or "env" in p for p in listed)
        hits = as_json(cli("memory", "search", "--json", "連線"))
        assert [h["path"] for h in hits] == ["sessions/2026-04-01.md"]

    def test_importing_again_changes_nothing(self, tmp_path: Path, cli: Any) -> None:
        source = agent_brain(tmp_path / "agent-brain")
        ok(cli("memory", "import", str(source)))
        before = tip()
        again = ok(cli("memory", "import", str(source)))
        assert "nothing to import" in again.stdout
        assert tip() == before
        actions = {
            f["action"] for f in as_json(cli("memory", "import", "--json", str(source)))["files"]
        }
        assert actions == {"unchanged"}

    def test_it_merges_with_what_the_brain_holds(self, tmp_path: Path, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "the CLI is click"))
        here = (
            "## Session 10:30:00 — app\n**Time**: 2026-04-01T10:30:00+00:00\n\n### Summary\nmine\n"
        )
        ok(
            cli(
                "memory",
                "edit",
                "sessions/2026-04-01.md",
                input=f"# Session Log — 2026-04-01\n\n{here}",
            )
        )
        source = agent_brain(tmp_path / "agent-brain")
        done = as_json(cli("memory", "import", "--json", str(source)))
        actions = {f["path"]: f["action"] for f in done["files"]}
        assert actions["MEMORY.md"] == "merged" and actions["projects/app.md"] == "new"
        memory = brain_file("MEMORY.md")
        assert memory.index("- the CLI is click") < memory.index("- pygit2 needs libgit2 1.9")
        log = brain_file("sessions/2026-04-01.md")
        assert log.index("重構連線池") < log.index("mine") < log.index("more retries")
        assert log.count("## Session") == 3

    def test_a_dry_run_lists_and_moves_nothing(self, tmp_path: Path, cli: Any) -> None:
        source = agent_brain(tmp_path / "agent-brain")
        dry = ok(cli("memory", "import", "--dry-run", str(source)))
        assert "would be merged: MEMORY.md" in dry.stdout
        assert "skipped: STATE.md" in dry.stdout
        assert not brain_path().exists()  # not even created
        ok(cli("memory", "init"))
        before = tip()
        done = as_json(cli("memory", "import", "--dry-run", "--json", str(source)))
        assert done["dry_run"] and done["commit"] is None and tip() == before
        assert len(done["paths"]) == 4


class TestFolderOfMarkdown:
    def test_other_markdown_becomes_project_files(self, tmp_path: Path, cli: Any) -> None:
        notes = tmp_path / "notes"
        (notes / "infra").mkdir(parents=True)
        (notes / "infra" / "pool.md").write_text("# Pool\n\nretry with backoff\n")
        (notes / "My Ideas.markdown").write_text("- a CLI for memory\n")
        (notes / "picture.png").write_bytes(b"\x89PNG")
        done = as_json(cli("memory", "import", "--json", str(notes)))
        routed = {f["source"]: f["path"] for f in done["files"]}
        assert routed == {
            "My Ideas.markdown": "projects/My-Ideas.md",
            "infra/pool.md": "projects/infra-pool.md",
        }
        assert brain_file("projects/infra-pool.md") == "# Pool\n\nretry with backoff\n"
        assert {s["source"] for s in done["skipped"]} == {"picture.png"}

    def test_links_are_never_followed_out_of_path(self, tmp_path: Path, cli: Any) -> None:
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "MEMORY.md").write_text("# outside\n\n## Technical Knowledge\n- leaked\n")
        notes = tmp_path / "notes"
        notes.mkdir()
        (notes / "USER.md").write_text("# User Profile\n\n## Identity\n- me\n")
        (notes / "MEMORY.md").symlink_to(outside / "MEMORY.md")
        (notes / "projects").symlink_to(outside)
        os.mkfifo(notes / "fifo.md")  # a reader that blocked on it would hang the import
        done = as_json(cli("memory", "import", "--json", str(notes)))
        assert [f["source"] for f in done["files"]] == ["USER.md"]
        skipped = {s["source"]: s["reason"] for s in done["skipped"]}
        assert skipped == {
            "MEMORY.md": "a symbolic link: not followed",
            "projects": "a symbolic link: not followed",
            "fifo.md": "not a regular file",
        }
        assert "leaked" not in brain_file("MEMORY.md")


class TestRefusals:
    def test_a_credential_refuses_the_whole_import_naming_the_file(
        self, tmp_path: Path, cli: Any
    ) -> None:
        source = agent_brain(tmp_path / "agent-brain")
        token = "ghp_" + "a1B2" * 9
        (source / "projects" / "ops.md").write_text(f"# ops\n\n- deploy with {token}\n")
        ok(cli("memory", "init"))
        before = tip()
        result = cli("memory", "import", str(source))
        assert result.exit_code == 1
        assert "refusing to import projects/ops.md: line 3" in result.stderr
        assert token not in result.stderr and "--allow-secret" in result.stderr
        assert tip() == before
        forced = as_json(cli("memory", "import", "--allow-secret", "--json", str(source)))
        assert "projects/ops.md" in forced["paths"]

    @pytest.mark.parametrize(
        ("data", "says"),
        [
            (b"- a\n" + b"x" * importing.MAX_FILE_BYTES, "is over 1024 KiB"),
            (b"- caf\xe9\n", "is not UTF-8 text (byte 5)"),
            (b"- a\x00b\n", "it is binary"),
            (b"- red \x1b[31m text\n", "line 1 holds the control character U+001B (ESC)"),
        ],
    )
    def test_a_bad_file_refuses_it_and_nothing_moves(
        self, tmp_path: Path, cli: Any, data: bytes, says: str
    ) -> None:
        notes = tmp_path / "notes"
        notes.mkdir()
        (notes / "a.md").write_text("- fine\n")
        (notes / "b.md").write_bytes(data)
        ok(cli("memory", "init"))
        before = tip()
        result = cli("memory", "import", str(notes))
        assert result.exit_code == 1, result.stdout
        assert result.stderr.startswith("error: refusing to import b.md")
        assert says in result.stderr and "Traceback" not in result.stderr
        assert tip() == before
        assert "projects/a.md" not in brain_git("ls-tree", "-r", "--name-only", before)

    def test_memory_over_the_cap_is_refused_with_the_compact_hint(
        self, tmp_path: Path, cli: Any
    ) -> None:
        notes = tmp_path / "notes"
        notes.mkdir()
        facts = "".join(f"- fact {n}\n" for n in range(600))
        (notes / "MEMORY.md").write_text(f"# Memory\n\n## Technical Knowledge\n{facts}")
        result = cli("memory", "import", str(notes))
        assert result.exit_code == 1
        assert "MEMORY.md would have" in result.stderr and "memory compact" in result.stderr

    def test_a_path_that_is_no_folder(self, tmp_path: Path, cli: Any) -> None:
        missing = cli("memory", "import", str(tmp_path / "nope"))
        assert missing.exit_code == 3 and "does not exist" in missing.stderr
        (tmp_path / "file.md").write_text("- x\n")
        single = cli("memory", "import", str(tmp_path / "file.md"))
        assert single.exit_code == 64 and "is not a folder" in single.stderr
        error = json.loads(cli("memory", "import", "--json", str(tmp_path / "nope")).stdout)
        assert error["code"] == 3
