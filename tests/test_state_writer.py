"""The write path's intents (usecases/state/writer.py): each caller names what it does, and only
the user's own save or patch may finish the task (docs/archive.md); the outcomes --json carries
(docs/json.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Repo

from gitstate.document.patch import FinishStep, Patch
from gitstate.usecases.state import patch as patch_uc
from gitstate.usecases.state import writer
from gitstate.usecases.state.writer import Action, Intent, Origin, Outcome, Written
from gitstate.usecases.workspace import Workspace


def one_step_task(cli: Any) -> None:
    result = cli("patch", "--set", "goal=Ship it", "--todo", "step 1", "--json")
    assert result.exit_code == 0, result.output


def archives(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", "refs/agy/archive/").split()


def without_the_step(repo: Repo) -> None:
    text = repo.view.read_text()
    assert "- [ ] step 1\n" in text
    repo.view.write_text(text.replace("- [ ] step 1\n", ""))


class TestIntent:
    @pytest.mark.parametrize(
        ("intent", "finishes"),
        [
            (writer.SAVE, True),
            (writer.HOOK_SAVE, False),
            (Intent(Action.PATCH), True),
            (Intent(Action.PATCH, Origin.HOOK), False),
            (Intent(Action.PATCH, adds_steps=True), False),
            (writer.RESTORE, False),
        ],
    )
    def test_only_the_users_own_save_or_patch_may_finish_the_task(
        self, intent: Intent, finishes: bool
    ) -> None:
        assert intent.may_finish_task is finishes

    def test_the_modes_follow_from_the_action(self) -> None:
        assert not writer.SAVE.view_follows_unchanged
        assert Intent(Action.PATCH).view_follows_unchanged and writer.RESTORE.view_follows_unchanged
        assert writer.RESTORE.starts_from_tip and not writer.SAVE.starts_from_tip
        assert Intent(Action.PATCH).takes_over_limit_view and not writer.SAVE.takes_over_limit_view


class TestOutcome:
    # Plain string constants (writer.py: a saving hook loads no enum), each the `outcome` of
    # --json as docs/json.md names it.
    OUTCOMES = (Outcome.SAVED, Outcome.UNCHANGED, Outcome.NOTHING, Outcome.CHECKED_OUT)

    def test_the_json_carries_the_documented_strings(self) -> None:
        assert self.OUTCOMES == ("saved", "unchanged", "nothing", "checked-out")
        names = [name for name in vars(Outcome) if name.isupper()]
        assert [getattr(Outcome, name) for name in names] == list(self.OUTCOMES)
        for outcome in self.OUTCOMES:
            body = Written(outcome, None).as_json()
            assert json.loads(json.dumps(body))["outcome"] == outcome

    def test_actions_and_origins_are_their_strings(self) -> None:
        assert (Action.SAVE, Action.PATCH, Action.RESTORE) == ("save", "patch", "restore")
        assert (Origin.USER, Origin.HOOK) == ("user", "hook")
        assert Intent(Action.SAVE, Origin.HOOK) == writer.HOOK_SAVE != writer.SAVE


class TestNeverArchives:
    def test_a_checkpoints_save_never_archives(self, repo: Repo, cli: Any) -> None:
        one_step_task(cli)
        without_the_step(repo)
        result = cli("checkpoint", "--json")
        assert result.exit_code == 0, result.output
        assert archives(repo) == []
        assert repo.view.exists()

    def test_a_hooks_patch_never_archives(self, repo: Repo, cli: Any) -> None:
        one_step_task(cli)
        change = Patch((FinishStep(1, "checked"),))
        written = patch_uc.patch(Workspace.open(repo.path), change, origin=Origin.HOOK)
        assert written.outcome == Outcome.SAVED and written.archived is None
        assert archives(repo) == []
        assert "step 1" in repo.view.read_text()

    def test_a_restore_that_empties_next_steps_never_archives(self, repo: Repo, cli: Any) -> None:
        assert cli("patch", "--set", "goal=Ship it").exit_code == 0
        before_steps = repo.ref()
        assert before_steps is not None
        assert cli("patch", "--todo", "step 1").exit_code == 0
        result = cli("restore", before_steps, "--json")
        assert result.exit_code == 0, result.output
        body = json.loads(result.stdout)
        assert body["outcome"] == "saved" and body["archived"] is None
        assert archives(repo) == []
        assert "step 1" not in repo.view.read_text()

    def test_a_save_that_had_to_merge_never_archives(self, repo: Repo, cli: Any) -> None:
        """The view was written from a snapshot the tip has moved past (another writer added an
        open issue); the user's save that empties next_steps merges, and so does not archive."""
        one_step_task(cli)
        ours = repo.ref()
        assert ours is not None
        text = repo.git("cat-file", "blob", f"{ours}:STATE.md")
        marker = "## Open issues\n"
        assert marker in text
        theirs_text = text.replace(marker, marker + "- found elsewhere\n", 1)
        blob_id = repo.git("hash-object", "-w", "--stdin", input=theirs_text).strip()
        tree = repo.git("mktree", input=f"100644 blob {blob_id}\tSTATE.md\n").strip()
        message = "elsewhere\n\nAgy-Format: 1\nAgy-Sections: open_issues\nAgy-Phase: IDLE\n"
        theirs = repo.git("commit-tree", tree, "-p", ours, input=message).strip()
        repo.git("update-ref", "refs/agy/state", theirs, ours)
        without_the_step(repo)

        result = cli("save", "--json")
        assert result.exit_code == 0, result.output
        body = json.loads(result.stdout)
        assert body["outcome"] == "saved" and body["merged"] is True
        assert body["archived"] is None
        assert archives(repo) == []
        assert "- found elsewhere" in repo.view.read_text()
