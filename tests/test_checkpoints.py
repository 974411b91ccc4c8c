"""Checkpoints: annotated tags on HEAD carrying the state; listing, show, restore, clashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import Repo

NAME = "checkpoint-20260102-030405"  # conftest pins the committer date to 2026-01-02T03:04:05Z


def js(result: Any) -> Any:
    return json.loads(result.stdout)


def start_task(cli: Any) -> None:
    result = cli("patch", "--set", "goal=Retry", "--todo", "one", "--todo", "two", "--start", "1")
    assert result.exit_code == 0, result.stderr


def tag_message(repo: Repo, name: str) -> str:
    raw = repo.git("cat-file", "tag", name)
    return raw.split("\n\n", 1)[1]


def tags(repo: Repo) -> list[str]:
    return repo.git("tag", "-l", "checkpoint-*").split()


class TestCheckpoint:
    def test_annotated_tag_on_head_named_in_utc(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        result = cli("checkpoint")
        assert result.exit_code == 0, result.stderr
        assert result.stdout.splitlines()[0] == f"✓ Checkpoint: {NAME}"
        assert repo.git("cat-file", "-t", f"refs/tags/{NAME}") == "tag\n"
        assert repo.git("rev-parse", f"{NAME}^{{commit}}") == repo.git("rev-parse", "HEAD")

    @pytest.mark.parametrize("tz", ["Asia/Taipei", "America/Los_Angeles"])
    def test_name_is_utc_whatever_the_offset_and_zone(
        self, repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch, tz: str
    ) -> None:
        monkeypatch.setenv("TZ", tz)
        monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-02T11:04:05+08:00")
        start_task(cli)
        assert js(cli("checkpoint", "--json"))["name"] == NAME
        assert "+0800" in repo.git("cat-file", "tag", NAME)  # the tagger keeps its own offset

    def test_message_carries_the_full_snapshot_id(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint", "-m", "before the refactor")
        tip = repo.ref()
        assert tag_message(repo, NAME) == f"before the refactor\n\nAgy-State: {tip}\n"
        trailers = repo.git("tag", "-l", "--format=%(contents:trailers:only,unfold)", NAME)
        assert trailers.strip() == f"Agy-State: {tip}"

    def test_default_message_names_the_step_in_progress(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint")
        assert tag_message(repo, NAME).startswith("checkpoint: one\n\n")

    def test_default_message_falls_back_to_the_goal(self, repo: Repo, cli: Any) -> None:
        assert cli("patch", "--set", "goal=Make it fast").exit_code == 0
        cli("checkpoint")
        assert tag_message(repo, NAME).startswith("checkpoint: Make it fast\n\n")

    def test_tagger_is_the_committer(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint")
        fmt = "%(taggername) %(taggeremail) %(taggerdate:iso-strict)"
        assert repo.git("tag", "-l", f"--format={fmt}", NAME) == (
            "A U Thor <author@example.com> 2026-01-02T03:04:05+00:00\n"
        )

    def test_unsaved_valid_view_is_saved_first(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        before = repo.ref()
        repo.view.write_text(
            repo.view.read_text().replace("## Open issues\n", "## Open issues\n- flaky CI\n")
        )
        result = cli("checkpoint")
        assert result.exit_code == 0, result.stderr
        tip = repo.ref()
        assert tip != before
        assert "note: saved STATE.md first as" in result.stderr
        assert tag_message(repo, NAME).endswith(f"Agy-State: {tip}\n")
        assert "- flaky CI" in repo.git("show", f"{tip}:STATE.md")
        assert repo.git("log", "-1", "--format=%s", "refs/agy/state").startswith(
            "save (checkpoint): open_issues"
        )

    def test_invalid_view_is_refused_and_nothing_tagged(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        repo.view.write_text(repo.view.read_text().replace("## Goal\n", "## Gaol\n"))
        result = cli("checkpoint")
        assert result.exit_code == 1
        assert "STATE.md is invalid" in result.stderr
        assert tags(repo) == []

    def test_no_state_yet_is_refused_with_a_hint(self, repo: Repo, cli: Any) -> None:
        result = cli("checkpoint")
        assert result.exit_code == 1
        assert result.stderr.startswith("error: there is no state to checkpoint yet\nhint: ")
        assert "git agy-state patch" in result.stderr
        assert tags(repo) == []

    def test_unborn_head_is_a_clear_error(self, empty_repo: Repo, cli: Any) -> None:
        start_task(cli)
        before = empty_repo.ref()
        result = cli("checkpoint", "--json")
        assert result.exit_code == 1
        body = js(result)
        assert body["error"] == "HEAD has no commit yet; a checkpoint marks a commit"
        assert "git commit" in body["hint"]
        assert tags(empty_repo) == [] and empty_repo.ref() == before

    def test_json(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        body = js(cli("checkpoint", "-m", "m", "--json"))
        assert body == {
            "name": NAME,
            "commit": repo.git("rev-parse", "HEAD").strip(),
            "state": repo.ref(),
            "message": "m",
            "at": "2026-01-02T03:04:05+00:00",
            "saved": None,
            "moved_from": None,
        }

    def test_a_taken_name_moves_to_the_next_free_second(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        repo.git("tag", NAME)  # someone's plain tag holds this second
        repo.git("tag", "checkpoint-20260102-030406", "-m", "theirs")
        theirs = repo.git("rev-parse", "checkpoint-20260102-030406")
        result = cli("checkpoint")
        assert result.exit_code == 0, result.stderr
        assert "✓ Checkpoint: checkpoint-20260102-030407" in result.stdout
        assert f"note: {NAME} was taken; named it checkpoint-20260102-030407" in result.stderr
        assert repo.git("rev-parse", "checkpoint-20260102-030406") == theirs  # not overwritten
        assert js(cli("checkpoint", "--json"))["moved_from"] == NAME

    def test_checkpoints_in_the_same_second_never_share_a_name(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        names = [js(cli("checkpoint", "-m", f"c{i}", "--json"))["name"] for i in range(3)]
        assert names == [NAME, "checkpoint-20260102-030406", "checkpoint-20260102-030407"]
        assert [tag_message(repo, n).split("\n")[0] for n in names] == ["c0", "c1", "c2"]

    def test_concurrent_processes_never_overwrite(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        count = 6
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "gitstate", "checkpoint", "-m", f"p{i}", "--json"],
                cwd=repo.path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=dict(os.environ),
            )
            for i in range(count)
        ]
        bodies = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            bodies.append(json.loads(out))
        names = {b["name"] for b in bodies}
        assert len(names) == count
        assert sorted(names) == sorted(tags(repo))
        for body in bodies:  # each tag holds the message of the process that reported it
            assert tag_message(repo, body["name"]).split("\n")[0] == body["message"]

    def test_concurrent_processes_in_two_work_trees_never_share_a_name(
        self, repo: Repo, cli: Any, tmp_path: Any
    ) -> None:
        """The tag ref is created only if absent under its own lock, which every work tree
        shares: no repository-wide checkpoint lock is needed (storage/tags.py)."""
        start_task(cli)
        linked = tmp_path / "linked"
        repo.git("worktree", "add", "-q", "--detach", str(linked))
        started = subprocess.run(
            [sys.executable, "-m", "gitstate", "patch", "--set", "goal=There", "--todo", "x"],
            cwd=linked,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert started.returncode == 0, started.stderr
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "gitstate", "checkpoint", "-m", f"p{i}", "--json"],
                cwd=repo.path if i % 2 else linked,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(6)
        ]
        bodies = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            bodies.append(json.loads(out))
        names = {b["name"] for b in bodies}
        assert len(names) == 6  # all in the pinned second or just after, none overwritten
        assert sorted(names) == sorted(tags(repo))
        for body in bodies:
            assert tag_message(repo, body["name"]).split("\n")[0] == body["message"]

    def test_reflog_and_fsck(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint")
        # `git reflog show` lists commits only; the log of a tag ref is read as a file.
        log = (repo.path / ".git" / "logs" / "refs" / "tags" / NAME).read_text()
        assert log.startswith("0" * 40 + " " + repo.git("rev-parse", f"refs/tags/{NAME}").strip())
        assert log.rstrip().endswith(f"\tagy-state: checkpoint {NAME}")
        fsck = subprocess.run(
            ["git", "fsck", "--strict", "--no-dangling"],
            cwd=repo.path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert fsck.returncode == 0 and fsck.stdout == "" and fsck.stderr == ""

    def test_head_index_and_work_tree_untouched(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        (repo.path / "work.txt").write_text("in progress\n")
        repo.git("add", "work.txt")
        before = (repo.git("rev-parse", "HEAD"), repo.git("status", "--porcelain"))
        cli("checkpoint")
        assert (repo.git("rev-parse", "HEAD"), repo.git("status", "--porcelain")) == before


class TestPlainGit:
    def test_tag_list_and_show_read_well(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint", "-m", "before the refactor")
        assert repo.git("tag", "-l", "-n1", "checkpoint-*") == f"{NAME} before the refactor\n"
        shown = repo.git("show", "--no-patch", NAME)
        assert shown.startswith(f"tag {NAME}\nTagger: A U Thor <author@example.com>\n")
        assert f"before the refactor\n\nAgy-State: {repo.ref()}\n" in shown
        assert f"commit {repo.git('rev-parse', 'HEAD').strip()}" in shown


class TestCheckpoints:
    def test_empty(self, repo: Repo, cli: Any) -> None:
        result = cli("checkpoints")
        assert result.exit_code == 0
        assert "no checkpoints yet" in result.stdout
        assert js(cli("checkpoints", "--json")) == []

    def test_json_keys_and_newest_first(
        self, repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        start_task(cli)
        first_state = repo.ref()
        cli("checkpoint", "-m", "first")
        head = repo.commit("a.txt", "a\n", "more code")
        assert cli("patch", "--done", "1", "--verify", "ok").exit_code == 0
        monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-03T00:00:00+00:00")
        cli("checkpoint", "-m", "second\n\nwith a body")
        rows = js(cli("checkpoints", "--json"))
        assert [r["name"] for r in rows] == ["checkpoint-20260103-000000", NAME]
        assert all(set(r) == {"name", "commit", "state", "message", "at"} for r in rows)
        assert rows[0]["commit"] == head and rows[0]["state"] == repo.ref()
        assert rows[0]["message"] == "second\n\nwith a body"
        assert rows[0]["at"] == "2026-01-03T00:00:00+00:00"
        assert rows[1]["state"] == first_state and rows[1]["message"] == "first"

    def test_tags_made_by_other_tools_are_listed_without_a_state(
        self, repo: Repo, cli: Any
    ) -> None:
        # The Context Manager's create_checkpoint makes plain `git tag checkpoint-…` tags.
        repo.git("tag", "checkpoint-20250101-000000")
        repo.git("tag", "v1.0")
        rows = js(cli("checkpoints", "--json"))
        assert rows == [
            {
                "name": "checkpoint-20250101-000000",
                "commit": repo.git("rev-parse", "HEAD").strip(),
                "state": None,
                "message": "",
                "at": None,
            }
        ]
        assert "no state" in cli("checkpoints").stdout

    def test_human_listing(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint", "-m", "before the refactor")
        line = cli("checkpoints").stdout
        head = repo.git("rev-parse", "--short", "HEAD").strip()  # core.abbrev, as git's
        state = repo.git("rev-parse", "--short", "refs/agy/state").strip()
        assert line == f"{NAME}  code {head}  state {state}  before the refactor\n"


class TestShowAndRestore:
    def test_show_prints_that_state_byte_for_byte(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint")
        at_checkpoint = repo.git("show", "refs/agy/state:STATE.md")
        assert cli("patch", "--done", "1", "--verify", "ok").exit_code == 0
        result = cli("show", NAME)
        assert result.exit_code == 0
        assert result.stdout_bytes == at_checkpoint.encode()
        assert (
            js(cli("show", NAME, "--json"))["commit"]
            == json.loads(cli("checkpoints", "--json").stdout)[0]["state"]
        )

    def test_restore_brings_the_state_back_and_hints_at_the_code(
        self, repo: Repo, cli: Any
    ) -> None:
        start_task(cli)
        cli("checkpoint")
        state = repo.ref()
        head = repo.git("rev-parse", "HEAD")
        assert cli("patch", "--done", "1", "--verify", "ok").exit_code == 0
        repo.commit("later.txt", "later\n", "later work")
        (repo.path / "dirty.txt").write_text("uncommitted\n")
        later_head = repo.git("rev-parse", "HEAD")
        result = cli("restore", NAME)
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith("restored as ")
        assert result.stderr.splitlines()[-1] == (
            f"hint: the code was left as it is; to bring it back too: git switch --detach {NAME}"
        )
        tip = repo.ref()
        assert tip != state
        assert repo.git("rev-parse", f"{tip}^{{tree}}") == repo.git(
            "rev-parse", f"{state}^{{tree}}"
        )
        assert repo.view.read_text() == repo.git("show", f"{state}:STATE.md")
        # The code is the user's: HEAD, branches and files stay as they were.
        assert repo.git("rev-parse", "HEAD") == later_head != head
        assert (repo.path / "dirty.txt").read_text() == "uncommitted\n"
        assert (repo.path / "later.txt").exists()

    def test_restore_json_has_the_code_hint(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint")
        assert cli("patch", "--done", "1", "--verify", "ok").exit_code == 0
        body = js(cli("restore", NAME, "--json"))
        assert body["outcome"] == "saved"
        assert body["code_hint"] == f"git switch --detach {NAME}"

    def test_restore_of_a_snapshot_has_no_code_hint(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        assert cli("patch", "--done", "1", "--verify", "ok").exit_code == 0
        result = cli("restore", "~1")
        assert result.exit_code == 0
        assert "git switch" not in result.stderr
        assert cli("patch", "--done", "1", "--verify", "ok").exit_code == 0
        assert "code_hint" not in js(cli("restore", "~1", "--json"))

    @pytest.mark.parametrize("command", ["show", "restore", "diff", "checkout"])
    def test_unknown_checkpoint_exits_3(self, repo: Repo, cli: Any, command: str) -> None:
        start_task(cli)
        cli("checkpoint")
        result = cli(command, "checkpoint-20990101-000000")
        assert result.exit_code == 3
        assert "checkpoint-20990101-000000" in result.stderr

    def test_code_comes_back_with_the_hinted_command(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("checkpoint")
        head = repo.git("rev-parse", "HEAD")
        repo.commit("later.txt", "later\n", "later work")
        hint = js(cli("restore", NAME, "--json"))["code_hint"]
        repo.git(*hint.split()[1:])
        assert repo.git("rev-parse", "HEAD") == head
        assert not (repo.path / "later.txt").exists()
