"""The agent's phase: read it from the tip, move it by appending a snapshot (docs/phase-and-checkpoints.md).

The rules live in document/phase.py; this module only feeds them the snapshot history and
records the outcome as a snapshot with the tip's tree and a new `Agy-Phase` trailer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from gitstate.document import phase as machine
from gitstate.document.model import parse
from gitstate.errors import InvalidDocument
from gitstate.storage.snapshots import Snapshot
from gitstate.usecases.state import chain
from gitstate.usecases.state.finish import ARCHIVED_TRAILER
from gitstate.usecases.workspace import Workspace


class Changed(NamedTuple):
    old: str
    new: str
    requested: str
    reason: str | None  # why the move landed elsewhere than requested
    snapshot: str | None  # the snapshot that records the move; None when nothing changed

    @property
    def changed(self) -> bool:
        return self.snapshot is not None

    def as_json(self) -> dict[str, object]:
        body: dict[str, object] = {
            "phase": self.new,
            "legal": list(machine.legal(self.new)),
            "changed": self.changed,
        }
        if self.changed:
            body.update(previous=self.old, reason=self.reason, snapshot=self.snapshot)
        return body


def current(ws: Workspace) -> str:
    """The tip's Agy-Phase; IDLE with no snapshot or no trailer."""
    tip = ws.store.tip()
    return ws.store.snapshot(tip).phase if tip else machine.DEFAULT


def shown(ws: Workspace) -> dict[str, Any]:
    """`phase --json` without a move (docs/json.md): the phase and the legal next ones."""
    now = current(ws)
    return {"phase": now, "legal": list(machine.legal(now))}


def change(ws: Workspace, requested: str) -> Changed:
    """Move to `requested` (a name as typed: any case). Refuses an illegal move (exit 1)."""
    wanted = machine.name(requested)
    # Decided and written under one hold of the lock, so the move recorded is the move from
    # the phase the tip really had (two agents moving at once: the second sees the first's).
    with ws.locked():
        tip = ws.store.tip()
        old = ws.store.snapshot(tip).phase if tip else machine.DEFAULT
        decided = machine.move(old, wanted, facts(ws, tip))
        if not decided.changed:
            return Changed(old, old, wanted, None, None)
        subject = f"phase: {old} → {decided.new}"
        if decided.reason:
            subject += f" ({decided.requested} refused: {decided.reason.split(';')[0]})"
        commit = chain.append_locked(ws, subject, phase=decided.new)
    return Changed(old, decided.new, wanted, decided.reason, commit)


def facts(ws: Workspace, tip: str | None) -> Iterator[machine.Fact]:
    """The current task's snapshots as Facts, newest first, read lazily along first parents.

    A step finished in a snapshot whose Done holds a line its first parent's Done lacked (a
    `patch --done`, a hand-edited Done saved, a merge that brought a step finished elsewhere).
    Only snapshots whose Agy-Sections name `done`, and merges, are opened to check. The walk
    ends at a closing snapshot (Agy-Archived): the task began after it.
    """
    for snap in ws.store.walk(tip):
        if ARCHIVED_TRAILER in snap.trailers:
            return
        yield machine.Fact(snap.phase, _finished_a_step(ws, snap))


def _finished_a_step(ws: Workspace, snap: Snapshot) -> bool:
    if "done" not in snap.sections and len(snap.parents) < 2:
        return False
    after = _done_lines(ws, snap.commit)
    before = _done_lines(ws, snap.parents[0]) if snap.parents else frozenset()
    return bool(after - before)


def _done_lines(ws: Workspace, commit: str) -> frozenset[str]:
    data = ws.store.state_bytes(commit)
    if data is None:
        return frozenset()
    try:
        doc = parse(data.decode("utf-8", "replace"))
    except InvalidDocument:
        return frozenset()
    return frozenset(line.strip() for line in doc.section("done"))
