"""The state commands end to end on real repositories: what users and programs see."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from support import EN_SAMPLE, ZH_TW_SAMPLE, run_tool


def js(result: Any) -> Any:
    return json.loads(result.stdout)


def start_task(cli: Any) -> None:
    result = cli(
        "patch",
        "--set",
        "goal=Make the pool retry",
        "--todo",
        "write the test",
        "--todo",
        "write the code",
    )
    assert result.exit_code == 0, result.stderr


class TestInit:
    def test_init_excludes_view_sets_rewrite_ref_and_starts_reflog(
        self, repo: Repo, cli: Any
    ) -> None:
        result = cli("init")
        assert result.exit_code == 0
        exclude = (repo.path / ".git" / "info" / "exclude").read_text()
        assert "/STATE.md" in exclude.splitlines()
        assert repo.git("config", "--get-all", "notes.rewriteRef").split() == [
            "refs/notes/agy/decisions"
        ]
        assert (repo.path / ".git" / "logs" / "refs" / "agy" / "state").exists()

    def test_init_is_idempotent(self, repo: Repo, cli: Any) -> None:
        cli("init")
        result = cli("init", "--json")
        assert js(result) == {"actions": []}
        exclude = (repo.path / ".git" / "info" / "exclude").read_text()
        assert exclude.splitlines().count("/STATE.md") == 1

    def test_init_appends_its_line_after_the_users_own(self, repo: Repo, cli: Any) -> None:
        exclude = repo.path / ".git" / "info" / "exclude"
        exclude.parent.mkdir(exist_ok=True)
        exclude.write_text("*.log")  # no final newline
        assert cli("init").exit_code == 0
        assert exclude.read_text() == "*.log\n/STATE.md\n"

    def test_init_takes_an_indented_line_as_its_own(self, repo: Repo, cli: Any) -> None:
        exclude = repo.path / ".git" / "info" / "exclude"
        exclude.parent.mkdir(exist_ok=True)
        exclude.write_text("  /STATE.md  \n")
        result = cli("init", "--json")
        assert result.exit_code == 0, result.stderr
        assert not any("exclude" in action for action in js(result)["actions"])
        assert exclude.read_text() == "  /STATE.md  \n"

    def test_view_is_ignored_by_git_after_init(self, repo: Repo, cli: Any) -> None:
        cli("init")
        start_task(cli)
        assert repo.git("status", "--porcelain") == ""


class TestSaveAndPatch:
    def test_first_patch_starts_from_template_in_en(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        text = repo.view.read_text()
        assert text.startswith("# Task state — updated ")
        assert "## Goal\nMake the pool retry\n" in text
        assert "- [ ] write the test\n- [ ] write the code\n" in text
        assert repo.git("show", "refs/agy/state:STATE.md") == text

    @pytest.mark.parametrize(
        ("lang_env", "config", "title"),
        [
            ("zh_TW.UTF-8", None, "# 任務狀態 ── 最後更新 "),
            ("zh_HK.UTF-8", None, "# 任務狀態 ── 最後更新 "),
            ("zh_CN.UTF-8", None, "# 任务状态 ── 最后更新 "),
            ("C.UTF-8", "zh-TW", "# 任務狀態 ── 最後更新 "),
            ("zh_TW.UTF-8", "en", "# Task state — updated "),
        ],
    )
    def test_new_document_language(
        self,
        repo: Repo,
        cli: Any,
        monkeypatch: pytest.MonkeyPatch,
        lang_env: str,
        config: str | None,
        title: str,
    ) -> None:
        monkeypatch.setenv("LANG", lang_env)
        monkeypatch.delenv("LC_ALL")
        if config:
            repo.git("config", "agy.language", config)
        assert cli("patch", "--todo", "x").exit_code == 0
        assert repo.view.read_text().startswith(title)

    def test_commit_message_and_trailers(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        head = repo.git("rev-parse", "HEAD").strip()
        message = repo.git("log", "-1", "--format=%B", "refs/agy/state")
        assert message.splitlines()[0].startswith("patch: ")
        trailers = repo.git("log", "-1", "--format=%(trailers:only,unfold)", "refs/agy/state")
        assert "Agy-Format: 1" in trailers
        assert "Agy-Sections: goal, next_steps" in trailers
        assert f"Agy-Head: {head}" in trailers
        assert "Agy-Branch: main" in trailers
        assert "Agy-Phase: IDLE" in trailers

    def test_snapshots_never_touch_head_index_or_branches(self, repo: Repo, cli: Any) -> None:
        before = (repo.git("rev-parse", "HEAD"), repo.git("for-each-ref", "refs/heads"))
        (repo.path / "staged.txt").write_text("x\n")
        repo.git("add", "staged.txt")
        start_task(cli)
        cli("patch", "--start", "1")
        assert (repo.git("rev-parse", "HEAD"), repo.git("for-each-ref", "refs/heads")) == before
        assert repo.git("diff", "--cached", "--name-only") == "staged.txt\n"

    def test_save_of_hand_edit(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        text = repo.view.read_text().replace("## Open issues\n", "## Open issues\n- flaky CI\n")
        repo.view.write_text(text)
        assert cli("status", "--json").stdout and js(cli("status", "--json"))["view"] == "dirty"
        result = cli("save", "-m", "note the flaky CI")
        assert result.exit_code == 0
        assert result.stdout.startswith("saved ")
        assert "open_issues" in result.stdout
        assert repo.git("log", "-1", "--format=%s", "refs/agy/state") == "note the flaky CI\n"
        assert js(cli("status", "--json"))["view"] == "clean"
        assert "- flaky CI" in repo.git("show", "refs/agy/state:STATE.md")

    def test_save_with_nothing_changed_is_a_noop(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        tip = repo.ref()
        result = cli("save")
        assert result.exit_code == 0
        assert "nothing to save" in result.stdout
        assert repo.ref() == tip

    def test_save_without_view_or_snapshot(self, repo: Repo, cli: Any) -> None:
        result = cli("save", "--json")
        assert result.exit_code == 0
        assert js(result)["outcome"] == "nothing"
        assert repo.ref() is None

    def test_save_of_peer_written_zh_tw_file(self, repo: Repo, cli: Any) -> None:
        repo.view.write_text(ZH_TW_SAMPLE)
        result = cli("save", "--json")
        assert result.exit_code == 0, result.stderr
        saved = repo.git("show", "refs/agy/state:STATE.md")
        # Same document; only the title's time is the save time.
        assert saved.split("\n", 1)[1] == ZH_TW_SAMPLE.split("\n", 1)[1]
        assert saved.startswith("# 任務狀態 ── 最後更新 ")
        assert js(result)["sections"] == [
            "goal",
            "done",
            "changed_files",
            "open_issues",
            "key_data",
            "failed_attempts",
            "next_steps",
        ]

    def test_patch_keeps_unsaved_edits_of_the_view(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        repo.view.write_text(
            repo.view.read_text().replace(
                "## Tried and failed\n", "## Tried and failed\n- sleep(1)\n"
            )
        )
        assert cli("patch", "--start", "1").exit_code == 0
        saved = repo.git("show", "refs/agy/state:STATE.md")
        assert "- sleep(1)" in saved
        assert "- [>] write the test" in saved
        assert repo.view.read_text() == saved

    def test_patch_without_view_applies_to_tip_and_writes_view(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        repo.view.unlink()
        assert cli("patch", "--start", "2").exit_code == 0
        assert "- [>] write the code" in repo.view.read_text()
        assert "Make the pool retry" in repo.view.read_text()

    def test_done_start_flags_refer_to_steps_before_the_patch(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("patch", "--start", "1")
        result = cli("patch", "--done", "1", "--verify", "pytest -k retry passes", "--start", "2")
        assert result.exit_code == 0, result.stderr
        saved = repo.git("show", "refs/agy/state:STATE.md")
        assert "- [x] write the test | verified: pytest -k retry passes" in saved
        assert "- [>] write the code" in saved

    def test_steps_added_by_the_patch_continue_the_count(self, repo: Repo, cli: Any) -> None:
        assert cli("patch", "--todo", "first", "--todo", "second", "--start", "1").exit_code == 0
        assert "- [>] first\n- [ ] second" in repo.view.read_text()
        result = cli("patch", "--todo", "third", "--start", "3")
        assert result.exit_code == 0, result.stderr
        assert "- [ ] first\n- [ ] second\n- [>] third" in repo.view.read_text()
        subject = repo.git("log", "-1", "--format=%s", "refs/agy/state")
        assert subject == "patch: todo: third; start: third\n"

    def test_patch_ops_json_from_stdin(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        ops = {
            "ops": [
                {"op": "add", "section": "key_data", "text": "port 5433"},
                {"op": "block", "step": 2, "reason": "waiting for review"},
                {"op": "todo", "text": "ship it"},
            ]
        }
        result = cli("patch", "--ops", "-", "--json", input=json.dumps(ops))
        assert result.exit_code == 0, result.stdout
        body = js(result)
        assert body["outcome"] == "saved"
        assert body["sections"] == ["key_data", "next_steps"]
        saved = repo.git("show", "refs/agy/state:STATE.md")
        assert "- port 5433" in saved
        assert "- [!] write the code | reason: waiting for review" in saved
        assert "- [ ] ship it" in saved

    def test_pause_puts_a_step_back(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("patch", "--block", "1", "--reason", "waiting")
        assert cli("patch", "--pause", "1").exit_code == 0
        assert "- [ ] write the test\n" in repo.view.read_text()
        ops = json.dumps({"ops": [{"op": "start", "step": 1}, {"op": "pause", "step": 1}]})
        assert cli("patch", "--ops", "-", input=ops).exit_code == 0
        assert "[>]" not in repo.view.read_text()

    def test_step_named_by_text(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        assert cli("patch", "--start", "write the c").exit_code == 0
        assert "- [>] write the code" in repo.view.read_text()

    def test_invalid_patch_changes_nothing(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        tip, view = repo.ref(), repo.view.read_bytes()
        for i in range(5):
            cli("patch", "--add", f"open_issues=issue {i}")
        tip, view = repo.ref(), repo.view.read_bytes()
        result = cli("patch", "--add", "open_issues=one too many")
        assert result.exit_code == 1
        assert result.stderr.startswith("error: the patch would leave STATE.md invalid")
        assert "at most 5 lines, found 6" in result.stderr
        assert (repo.ref(), repo.view.read_bytes()) == (tip, view)

    def test_finishing_a_step_with_done_full_drops_the_oldest(self, repo: Repo, cli: Any) -> None:
        cli("patch", "--todo", "anchor")  # keeps the task open (an empty list would archive it)
        for i in range(5):
            assert cli("patch", "--todo", f"step {i}").exit_code == 0
            assert cli("patch", "--done", f"step {i}", "--verify", "ok").exit_code == 0
        cli("patch", "--todo", "step 5")
        result = cli("patch", "--done", "step 5", "--verify", "ok")
        assert result.exit_code == 0
        assert "dropped its oldest line" in result.stderr
        done = cli("show", "--section", "done").stdout.splitlines()
        assert done[0] == "- [x] step 1 | verified: ok"
        assert len(done) == 5

    def test_unknown_step_is_a_failure(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        result = cli("patch", "--done", "9", "--verify", "x")
        assert result.exit_code == 1
        assert result.stderr.startswith("error: there is no step 9")


class TestReading:
    def test_show_prints_snapshot_bytes_exactly(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        result = cli("show")
        assert result.stdout_bytes == repo.git("show", "refs/agy/state:STATE.md").encode()

    def test_show_older_snapshots_by_tilde_and_id(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        first = repo.ref()
        cli("patch", "--start", "1")
        assert first is not None
        assert cli("show", "~1").stdout == repo.git("show", f"{first}:STATE.md")
        assert cli("show", first[:8]).stdout == repo.git("show", f"{first}:STATE.md")

    def test_show_section_and_json(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        assert cli("show", "--section", "Next steps").stdout == (
            "- [ ] write the test\n- [ ] write the code\n"
        )
        body = js(cli("show", "--json"))
        assert body["commit"] == repo.ref()
        assert body["language"] == "en"
        assert body["sections"]["goal"] == ["Make the pool retry"]
        assert body["text"] == repo.git("show", "refs/agy/state:STATE.md")

    def test_status_json_keys(self, repo: Repo, cli: Any) -> None:
        assert js(cli("status", "--json")) | {} == {
            **js(cli("status", "--json")),
            "view": "missing",
            "tip": None,
            "valid": True,
            "in_progress": None,
            "phase": "IDLE",
        }
        start_task(cli)
        cli("patch", "--start", "1")
        body = js(cli("status", "--json"))
        assert body["view"] == "clean"
        assert body["tip"] == repo.ref()
        assert body["in_progress"] == "write the test"
        assert body["written_from"] == repo.ref()
        assert body["is_tip"] is True

    def test_status_reports_a_stale_view(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        first = repo.ref()
        cli("patch", "--start", "1")
        assert cli("checkout", "~1").exit_code == 0
        body = js(cli("status", "--json"))
        assert body["view"] == "clean"
        assert body["written_from"] == first
        assert body["is_tip"] is False
        assert "the tip is now" in cli("status").stdout

    def test_log_json_newest_first(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("patch", "--start", "1")
        rows = js(cli("log", "--json"))
        assert [r["commit"] for r in rows] == repo.git("rev-list", "refs/agy/state").split()
        assert set(rows[0]) >= {"commit", "time", "message", "sections", "head", "branch", "phase"}
        assert rows[0]["sections"] == ["next_steps"]
        assert rows[0]["branch"] == "main"
        assert rows[0]["head"] == repo.git("rev-parse", "HEAD").strip()
        assert rows[0]["time"] == "2026-01-02T03:04:05+00:00"
        assert len(js(cli("log", "-n", "1", "--json"))) == 1

    def test_log_patch_shows_each_change(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("patch", "--start", "1")
        out = cli("log", "-n", "1", "--patch").stdout
        assert "-- [ ] write the test" in out
        assert "+- [>] write the test" in out

    def test_log_of_empty_chain(self, repo: Repo, cli: Any) -> None:
        result = cli("log", "--json")
        assert result.exit_code == 0
        assert js(result) == []

    def test_plain_git_reads_the_chain(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("patch", "--start", "1")
        assert repo.git("log", "--oneline", "refs/agy/state").count("\n") == 2
        reflog = repo.git("reflog", "show", "refs/agy/state")
        assert reflog.count("\n") == 2
        assert "agy-state: patch: start: write the test" in reflog

    def test_diff_view_against_tip_and_between_snapshots(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("patch", "--start", "1")
        repo.view.write_text(
            repo.view.read_text().replace("## Open issues\n", "## Open issues\n- hm\n")
        )
        body = js(cli("diff", "--json"))
        assert body["to"] == "view"
        assert body["sections"] == ["open_issues"]
        assert "+- hm" in body["diff"]
        between = js(cli("diff", "~1", "~0", "--json"))
        assert between["sections"] == ["next_steps"]
        assert cli("diff").stdout.startswith("--- a/STATE.md")

    def test_check_json(self, repo: Repo, cli: Any) -> None:
        result = cli("check", "--json")
        assert result.exit_code == 0
        assert js(result)["valid"] is True
        repo.view.write_text(EN_SAMPLE.replace("- [ ] move", "- [>] move"))
        result = cli("check", "--json")
        assert result.exit_code == 1
        body = js(result)
        assert body["valid"] is False
        assert body["language"] == "en"
        assert body["errors"][0]["line"] == 21
        assert "at most one [>]" in body["errors"][0]["message"]

    def test_check_human_lists_at_most_20_errors(self, repo: Repo, cli: Any) -> None:
        body = "".join(f"- [x] item {i}\n" for i in range(30))
        text = EN_SAMPLE.replace(
            "- [x] exponential backoff | verified: pytest tests/test_retry.py passes\n", body
        )
        repo.view.write_text(text)
        result = cli("check")
        assert result.exit_code == 1
        listed = [line for line in result.stdout.splitlines() if line.startswith("  - line")]
        assert len(listed) == 20
        assert "… and 11 more" in result.stdout
        assert len(js(cli("check", "--json"))["errors"]) == 31

    def test_check_falls_back_to_the_tip(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        repo.view.unlink()
        body = js(cli("check", "--json"))
        assert body["source"] == "tip"
        assert body["valid"] is True


class TestCheckoutRestore:
    def test_checkout_refuses_dirty_view_then_force_keeps_it(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        cli("patch", "--start", "1")
        dirty = repo.view.read_text() + "\n- stray\n"
        repo.view.write_text(dirty)
        result = cli("checkout", "~1")
        assert result.exit_code == 5
        assert repo.view.read_text() == dirty
        result = cli("checkout", "~1", "--force", "--json")
        assert result.exit_code == 0
        kept = js(result)["overwritten"]
        assert kept
        assert Path(kept).read_text() == dirty

    def test_restore_appends_a_snapshot_equal_to_the_old_one(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        first = repo.ref()
        cli("patch", "--start", "1")
        second = repo.ref()
        result = cli("restore", "~1", "--json")
        assert result.exit_code == 0, result.stdout
        tip = repo.ref()
        assert tip not in (first, second)
        assert repo.git("rev-parse", f"{tip}^") == f"{second}\n"
        old = repo.git("show", f"{first}:STATE.md").split("\n", 1)[1]
        assert repo.git("show", f"{tip}:STATE.md").split("\n", 1)[1] == old
        assert repo.view.read_text() == repo.git("show", f"{tip}:STATE.md")


class TestAnywhere:
    def test_unborn_head_repository(self, empty_repo: Repo, cli: Any) -> None:
        start_task(cli)
        rows = js(cli("log", "--json"))
        assert rows[0]["head"] is None
        assert rows[0]["branch"] == "main"

    def test_linked_worktree_has_its_own_chain(
        self, repo: Repo, cli: Any, monkeypatch: Any
    ) -> None:
        start_task(cli)
        repo.git("worktree", "add", "-q", str(repo.path / "wt"), "-b", "side")
        monkeypatch.chdir(repo.path / "wt")
        assert cli("patch", "--todo", "in the worktree").exit_code == 0
        assert "in the worktree" in repo.git("show", "refs/agy/wt/wt/state:STATE.md")
        assert "in the worktree" not in repo.git("show", "refs/agy/state:STATE.md")
        assert (repo.path / "wt" / "STATE.md").exists()
        trailers = repo.git("log", "-1", "--format=%(trailers)", "refs/agy/wt/wt/state")
        assert "Agy-Branch: side" in trailers

    def test_subdirectory_finds_the_work_tree_root(
        self, repo: Repo, cli: Any, monkeypatch: Any
    ) -> None:
        (repo.path / "src" / "deep").mkdir(parents=True)
        monkeypatch.chdir(repo.path / "src" / "deep")
        start_task(cli)
        assert repo.view.exists()

    def test_real_subprocess_round_trip(self, repo: Repo) -> None:
        result = run_tool("patch", "--todo", "from a subprocess", cwd=repo.path)
        assert result.returncode == 0, result.stderr
        shown = run_tool("show", cwd=repo.path)
        assert "- [ ] from a subprocess" in shown.stdout
        assert run_tool("--version", cwd=repo.path).stdout.startswith("git agy-state")

    def test_git_finds_the_subcommand(self, repo: Repo) -> None:
        bindir = str(Path(sys.executable).parent)
        env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
        proc = subprocess.run(
            ["git", "agy-state", "status", "--json"],
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["view"] == "missing"
