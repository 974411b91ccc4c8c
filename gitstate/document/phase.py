"""The agent phase machine (docs/phase-and-checkpoints.md): seven phases, the legal moves, the three-fixes rule.

Pure: plain strings and tuples in, plain values out; no git, no I/O. The use case
(usecases/state/phase.py) reads the snapshot history and turns it into `Fact`s, newest first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from gitstate.errors import Failure, UsageError

PHASES: tuple[str, ...] = (
    "IDLE",
    "PLANNING",
    "CONFIRMING",
    "EXECUTING",
    "AUTO_FIX",
    "BLOCKED",
    "ARCHIVING",
)

# Exactly docs/phase-and-checkpoints.md (the Context Manager's adjacency table), in its order.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "IDLE": ("PLANNING",),
    "PLANNING": ("CONFIRMING", "IDLE"),
    "CONFIRMING": ("EXECUTING", "PLANNING", "IDLE"),
    "EXECUTING": ("AUTO_FIX", "ARCHIVING", "BLOCKED"),
    "AUTO_FIX": ("EXECUTING", "BLOCKED"),
    "BLOCKED": ("EXECUTING", "IDLE"),
    "ARCHIVING": ("IDLE",),
}

DEFAULT = "IDLE"  # a chain with no Agy-Phase trailer, or no snapshot at all
MAX_FIXES = 3


class Fact(NamedTuple):
    """What the three-fixes rule needs to know of one snapshot."""

    phase: str  # its Agy-Phase
    step_finished: bool  # its Done gained a line its parent's Done lacked


class Move(NamedTuple):
    old: str
    new: str  # where the move lands (BLOCKED when the three-fixes rule redirected it)
    requested: str
    reason: str | None  # why it landed elsewhere than requested

    @property
    def changed(self) -> bool:
        return self.old != self.new


def name(text: str) -> str:
    """A phase from user input: case-insensitive, `-` for `_` accepted; else a usage error."""
    wanted = text.strip().upper().replace("-", "_")
    if wanted not in PHASES:
        raise UsageError(f"unknown phase {text!r}", hint="phases: " + ", ".join(PHASES))
    return wanted


def legal(current: str) -> tuple[str, ...]:
    """The phases `current` may move to (an unknown current phase may go where IDLE may)."""
    return TRANSITIONS.get(current, TRANSITIONS[DEFAULT])


def is_legal(old: str, new: str) -> bool:
    return new in legal(old)


def fixes_in_a_row(history: Iterable[Fact]) -> int:
    """Entries into AUTO_FIX since the count last started over; `history` newest first.

    A snapshot entered AUTO_FIX when its phase is AUTO_FIX and its parent's is not. Counting
    stops (and so starts over) at the newest of:
      - a snapshot that finished a step (docs/phase-and-checkpoints.md: "without a step finished in between");
      - an entry into EXECUTING from a phase other than AUTO_FIX: the user confirmed a plan
        (CONFIRMING → EXECUTING) or a person unblocked the agent (BLOCKED → EXECUTING), so the
        agent gets three fresh tries;
      - the end of `history` (the caller stops at the start of the task).
    `history` is read lazily and only as far as needed.
    """
    count = 0
    facts = iter(history)
    newer = next(facts, None)
    while newer is not None:
        if newer.step_finished:
            break
        older = next(facts, None)
        before = older.phase if older is not None else DEFAULT
        if newer.phase == "AUTO_FIX" and before != "AUTO_FIX":
            count += 1
        elif newer.phase == "EXECUTING" and before not in ("EXECUTING", "AUTO_FIX"):
            break
        newer = older
    return count


def move(old: str, requested: str, history: Iterable[Fact] = ()) -> Move:
    """Where a request lands from `old`; Failure (exit 1) naming the legal moves if illegal.

    The same phase is not a move: it lands where it is (`changed` is False). A request for
    AUTO_FIX after MAX_FIXES entries in a row lands in BLOCKED, with the reason.
    """
    if requested == old:
        return Move(old, old, requested, None)
    if not is_legal(old, requested):
        raise Failure(
            f"cannot move from {old} to {requested}",
            hint=f"from {old} the legal moves are: " + ", ".join(legal(old)),
        )
    if requested == "AUTO_FIX":
        fixes = fixes_in_a_row(history)
        if fixes >= MAX_FIXES:
            reason = (
                f"{fixes} fixes in a row without a step finished; a person has to look "
                "(then: phase EXECUTING, or phase IDLE)"
            )
            return Move(old, "BLOCKED", requested, reason)
    return Move(old, requested, requested, None)
