"""Finishing tasks (docs/phase-and-checkpoints.md): archive refs, closing snapshots, reopen, and what triggers it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import Repo

from gitstate.usecases.state.archive import slug


def js(result: Any) -> Any:
    return json.loads(result.stdout)


def task(cli: Any, goal: str = "Make the pool retry", steps: int = 2) -> None:
    args = ["patch", "--set", f"goal={goal}"]
    for i in range(steps):
        args += ["--todo", f"step {i + 1}"]
    assert cli(*args).exit_code == 0


def finish_all(cli: Any, steps: int = 2) -> Any:
    result = None
    for _ in range(steps):
        result = cli("patch", "--done", "1", "--verify", "checked", "--json")
        assert result.exit_code == 0, result.output
    return result


def refs(repo: Repo, prefix: str) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", prefix).split()


class TestFinishing:
    def test_emptying_next_steps_archives_the_task(self, repo: Repo, cli: Any) -> None:
        task(cli)
        last = js(finish_all(cli))
        (archive,) = refs(repo, "refs/agy/archive/")
        assert last["archived"] == archive
        assert re.fullmatch(r"refs/agy/archive/\d{8}-\d{6}-make-the-pool-retry", archive)
        # The archive keeps the task's tip: the snapshot that finished the last step.
        assert repo.git("rev-parse", archive).strip() == last["snapshot"]
        tip = repo.ref()
        assert repo.git("rev-parse", f"{tip}^").strip() == last["snapshot"]  # only forward
        assert repo.git("ls-tree", tip) == ""  # the closing snapshot holds no STATE.md
        trailers = repo.git("log", "-1", "--format=%(trailers)", "refs/agy/state")
        assert f"Agy-Archived: {archive}" in trailers
        assert "Agy-Phase: IDLE" in trailers
        assert not repo.view.exists()

    def test_the_command_says_where_it_went(self, repo: Repo, cli: Any) -> None:
        task(cli, steps=1)
        result = cli("patch", "--done", "1", "--verify", "ok")
        assert "task finished: kept as refs/agy/archive/" in result.stdout
        assert "STATE.md left the work tree" in result.stdout

    def test_save_of_an_emptied_view_archives(self, repo: Repo, cli: Any) -> None:
        task(cli, steps=1)
        text = repo.view.read_text().replace("- [ ] step 1\n", "")
        repo.view.write_text(text)
        result = cli("save", "--json")
        assert js(result)["archived"]
        assert not repo.view.exists()

    def test_a_hook_save_never_archives(self, repo: Repo, cli: Any) -> None:
        from gitstate.usecases.state import writer as state
        from gitstate.usecases.workspace import Workspace

        task(cli, steps=1)
        repo.view.write_text(repo.view.read_text().replace("- [ ] step 1\n", ""))
        written = state.save(Workspace.open(repo.path), origin="stop-guard")
        assert written.outcome == "saved" and written.archived is None
        assert refs(repo, "refs/agy/archive/") == []
        assert repo.view.exists()

    def test_a_call_that_adds_steps_never_archives(self, repo: Repo, cli: Any) -> None:
        task(cli, steps=1)
        ops = {"ops": [{"op": "todo", "text": "x"}, {"op": "done", "step": 1, "verify": "a"},
                       {"op": "done", "step": 2, "verify": "b"}]}  # fmt: skip
        result = cli("patch", "--ops", "-", "--json", input=json.dumps(ops))
        assert result.exit_code == 0, result.output
        assert js(result)["archived"] is None
        assert repo.view.exists()

    def test_a_task_that_never_had_steps_is_not_archived(self, repo: Repo, cli: Any) -> None:
        assert cli("patch", "--set", "goal=just a goal").exit_code == 0
        assert cli("patch", "--add", "open_issues=hm").exit_code == 0
        assert refs(repo, "refs/agy/archive/") == []

    def test_the_next_task_starts_after_the_closing_snapshot(self, repo: Repo, cli: Any) -> None:
        task(cli)
        finish_all(cli)
        closing = repo.ref()
        task(cli, goal="Second task", steps=1)
        assert repo.git("rev-parse", "refs/agy/state^").strip() == closing
        text = repo.view.read_text()
        assert "Second task" in text and "Make the pool retry" not in text
        assert "## Done\n\n" in text  # a new sheet, not the old one
        rows = js(cli("log", "--json"))
        assert len(rows) == 1  # log shows the current task only
        assert rows[0]["message"].startswith("patch: set goal")

    def test_log_right_after_archiving_shows_the_closing_snapshot(
        self, repo: Repo, cli: Any
    ) -> None:
        task(cli)
        finish_all(cli)
        rows = js(cli("log", "--json"))
        assert rows[0]["message"] == "archive: Make the pool retry"
        assert len(rows) == 4  # closing + 2 dones + the first patch

    def test_status_after_archiving(self, repo: Repo, cli: Any) -> None:
        task(cli, steps=1)
        cli("patch", "--done", "1", "--verify", "ok")
        body = js(cli("status", "--json"))
        assert body["view"] == "missing"
        assert body["task"] == "none"
        assert body["archived"] == refs(repo, "refs/agy/archive/")[0]


class TestCommands:
    def test_archive_on_request_with_steps_left_and_unsaved_edits(
        self, repo: Repo, cli: Any
    ) -> None:
        task(cli)
        cli("patch", "--start", "1")
        repo.view.write_text(
            repo.view.read_text().replace("## Open issues\n", "## Open issues\n- kept\n")
        )
        result = cli("archive", "--json")
        assert result.exit_code == 0, result.output
        body = js(result)
        archive = body["archived"]
        assert body["saved"]["outcome"] == "saved"
        shown = cli("show", archive.removeprefix("refs/agy/")).stdout
        assert "- kept" in shown and "- [>] step 1" in shown
        assert not repo.view.exists()

    def test_archive_without_a_task(self, repo: Repo, cli: Any) -> None:
        result = cli("archive")
        assert result.exit_code == 3
        assert result.stderr.startswith("error: there is no current task")

    def test_archives_and_log_archived(self, repo: Repo, cli: Any) -> None:
        task(cli, goal="First", steps=1)
        cli("patch", "--done", "1", "--verify", "ok")
        task(cli, goal="Second", steps=1)
        cli("patch", "--done", "1", "--verify", "ok")
        rows = js(cli("archives", "--json"))
        assert [r["goal"] for r in rows] == ["Second", "First"]
        assert set(rows[0]) == {"ref", "goal", "tip", "at"}
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", rows[0]["at"])
        assert js(cli("log", "--archived", "--json")) == rows
        assert "First" in cli("archives").stdout

    def test_two_archives_in_one_second_get_distinct_names(self, repo: Repo, cli: Any) -> None:
        for goal in ("same goal", "same goal", "same goal"):
            task(cli, goal=goal, steps=1)
            cli("patch", "--done", "1", "--verify", "ok")
        names = refs(repo, "refs/agy/archive/")
        assert len(set(names)) == 3

    def test_show_works_on_an_archive(self, repo: Repo, cli: Any) -> None:
        task(cli, steps=1)
        cli("patch", "--done", "1", "--verify", "ok")
        (archive,) = refs(repo, "refs/agy/archive/")
        name = archive.removeprefix("refs/agy/archive/")
        expected = repo.git("show", f"{archive}:STATE.md")
        for spelling in (archive, f"archive/{name}", name):
            assert cli("show", spelling).stdout == expected

    def test_reopen_brings_the_newest_back(self, repo: Repo, cli: Any) -> None:
        task(cli, goal="Old task", steps=1)
        cli("patch", "--done", "1", "--verify", "ok")
        (archive,) = refs(repo, "refs/agy/archive/")
        before = repo.ref()
        result = cli("archive", "--reopen", "--json")
        assert result.exit_code == 0, result.output
        assert js(result)["reopened"] == archive
        assert repo.git("rev-parse", "refs/agy/state^").strip() == before  # forward only
        assert repo.view.read_text() == repo.git("show", f"{archive}:STATE.md")
        assert f"Agy-Reopened: {archive}" in repo.git(
            "log", "-1", "--format=%(trailers)", "refs/agy/state"
        )
        assert refs(repo, "refs/agy/archive/") == [archive]  # nothing deleted
        assert cli("patch", "--todo", "more work").exit_code == 0

    def test_reopen_by_name_and_refusals(self, repo: Repo, cli: Any) -> None:
        task(cli, goal="Alpha", steps=1)
        cli("patch", "--done", "1", "--verify", "ok")
        task(cli, goal="Beta", steps=1)
        assert cli("archive", "--reopen").exit_code == 5  # a task is in progress
        cli("patch", "--done", "1", "--verify", "ok")
        assert cli("archive", "--reopen", "nope").exit_code == 3
        alpha = next(r for r in refs(repo, "refs/agy/archive/") if r.endswith("-alpha"))
        assert cli("archive", "--reopen", alpha.removeprefix("refs/agy/archive/")).exit_code == 0
        assert "Alpha" in repo.view.read_text()

    def test_reopen_with_no_archives(self, repo: Repo, cli: Any) -> None:
        result = cli("archive", "--reopen")
        assert result.exit_code == 3
        assert "no archived tasks" in result.stderr


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("Make the pool retry", "make-the-pool-retry"),
        ("issue #4412：重構資料庫連線池", "issue-4412-重構資料庫連線池"),
        ("  --Weird__Name!!  ", "weird-name"),
        ("", "task"),
        ("!!!", "task"),
        ("a" * 60, "a" * 40),
        ("word " * 12, "word-word-word-word-word-word-word-word"),
        ("Ünïcödé façade", "n-c-d-fa-ade"),
    ],
)
def test_slug(goal: str, expected: str) -> None:
    assert slug(goal) == expected
    assert len(slug(goal)) <= 40


def test_archive_refs_travel_and_stay_valid_ref_names(repo: Repo, cli: Any) -> None:
    task(cli, goal="issue #4412：重構資料庫連線池", steps=1)
    cli("patch", "--done", "1", "--verify", "ok")
    (archive,) = refs(repo, "refs/agy/archive/")
    assert repo.git("check-ref-format", archive, check=False) == ""
    assert repo.git("show", f"{archive}:STATE.md").startswith("# Task state")
