"""`git agy-state memory …` on a real brain repository: init, routing, sessions, show and
status, the cap, the credential scan, edit, forget, compact, and the archive tie-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from memory_support import as_json, brain_file, brain_git, ok, tip
from support import run_tool

from gitstate.memory.document import files
from gitstate.memory.storage.layout import brain_path
from gitstate.memory.usecases import compact as memory_compact
from gitstate.memory.usecases import write as memory_write

# The root commit `memory init` writes on every machine (frozen templates, author and time).
ROOT = "904ee2ece6ba66623eb6031c329c02bb1e4b8a27"
KEY_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)


class TestInit:
    def test_init_is_idempotent_and_the_root_is_the_same_everywhere(
        self, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        first = as_json(cli("memory", "init", "--json"))
        assert first == {"brain": str(brain_path()), "tip": ROOT, "created": True}
        assert brain_path() == Path(os.environ["XDG_DATA_HOME"]) / "agy-state" / "brain.git"
        assert as_json(cli("memory", "init", "--json"))["created"] is False
        monkeypatch.setenv("AGY_BRAIN", str(tmp_path / "other.git"))
        monkeypatch.setenv("GIT_COMMITTER_DATE", "2030-05-05T05:05:05+02:00")
        monkeypatch.setenv("GIT_AUTHOR_NAME", "Someone Else")
        assert as_json(cli("memory", "init", "--json"))["tip"] == ROOT

    def test_the_brain_reads_well_with_plain_git(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "a fact"))
        assert (brain_path() / "HEAD").read_text() == "ref: refs/agy/memory\n"
        assert brain_git("rev-parse", "--is-bare-repository").strip() == "true"
        log = brain_git("log", "--format=%s").splitlines()
        assert log == ["memory add (knowledge): a fact", "memory: init"]
        assert "Agy-Memory-Format: 1" in brain_git("log", "-1", "--format=%B")
        reflog = brain_git("reflog", "refs/agy/memory")
        assert "agy-state memory: memory add (knowledge): a fact" in reflog

    def test_a_work_tree_is_never_a_brain(
        self, repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("AGY_BRAIN", str(repo.path / ".git"))
        result = cli("memory", "add", "--layer", "knowledge", "x")
        assert result.exit_code == 1
        assert "must be a bare repository of its own" in result.stderr
        assert repo.ref("refs/agy/memory") is None

    def test_reading_without_a_brain_says_how_to_make_one(self, cli: Any) -> None:
        result = cli("memory", "show")
        assert result.exit_code == 3
        assert "hint: git agy-state memory init" in result.stderr
        assert as_json(cli("memory", "status", "--json"))["exists"] is False


class TestRouting:
    def test_layers_go_to_their_files_and_sections(self, repo: Repo, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "pygit2 wraps libgit2"))
        ok(cli("memory", "add", "--layer", "identity", "prefers small commits"))
        ok(cli("memory", "add", "--layer", "knowledge", "--section", "Environment", "linux"))
        ok(cli("memory", "add", "--layer", "identity", "--section", "Editors", "uses vim"))
        ok(cli("memory", "add", "--layer", "project", "a CLI in click"))
        ok(
            cli(
                "memory",
                "add",
                "--layer",
                "project",
                "--project",
                "other",
                "--section",
                "Known Issues",
                "slow",
            )
        )
        memory = brain_file("MEMORY.md")
        assert "## Technical Knowledge\n- pygit2 wraps libgit2\n" in memory
        assert "## Environment\n- linux\n" in memory
        user = brain_file("USER.md")
        assert "## Coding Preferences\n- prefers small commits\n" in user
        assert user.endswith("## Editors\n- uses vim\n")  # a new section, at the end
        name = repo.path.name  # --project defaults to the work tree's folder
        mine = brain_file(f"projects/{name}.md")
        assert mine.startswith(f"# Project: {name}\n") and "## Context\n- a CLI in click\n" in mine
        assert "## Known Issues\n- slow\n" in brain_file("projects/other.md")
        assert "prefers" not in memory and "pygit2" not in user

    def test_add_json_and_a_repeated_add(self, cli: Any) -> None:
        done = as_json(cli("memory", "add", "--layer", "knowledge", "--json", "x"))
        assert (done["path"], done["section"], done["added"]) == (
            "MEMORY.md",
            "Technical Knowledge",
            True,
        )
        again = as_json(cli("memory", "add", "--layer", "knowledge", "--json", "x"))
        assert (again["added"], again["commit"]) == (False, None)

    @pytest.mark.parametrize(
        "args",
        [
            ["--layer", "feelings", "x"],
            ["--layer", "experience", "x"],
            ["--layer", "project", "--project", "no spaces", "x"],
            ["--layer", "project", "--project", "../up", "x"],
            ["--layer", "knowledge", "--project", "p", "x"],
            ["--layer", "knowledge", "--section", "## ", "x"],
        ],
    )
    def test_bad_routes_are_usage_errors(self, cli: Any, args: list[str]) -> None:
        result = cli("memory", "add", *args)
        assert result.exit_code == 64, result.stderr
        assert result.stderr.startswith("error: ")

    def test_text_from_stdin(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "-", input="first line\nsecond line\n"))
        assert "- first line\n  second line\n" in brain_file("MEMORY.md")


class TestSessions:
    def test_session_appends_and_links(self, repo: Repo, cli: Any) -> None:
        args = ["memory", "session", "--project", "demo", "--json"]
        first = as_json(
            cli(
                *args,
                "--summary",
                "tuned the pool",
                "--decision",
                "keep 5 retries",
                "--learned",
                "x",
                "--next",
                "docs",
            )
        )
        log_path = first["path"]
        assert log_path == f"sessions/{time.strftime('%Y-%m-%d')}.md"
        before = brain_file(log_path)
        assert before.startswith(f"# Sessions — {log_path[9:19]}\n\n## Session ")
        assert "**Project**: [[projects/demo]]" in before
        assert f"**Workspace**: {repo.path}" in before
        assert "### Key Decisions\n- keep 5 retries" in before
        assert "### Next Steps\n- [ ] docs" in before
        second = as_json(cli(*args, "--summary", "second one"))
        after = brain_file(log_path)
        assert after.startswith(before)  # past blocks are never touched
        assert after.count("## Session ") == 2
        project = brain_file("projects/demo.md")
        assert f"- {log_path[9:19]}: tuned the pool {first['link']}" in project
        assert second["link"] in project
        assert first["link"] == f"[[sessions/{log_path[9:19]}#{first['anchor']}]]"
        assert first["anchor"].startswith("session-") and len(first["anchor"]) == 14

    def test_session_time_carries_its_offset(
        self, cli: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("TZ", "Asia/Taipei")
        time.tzset()
        try:
            done = as_json(cli("memory", "session", "--project", "p", "--summary", "s", "--json"))
        finally:
            monkeypatch.setenv("TZ", "UTC")
            time.tzset()
        assert "+08:00\n" in brain_file(done["path"])

    def test_a_past_block_cannot_be_edited(self, cli: Any) -> None:
        done = as_json(
            cli("memory", "session", "--project", "p", "--summary", "original", "--json")
        )
        log = brain_file(done["path"])
        result = cli("memory", "edit", done["path"], input=log.replace("original", "rewritten"))
        assert result.exit_code == 1
        assert "session blocks are never edited" in result.stderr
        assert brain_file(done["path"]) == log
        grown = log + "\n## Session 23:59:59 — p\n**Time**: x\n\nadded by hand\n"
        ok(cli("memory", "edit", done["path"], input=grown))


class TestShowAndStatus:
    def test_show_a_file_byte_for_byte_and_the_core(self, repo: Repo, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "identity", "likes tea"))
        ok(cli("memory", "session", "--summary", "did it"))
        assert ok(cli("memory", "show", "USER.md")).stdout == brain_file("USER.md")
        assert ok(cli("memory", "show", "--layer", "identity")).stdout == brain_file("USER.md")
        core = ok(cli("memory", "show")).stdout
        heads = [line for line in core.splitlines() if line.startswith("==> ")]
        today = time.strftime("%Y-%m-%d")
        assert heads == [
            "==> USER.md <==",
            f"==> projects/{repo.path.name}.md <==",
            "==> MEMORY.md <==",
            f"==> sessions/{today}.md <==",
        ]
        shown = as_json(cli("memory", "show", "--json"))
        assert shown["tip"] == tip() and [f["path"] for f in shown["files"]] == [
            h[4:-4] for h in heads
        ]
        assert shown["files"][0]["lines"] == files.count_lines(brain_file("USER.md"))
        missing = cli("memory", "show", "projects/nope.md")
        assert missing.exit_code == 3
        assert cli("memory", "show", "../../etc/passwd").exit_code == 64

    def test_status_json(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "x"))
        ok(cli("memory", "search", "x"))
        found = as_json(cli("memory", "status", "--json"))
        assert found["exists"] is True and found["tip"] == tip()
        assert found["memory_lines"] == files.count_lines(brain_file("MEMORY.md"))
        assert (found["limit"], found["warn_at"], found["over_limit"]) == (500, 400, False)
        assert found["index"]["current"] is True and found["cache"]["current"] is True
        assert (found["inject"], found["budget"], found["remote"]) == ("core", 14000, None)


def fill_memory(lines: int) -> None:
    """MEMORY.md with exactly `lines` lines, written through `memory edit`."""
    body = files.MEMORY_TEMPLATE
    extra = lines - files.count_lines(body)
    text = body + "".join(f"- filler fact {n}\n" for n in range(extra))
    assert files.count_lines(text) == lines
    memory_write.edit("MEMORY.md", text.encode())


class TestCapacity:
    def test_warning_past_400(self, cli: Any) -> None:
        fill_memory(400)
        result = ok(cli("memory", "add", "--layer", "knowledge", "one more"))
        assert "warning: MEMORY.md 401/500 lines" in result.stderr
        assert "git agy-state memory compact" in result.stderr
        quiet = ok(cli("memory", "add", "--layer", "identity", "not MEMORY.md"))
        assert quiet.stderr == ""

    def test_refusal_past_500(self, cli: Any) -> None:
        fill_memory(499)
        ok(cli("memory", "add", "--layer", "knowledge", "the 500th line"))
        before = tip()
        result = cli("memory", "add", "--layer", "knowledge", "the 501st line")
        assert result.exit_code == 1
        assert "MEMORY.md would have 501/500 lines" in result.stderr
        assert "hint: git agy-state memory compact" in result.stderr
        assert tip() == before
        assert files.count_lines(brain_file("MEMORY.md")) == 500

    def test_a_brain_over_the_cap_may_shrink(self, cli: Any) -> None:
        fill_memory(499)
        text = brain_file("MEMORY.md") + "- a\n- b\n- c\n"
        # Only a merge puts a brain over the cap; stand in for one with plain git.
        over = _commit_with_plain_git({"MEMORY.md": text})
        assert files.count_lines(brain_file("MEMORY.md")) == 502 and tip() == over
        status = ok(cli("memory", "status"))
        assert "warning: MEMORY.md 502/500 lines" in status.stderr
        assert cli("memory", "add", "--layer", "knowledge", "more").exit_code == 1
        ok(cli("memory", "forget", "--layer", "knowledge", "filler fact 1"))  # 1, 10-19, 100-199
        assert files.count_lines(brain_file("MEMORY.md")) < 500


def _commit_with_plain_git(changes: dict[str, str]) -> str:
    """A commit on refs/agy/memory made with plain git (as a merge elsewhere would)."""
    brain = str(brain_path())
    env = {**os.environ, "GIT_DIR": brain, "GIT_INDEX_FILE": str(brain_path() / "tmp-index")}
    run = lambda *a, i=None: subprocess.run(  # noqa: E731
        ["git", *a], env=env, input=i, capture_output=True, text=True, check=True
    ).stdout.strip()
    run("read-tree", "refs/agy/memory")
    for path, text in changes.items():
        blob = run("hash-object", "-w", "--stdin", i=text)
        run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = run("write-tree")
    commit = run("commit-tree", tree, "-p", "refs/agy/memory", "-m", "plain git")
    run("update-ref", "refs/agy/memory", commit)
    os.unlink(env["GIT_INDEX_FILE"])
    return commit


class TestSecrets:
    def test_a_private_key_is_refused(self, cli: Any) -> None:
        ok(cli("memory", "init"))
        before = tip()
        result = cli("memory", "add", "--layer", "knowledge", "-", input=KEY_BLOCK)
        assert result.exit_code == 1
        assert "refusing to write MEMORY.md" in result.stderr and "private key" in result.stderr
        assert "--allow-secret" in result.stderr
        assert tip() == before
        edit = cli("memory", "edit", "USER.md", input=files.USER_TEMPLATE + KEY_BLOCK)
        assert edit.exit_code == 1 and tip() == before
        token = "ghp_" + "a1B2" * 9
        session = cli("memory", "session", "--project", "p", "--summary", f"used {token}")
        assert session.exit_code == 1 and tip() == before
        report = cli("memory", "add", "--layer", "knowledge", "--json", f"token {token}")
        assert report.exit_code == 1
        body = json.loads(report.stdout)
        assert body["code"] == 1 and body["hits"][0]["kind"] == "GitHub token"

    def test_allow_secret_overrides(self, cli: Any) -> None:
        result = cli(
            "memory", "add", "--layer", "knowledge", "--allow-secret", "-", input=KEY_BLOCK
        )
        ok(result)
        assert "BEGIN OPENSSH PRIVATE KEY" in brain_file("MEMORY.md")

    def test_only_added_lines_are_scanned(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "--allow-secret", "-", input=KEY_BLOCK))
        ok(cli("memory", "add", "--layer", "knowledge", "an innocent fact"))


class TestEditForget:
    def test_edit_from_stdin(self, cli: Any) -> None:
        ok(cli("memory", "init"))
        new = files.USER_TEMPLATE.replace("## Identity\n", "## Identity\n- Name: Ada\n")
        done = as_json(cli("memory", "edit", "USER.md", "--json", input=new))
        assert done["paths"] == ["USER.md"] and brain_file("USER.md") == new
        assert ok(cli("memory", "edit", "USER.md", input=new)).stdout.startswith(
            "USER.md unchanged"
        )

    @pytest.mark.parametrize(
        ("data", "code", "message"),
        [(b"", 64, "is empty"), (b"\xff\xfe bad", 1, "not UTF-8"), (b"a\x00b", 1, "binary")],
    )
    def test_edit_checks_its_input(self, cli: Any, data: bytes, code: int, message: str) -> None:
        result = cli("memory", "edit", "MEMORY.md", input=data)
        assert result.exit_code == code and message in result.stderr

    def test_edit_through_the_editor(
        self, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        ok(cli("memory", "init"))
        script = tmp_path / "ed.sh"
        script.write_text('#!/bin/sh\nprintf -- "- written in the editor\\n" >> "$1"\n')
        script.chmod(0o755)
        monkeypatch.setenv("EDITOR", str(script))
        from gitstate.cli.memory import _through_editor

        data = _through_editor("MEMORY.md", brain_file("MEMORY.md"))
        assert data.decode().endswith("- written in the editor\n")
        monkeypatch.setenv("EDITOR", "false")
        with pytest.raises(Exception, match="exited with 1"):
            _through_editor("MEMORY.md", "x")

    def test_forget_entries_and_blocks(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "keep this"))
        ok(cli("memory", "add", "--layer", "knowledge", "the wrong fact"))
        dry = as_json(
            cli("memory", "forget", "--layer", "knowledge", "--dry-run", "--json", "WRONG")
        )
        assert dry == {
            "commit": None,
            "removed": [{"path": "MEMORY.md", "text": "- the wrong fact"}],
        }
        assert "the wrong fact" in brain_file("MEMORY.md")
        ok(cli("memory", "forget", "--layer", "knowledge", "wrong"))
        memory = brain_file("MEMORY.md")
        assert (
            "wrong" not in memory and "keep this" in memory and "## Technical Knowledge" in memory
        )
        ok(cli("memory", "session", "--project", "p", "--summary", "leaked the thing"))
        ok(cli("memory", "session", "--project", "p", "--summary", "fine"))
        done = as_json(cli("memory", "forget", "--layer", "experience", "--json", "leaked"))
        (gone,) = done["removed"]
        log = brain_file(gone["path"])
        assert "leaked" not in log and "### Summary\nfine" in log
        missing = cli("memory", "forget", "--layer", "identity", "nothing like this")
        assert missing.exit_code == 3


class TestCompact:
    def test_lists_then_applies_what_is_confirmed(self, repo: Repo, cli: Any) -> None:
        # Commits are dated 2026-01-02 (conftest); "now" is 100 days later.
        now = time.mktime(time.strptime("2026-04-12", "%Y-%m-%d"))
        ok(cli("memory", "add", "--layer", "project", "--project", "gizmo", "a parser"))
        ok(cli("memory", "add", "--layer", "knowledge", "an old fact"))
        ok(cli("memory", "add", "--layer", "knowledge", "gizmo is written in rust"))
        listed = memory_compact.compact(now=now)
        kinds = {(c.kind, c.text.split("\n")[0]) for c in listed.candidates}
        assert kinds == {
            ("drop", "- an old fact"),
            ("move", "- gizmo is written in rust"),
            ("archive", "# Project: gizmo"),
        }
        text = ok(cli("memory", "compact")).stdout  # real time: 300+ days on
        assert "apply with: git agy-state memory compact --apply ID" in text
        move = next(c for c in listed.candidates if c.kind == "move")
        before = tip()
        done = memory_compact.compact((move.id,), now=now)
        assert done.applied == (move.id,) and tip() != before
        assert "rust" not in brain_file("MEMORY.md")
        assert "## Context\n- a parser\n- gizmo is written in rust\n" in brain_file(
            "projects/gizmo.md"
        )
        assert "an old fact" in brain_file("MEMORY.md")  # not confirmed: stays
        unknown = cli("memory", "compact", "--apply", "deadbeef")
        assert unknown.exit_code == 3
        memory_compact.compact(apply_all=True, now=now)
        assert "an old fact" not in brain_file("MEMORY.md")
        assert brain_file("projects/gizmo.md").startswith("# [ARCHIVED] Project: gizmo\n")


class TestArchiveTieIn:
    def test_archiving_a_task_writes_a_session_block(self, repo: Repo, cli: Any) -> None:
        ok(cli("memory", "init"))
        ok(
            cli(
                "patch",
                "--set",
                "goal=Ship the retry",
                "--add",
                "key_data=MAX_RETRIES=5",
                "--todo",
                "write it",
                "--start",
                "1",
            )
        )
        ok(cli("patch", "--done", "1", "--verify", "pytest passes"))
        archived = repo.git("for-each-ref", "--format=%(refname)", "refs/agy/archive/").strip()
        assert archived
        log = brain_file(f"sessions/{time.strftime('%Y-%m-%d')}.md")
        assert "## Session " in log and f"— {repo.path.name}\n" in log
        assert f"### Summary\nArchived task: Ship the retry ({archived})" in log
        assert "### Done\n- [x] write it | verified: pytest passes" in log
        assert "### Key Data\n- MAX_RETRIES=5" in log
        assert "[[sessions/" in brain_file(f"projects/{repo.path.name}.md")

    def test_no_brain_no_block_and_a_broken_brain_never_fails_the_archive(
        self, repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        ok(cli("patch", "--set", "goal=g", "--todo", "t", "--start", "1"))
        ok(cli("patch", "--done", "1", "--verify", "v"))
        assert not brain_path().exists()
        monkeypatch.setenv("AGY_BRAIN", str(repo.path / ".git"))  # not a brain: refused
        ok(cli("patch", "--set", "goal=g2", "--todo", "t", "--start", "1"))
        ok(cli("patch", "--done", "1", "--verify", "v"))
        assert len(repo.git("for-each-ref", "refs/agy/archive/").splitlines()) == 2
        log = (repo.path / ".git" / "agy" / "memory.log").read_text()
        assert "not recorded in the brain" in log


def test_the_tool_runs_memory_as_a_subprocess(repo: Repo) -> None:
    proc = run_tool("memory", "add", "--layer", "knowledge", "from a real process", cwd=repo.path)
    assert proc.returncode == 0, proc.stderr
    proc = run_tool("memory", "search", "--json", "real process", cwd=repo.path)
    assert proc.returncode == 0 and '"path": "MEMORY.md"' in proc.stdout


def test_concurrent_writers_lose_nothing(repo: Repo, cli: Any) -> None:
    ok(cli("memory", "init"))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gitstate",
                "memory",
                "add",
                "--layer",
                "knowledge",
                f"fact {n}",
            ],
            cwd=repo.path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for n in range(6)
    ]
    for proc in procs:
        assert proc.wait() == 0, proc.stderr.read() if proc.stderr else ""
    memory = brain_file("MEMORY.md")
    assert all(f"- fact {n}\n" in memory for n in range(6))
    assert len(brain_git("rev-list", "refs/agy/memory").split()) == 7
