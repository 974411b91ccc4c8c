"""The archives: finish the current task on request, list and find archived tasks, reopen one.

Archiving itself (the archive ref, the closing snapshot) is finish.py's step, which a save or
patch that empties next_steps also takes; nothing is ever deleted (docs/archive.md).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from gitstate.errors import Failure, NotFound, WorkAtRisk
from gitstate.storage import exclude, objects, view
from gitstate.usecases.state import chain, finish
from gitstate.usecases.state.finish import ARCHIVE_PREFIX, goal_of, slug
from gitstate.usecases.state.writer import Written, save
from gitstate.usecases.workspace import Workspace

REOPENED_TRAILER = "Agy-Reopened"
_STAMP_RE = re.compile(r"^(\d{8})-(\d{6})-")


class Archive(NamedTuple):
    ref: str
    goal: str
    tip: str
    at: str  # ISO 8601 UTC, from the ref's name

    def as_json(self) -> dict[str, object]:
        return {"ref": self.ref, "goal": self.goal, "tip": self.tip, "at": self.at}


class Closed(NamedTuple):
    ref: str
    saved: Written | None

    def as_json(self) -> dict[str, object]:
        return {"archived": self.ref, "saved": self.saved.as_json() if self.saved else None}


def archive(ws: Workspace) -> Closed:
    """`archive`: finish the current task on request, from any phase (unsaved edits saved first)."""
    ws.require_workdir()
    saved = None
    if ws.view_bytes() is not None:
        saved = save(ws)  # may itself archive, when the edits emptied next_steps
        if saved.archived:
            return Closed(saved.archived, saved)
    with ws.locked():
        tip = ws.store.tip()
        doc = ws.snapshot_document(tip)
        if tip is None or doc is None:
            raise NotFound("there is no current task to archive", hint="git agy-state archives")
        ref = finish.archive_locked(ws, tip, doc)
    finish.remember(ws, ref)  # the lock released: the brain never holds up this work tree
    return Closed(ref, saved)


def archives(ws: Workspace) -> list[Archive]:
    """Every archived task, newest first."""
    found = []
    for name in objects.ref_names(ws.store, (ARCHIVE_PREFIX,)):
        tip = ws.store.tip(name)
        if tip is None:
            continue
        found.append(Archive(name, goal_of(ws.snapshot_document(tip)), tip, _at(name)))
    return sorted(found, key=lambda a: (a.at, a.ref), reverse=True)


def _at(ref: str) -> str:
    match = _STAMP_RE.match(ref[len(ARCHIVE_PREFIX) :])
    if match is None:
        return ""
    d, t = match.groups()
    return f"{d[:4]}-{d[4:6]}-{d[6:]}T{t[:2]}:{t[2:4]}:{t[4:]}+00:00"


def find(ws: Workspace, name: str | None) -> Archive:
    """The newest archive, or the one named by its ref, its name, or a unique prefix of it."""
    every = archives(ws)
    if not every:
        raise NotFound("there are no archived tasks")
    if name is None:
        return every[0]
    short = name.removeprefix(ARCHIVE_PREFIX).removeprefix("archive/")
    exact = [a for a in every if a.ref == ARCHIVE_PREFIX + short]
    if exact:
        return exact[0]
    matches = [a for a in every if a.ref[len(ARCHIVE_PREFIX) :].startswith(short)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise NotFound(f"no archived task {name!r}", hint="git agy-state archives")
    raise NotFound(f"{len(matches)} archived tasks start with {name!r}; give more of the name")


def reopen(ws: Workspace, name: str | None) -> tuple[Archive, str]:
    """Bring an archived task back as the current one: a new snapshot holding its STATE.md."""
    ws.require_workdir()
    chosen = find(ws, name)
    data = ws.store.state_bytes(chosen.tip)
    if data is None:
        raise Failure(f"{chosen.ref} holds no STATE.md")
    phase = ws.store.snapshot(chosen.tip).phase
    with ws.locked():
        tip = ws.store.tip()
        if ws.snapshot_document(tip) is not None or ws.view_bytes() is not None:
            raise WorkAtRisk(
                "a task is in progress; reopening would replace it",
                hint="finish or archive it first: git agy-state archive",
            )
        commit = chain.append_locked(
            ws,
            f"reopen: {chosen.goal or chosen.ref}",
            state=data,
            phase=phase,
            extra=((REOPENED_TRAILER, chosen.ref),),
        )
        view.write(ws.layout, data, commit)
        exclude.ensure_view(ws.layout)
    return chosen, commit


__all__ = ["Archive", "Closed", "archive", "archives", "find", "reopen", "slug"]
