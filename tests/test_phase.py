"""The agent phase machine: the pure table and the three-fixes rule, then `phase` end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import Repo
from support import run_tool

from gitstate.document import phase as machine
from gitstate.document.phase import Fact
from gitstate.errors import EXIT_FAILURE, EXIT_USAGE, Failure, UsageError

DESIGN_TABLE = {
    ("IDLE", "PLANNING"),
    ("PLANNING", "CONFIRMING"),
    ("PLANNING", "IDLE"),
    ("CONFIRMING", "EXECUTING"),
    ("CONFIRMING", "PLANNING"),
    ("CONFIRMING", "IDLE"),
    ("EXECUTING", "AUTO_FIX"),
    ("EXECUTING", "ARCHIVING"),
    ("EXECUTING", "BLOCKED"),
    ("AUTO_FIX", "EXECUTING"),
    ("AUTO_FIX", "BLOCKED"),
    ("BLOCKED", "EXECUTING"),
    ("BLOCKED", "IDLE"),
    ("ARCHIVING", "IDLE"),
}
ALL_MOVES = [(a, b) for a in machine.PHASES for b in machine.PHASES if a != b]


def js(result: Any) -> Any:
    return json.loads(result.stdout)


# ---- the table --------------------------------------------------------------------------------


def test_seven_phases() -> None:
    assert machine.PHASES == (
        "IDLE",
        "PLANNING",
        "CONFIRMING",
        "EXECUTING",
        "AUTO_FIX",
        "BLOCKED",
        "ARCHIVING",
    )


def test_table_is_exactly_design_section_6() -> None:
    table = {(a, b) for a, targets in machine.TRANSITIONS.items() for b in targets}
    assert table == DESIGN_TABLE
    assert {a for a, _ in ALL_MOVES} == set(machine.TRANSITIONS)


@pytest.mark.parametrize(("old", "new"), sorted(DESIGN_TABLE))
def test_every_legal_move_lands_where_asked(old: str, new: str) -> None:
    assert machine.is_legal(old, new)
    assert machine.move(old, new) == machine.Move(old, new, new, None)


@pytest.mark.parametrize(("old", "new"), [m for m in ALL_MOVES if m not in DESIGN_TABLE])
def test_every_illegal_move_is_refused_naming_the_legal_ones(old: str, new: str) -> None:
    assert not machine.is_legal(old, new)
    with pytest.raises(Failure) as caught:
        machine.move(old, new)
    assert caught.value.exit_code == EXIT_FAILURE
    assert f"{old} to {new}" in caught.value.message
    assert caught.value.hint is not None
    assert all(target in caught.value.hint for target in machine.legal(old))


def test_executing_may_not_skip_archiving() -> None:
    # The one illegal move the Context Manager names: EXECUTING → IDLE must pass ARCHIVING.
    assert machine.legal("EXECUTING") == ("AUTO_FIX", "ARCHIVING", "BLOCKED")
    with pytest.raises(Failure):
        machine.move("EXECUTING", "IDLE")


@pytest.mark.parametrize("phase", machine.PHASES)
def test_same_phase_is_no_move(phase: str) -> None:
    result = machine.move(phase, phase)
    assert not result.changed and result.new == phase and result.reason is None


@pytest.mark.parametrize(
    ("typed", "wanted"),
    [
        ("auto_fix", "AUTO_FIX"),
        ("Auto-Fix", "AUTO_FIX"),
        (" idle ", "IDLE"),
        ("BLOCKED", "BLOCKED"),
    ],
)
def test_names_are_case_insensitive(typed: str, wanted: str) -> None:
    assert machine.name(typed) == wanted


@pytest.mark.parametrize("typed", ["", "DONE", "auto fix", "EXECUTE"])
def test_unknown_name_is_a_usage_error(typed: str) -> None:
    with pytest.raises(UsageError) as caught:
        machine.name(typed)
    assert caught.value.exit_code == EXIT_USAGE
    assert caught.value.hint and "AUTO_FIX" in caught.value.hint


def test_unknown_current_phase_moves_as_idle() -> None:
    # A trailer written by some newer tool: never a crash, start over from IDLE's moves.
    assert machine.legal("REVIEWING") == ("PLANNING",)


# ---- the three-fixes rule ---------------------------------------------------------------------


def chain(*phases: str, finished: tuple[int, ...] = ()) -> list[Fact]:
    """Facts newest first from phases oldest first; `finished` indexes (oldest first)."""
    facts = [Fact(p, i in finished) for i, p in enumerate(phases)]
    return facts[::-1]


START = ("PLANNING", "CONFIRMING", "EXECUTING")
ONE_FIX = ("AUTO_FIX", "EXECUTING")


def test_counts_entries_into_auto_fix() -> None:
    assert machine.fixes_in_a_row(chain(*START)) == 0
    assert machine.fixes_in_a_row(chain(*START, *ONE_FIX)) == 1
    assert machine.fixes_in_a_row(chain(*START, *ONE_FIX * 3)) == 3
    assert machine.fixes_in_a_row(chain(*START, *ONE_FIX * 2, "AUTO_FIX")) == 3


def test_staying_in_auto_fix_is_one_entry() -> None:
    # Snapshots saved while in AUTO_FIX carry the phase along; that is not a new entry.
    assert machine.fixes_in_a_row(chain(*START, "AUTO_FIX", "AUTO_FIX", "AUTO_FIX")) == 1


def test_a_finished_step_starts_the_count_over() -> None:
    phases = (*START, *ONE_FIX * 2, "EXECUTING", *ONE_FIX)
    finished_at = len(START) + 4  # the EXECUTING snapshot that finished a step
    assert machine.fixes_in_a_row(chain(*phases, finished=(finished_at,))) == 1
    assert machine.fixes_in_a_row(chain(*phases)) == 3


def test_a_person_unblocking_starts_the_count_over() -> None:
    blocked = (*START, *ONE_FIX * 3, "BLOCKED", "EXECUTING")
    assert machine.fixes_in_a_row(chain(*blocked)) == 0
    assert machine.fixes_in_a_row(chain(*blocked, *ONE_FIX)) == 1


def test_a_new_plan_starts_the_count_over() -> None:
    phases = (*START, *ONE_FIX * 2, "BLOCKED", "IDLE", *START, *ONE_FIX)
    assert machine.fixes_in_a_row(chain(*phases)) == 1


def test_history_is_read_only_as_far_as_needed() -> None:
    seen: list[Fact] = []

    def lazily() -> Any:
        for fact in chain("PLANNING", *START, *ONE_FIX, "EXECUTING", *ONE_FIX, finished=(6,)):
            seen.append(fact)
            yield fact

    assert machine.fixes_in_a_row(lazily()) == 1
    assert len(seen) == 3  # EXECUTING, AUTO_FIX, then the snapshot that finished a step


def test_fourth_request_for_auto_fix_lands_in_blocked_with_reason() -> None:
    history = chain(*START, *ONE_FIX * 3)
    result = machine.move("EXECUTING", "AUTO_FIX", history)
    assert (result.old, result.new, result.requested) == ("EXECUTING", "BLOCKED", "AUTO_FIX")
    assert result.reason and "3 fixes in a row without a step finished" in result.reason


def test_third_request_is_still_allowed() -> None:
    result = machine.move("EXECUTING", "AUTO_FIX", chain(*START, *ONE_FIX * 2))
    assert result.new == "AUTO_FIX" and result.reason is None


def test_rule_only_touches_auto_fix() -> None:
    history = chain(*START, *ONE_FIX * 3)
    assert machine.move("EXECUTING", "ARCHIVING", history).new == "ARCHIVING"


# ---- the command ------------------------------------------------------------------------------


def walk(cli: Any, *phases: str) -> None:
    for name in phases:
        result = cli("phase", name)
        assert result.exit_code == 0, result.stderr


def start_task(cli: Any) -> None:
    result = cli("patch", "--set", "goal=Retry", "--todo", "one", "--todo", "two", "--start", "1")
    assert result.exit_code == 0, result.stderr


class TestPhaseCommand:
    def test_shows_idle_and_the_legal_moves_with_no_snapshot(self, repo: Repo, cli: Any) -> None:
        result = cli("phase")
        assert result.exit_code == 0
        assert result.stdout == "phase: IDLE\nlegal next: PLANNING\n"
        assert js(cli("phase", "--json")) == {"phase": "IDLE", "legal": ["PLANNING"]}
        assert repo.ref() is None  # reading never writes

    def test_move_appends_a_snapshot_with_the_same_tree(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        before = repo.ref()
        result = cli("phase", "planning")
        assert result.exit_code == 0, result.stderr
        assert result.stdout == "State: IDLE → PLANNING\n"
        tip = repo.ref()
        assert tip != before
        assert repo.git("rev-parse", f"{tip}^") == f"{before}\n"
        assert repo.git("rev-parse", f"{tip}^{{tree}}") == repo.git(
            "rev-parse", f"{before}^{{tree}}"
        )
        trailers = repo.git("log", "-1", "--format=%(trailers:only,unfold)", "refs/agy/state")
        assert "Agy-Phase: PLANNING" in trailers
        assert "Agy-Sections: none" in trailers
        assert repo.git("log", "-1", "--format=%s", "refs/agy/state") == (
            "phase: IDLE → PLANNING\n"
        )

    def test_the_view_is_left_alone(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        text = repo.view.read_text()
        walk(cli, "PLANNING")
        assert repo.view.read_text() == text
        assert js(cli("status", "--json"))["view"] == "clean"
        assert js(cli("status", "--json"))["phase"] == "PLANNING"

    def test_illegal_move_exits_1_naming_the_legal_ones(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        before = repo.ref()
        result = cli("phase", "EXECUTING")
        assert result.exit_code == 1
        assert result.stderr == (
            "error: cannot move from IDLE to EXECUTING\n"
            "hint: from IDLE the legal moves are: PLANNING\n"
        )
        assert repo.ref() == before

    def test_illegal_move_as_json(self, repo: Repo, cli: Any) -> None:
        walk(cli, "PLANNING")
        result = cli("phase", "archiving", "--json")
        assert result.exit_code == 1
        assert js(result)["code"] == 1
        assert "CONFIRMING, IDLE" in js(result)["hint"]

    def test_unknown_phase_is_a_usage_error(self, repo: Repo, cli: Any) -> None:
        result = cli("phase", "DONE")
        assert result.exit_code == 64
        assert "unknown phase 'DONE'" in result.stderr
        assert repo.ref() is None

    def test_same_phase_is_a_no_op_that_says_so(self, repo: Repo, cli: Any) -> None:
        walk(cli, "PLANNING")
        before = repo.ref()
        result = cli("phase", "Planning")
        assert result.exit_code == 0
        assert result.stdout == "State: already PLANNING (nothing changed)\n"
        assert repo.ref() == before
        body = js(cli("phase", "planning", "--json"))
        assert body == {"phase": "PLANNING", "legal": ["CONFIRMING", "IDLE"], "changed": False}

    def test_json_of_a_move(self, repo: Repo, cli: Any) -> None:
        walk(cli, "PLANNING")
        body = js(cli("phase", "confirming", "--json"))
        assert body["phase"] == "CONFIRMING"
        assert body["legal"] == ["EXECUTING", "PLANNING", "IDLE"]
        assert body["previous"] == "PLANNING"
        assert body["reason"] is None
        assert body["changed"] is True
        assert body["snapshot"] == repo.ref()

    def test_phase_survives_a_following_patch(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        walk(cli, "PLANNING", "CONFIRMING", "EXECUTING")
        assert cli("patch", "--add", "open_issues=flaky CI").exit_code == 0
        trailers = repo.git("log", "-1", "--format=%(trailers:only,unfold)", "refs/agy/state")
        assert "Agy-Sections: open_issues" in trailers
        assert "Agy-Phase: EXECUTING" in trailers
        assert js(cli("phase", "--json"))["phase"] == "EXECUTING"

    def test_first_move_before_any_state(self, repo: Repo, cli: Any) -> None:
        walk(cli, "PLANNING")
        assert repo.git("ls-tree", "refs/agy/state") == ""  # nothing to carry yet
        start_task(cli)
        assert js(cli("phase", "--json"))["phase"] == "PLANNING"
        assert repo.git("rev-list", "--count", "refs/agy/state") == "2\n"

    def test_three_fixes_then_blocked(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        walk(cli, "PLANNING", "CONFIRMING", "EXECUTING")
        for _ in range(3):
            walk(cli, "AUTO_FIX")
            cli("patch", "--add", "failed_attempts=another try")  # saves, no step finished
            walk(cli, "EXECUTING")
        result = cli("phase", "AUTO_FIX")
        assert result.exit_code == 0
        assert result.stdout.splitlines() == [
            "State: EXECUTING → BLOCKED",
            "BLOCKED instead of AUTO_FIX: 3 fixes in a row without a step finished; "
            "a person has to look (then: phase EXECUTING, or phase IDLE)",
        ]
        trailers = repo.git("log", "-1", "--format=%(trailers:only,unfold)", "refs/agy/state")
        assert "Agy-Phase: BLOCKED" in trailers
        subject = repo.git("log", "-1", "--format=%s", "refs/agy/state")
        assert subject.startswith("phase: EXECUTING → BLOCKED (AUTO_FIX refused: 3 fixes")
        # A person unblocks: three fresh tries.
        walk(cli, "EXECUTING")
        assert js(cli("phase", "AUTO_FIX", "--json"))["phase"] == "AUTO_FIX"

    def test_three_fixes_json_carries_the_reason(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        walk(cli, "PLANNING", "CONFIRMING", "EXECUTING", *("AUTO_FIX", "EXECUTING") * 3)
        body = js(cli("phase", "auto_fix", "--json"))
        assert body["phase"] == "BLOCKED" and body["previous"] == "EXECUTING"
        assert "3 fixes in a row" in body["reason"]
        assert body["legal"] == ["EXECUTING", "IDLE"]

    def test_a_finished_step_gives_three_more_fixes(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        walk(cli, "PLANNING", "CONFIRMING", "EXECUTING", *("AUTO_FIX", "EXECUTING") * 3)
        assert cli("patch", "--done", "1", "--verify", "pytest passes").exit_code == 0
        assert js(cli("phase", "AUTO_FIX", "--json"))["phase"] == "AUTO_FIX"

    def test_a_done_line_removed_is_not_a_step_finished(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        assert cli("patch", "--done", "1", "--verify", "ok").exit_code == 0
        walk(cli, "PLANNING", "CONFIRMING", "EXECUTING", *("AUTO_FIX", "EXECUTING") * 3)
        assert cli("patch", "--set", "done=").exit_code == 0  # Done lost a line
        assert js(cli("phase", "AUTO_FIX", "--json"))["phase"] == "BLOCKED"

    def test_works_in_a_subprocess(self, repo: Repo) -> None:
        proc = run_tool("phase", "planning", cwd=repo.path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "State: IDLE → PLANNING\n"

    def test_racing_moves_are_decided_on_the_phase_the_tip_really_has(
        self, repo: Repo, cli: Any
    ) -> None:
        start_task(cli)
        walk(cli, "PLANNING", "CONFIRMING", "EXECUTING")
        # From EXECUTING both are legal; from either result the other is not.
        wanted = ["AUTO_FIX", "ARCHIVING"] * 3
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "gitstate", "phase", name],
                cwd=repo.path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=dict(os.environ),
            )
            for name in wanted
        ]
        codes = [p.wait(timeout=60) for p in procs]
        for p in procs:
            assert p.stdout is not None and p.stderr is not None
            p.stdout.close()
            p.stderr.close()
        # The first to get the lock moves; its twins find nothing to do; the others are
        # refused, since from AUTO_FIX there is no ARCHIVING and from ARCHIVING no AUTO_FIX.
        assert sorted(codes) == [0, 0, 0, 1, 1, 1]
        winners = {name for name, code in zip(wanted, codes, strict=True) if code == 0}
        assert len(winners) == 1
        assert js(cli("phase", "--json"))["phase"] == winners.pop()
        # Every recorded move is legal from its parent's phase, as its subject says.
        log = repo.git("log", "--first-parent", "--format=%H %s", "refs/agy/state")
        for line in log.splitlines():
            commit, subject = line.split(" ", 1)
            if not subject.startswith("phase: "):
                continue
            old, new = subject.removeprefix("phase: ").split(" (")[0].split(" → ")
            parent = repo.git(
                "log", "-1", "--format=%(trailers:key=Agy-Phase,valueonly)", f"{commit}^"
            )
            assert parent.strip() == old
            assert (old, new) in DESIGN_TABLE
