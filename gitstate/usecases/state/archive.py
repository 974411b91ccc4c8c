"""Finishing a task: keep its tip as an archive ref, close the chain, take STATE.md away.

`refs/agy/state` only ever moves forward: the closing snapshot (no STATE.md, trailer
`Agy-Archived: <ref>`, phase IDLE) is appended after the task's tip, so pushes stay
fast-forward, and the next task starts after it. Nothing is deleted; `reopen` brings a task back.
"""

from __future__ import annotations

import re
import time
from typing import NamedTuple

from gitstate.document.model import Document, render
from gitstate.errors import Failure, NotFound, WorkAtRisk
from gitstate.storage import view
from gitstate.storage.snapshots import compose_message
from gitstate.usecases.state import writer as state
from gitstate.usecases.workspace import Workspace

ARCHIVE_PREFIX = "refs/agy/archive/"
ARCHIVED_TRAILER = "Agy-Archived"
REOPENED_TRAILER = "Agy-Reopened"
SLUG_MAX = 40
# Characters that stay in a slug: a–z, 0–9 and CJK ideographs (docs/phase-and-checkpoints.md); the rest → "-".
_SLUG_DROP = re.compile(
    "[^a-z0-9\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef\U00030000-\U0003134f]+"
)
_STAMP_RE = re.compile(r"^(\d{8})-(\d{6})-")


class Archive(NamedTuple):
    ref: str
    goal: str
    tip: str
    at: str  # ISO 8601 UTC, from the ref's name

    def as_json(self) -> dict[str, object]:
        return {"ref": self.ref, "goal": self.goal, "tip": self.tip, "at": self.at}


def slug(goal: str) -> str:
    text = _SLUG_DROP.sub("-", goal.lower()).strip("-")
    return text[:SLUG_MAX].strip("-") or "task"


def goal_of(doc: Document | None) -> str:
    lines = doc.section("goal") if doc is not None else ()
    return lines[0].strip() if lines else ""


def archive_locked(ws: Workspace, task_tip: str, doc: Document) -> str:
    """Archive the task whose tip is `task_tip` (the caller holds the lock); returns the ref.

    Check first, write last: the closing snapshot is built (objects only, no ref) before any
    ref moves, so a chain that cannot take it (a ref at a tag, a missing object) fails with
    nothing written. Then the archive ref is created and the chain moved from `task_tip` to the
    closing snapshot; if that fails (the chain moved, the file system refused), the archive ref
    is taken back."""
    store = ws.store
    name_slug = slug(goal_of(doc))
    goal = goal_of(doc) or "task"
    subject = f"archive: {goal}"
    now = int(time.time())
    for offset in range(3600):  # a clash moves to the next free second, never overwrites
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now + offset))
        ref = f"{ARCHIVE_PREFIX}{stamp}-{name_slug}"
        if store.tip(ref) is not None:
            continue
        message = compose_message(
            subject,
            [*state.trailers(ws, task_tip, (), None, "IDLE"), (ARCHIVED_TRAILER, ref)],
        )
        closing = store.create_snapshot(None, [task_tip], message)
        if store.compare_and_swap(ref, None, task_tip, "agy-state: archive"):
            break
        if store.tip(ref) is None:  # not a clash: git would not create it
            raise Failure(f"cannot create {ref}", hint="git agy-state doctor")
    else:
        raise Failure("no free archive name in the next hour")
    try:
        _close(ws, task_tip, closing, subject)
    except BaseException:
        _take_back(ws, ref, task_tip)
        raise
    # The view leaves the work tree only if it still holds what was archived.
    if ws.view_bytes() == render(doc).encode():
        view.remove(ws.layout)
    _remember(ws, doc, ref)
    return ref


def _close(ws: Workspace, task_tip: str, closing: str, subject: str) -> None:
    """Move the chain from the task's tip to its closing snapshot. A failed swap is retried
    while the chain still holds the task's tip (a lock a killed writer left is cleared on the
    way, docs/format.md); a chain that moved elsewhere is WorkAtRisk."""
    store, state_ref = ws.store, ws.layout.state_ref
    for _attempt in range(state.MAX_ATTEMPTS):
        if store.compare_and_swap(state_ref, task_tip, closing, f"agy-state: {subject}"):
            return
        if store.tip(state_ref) != task_tip:
            break
    raise WorkAtRisk(
        f"{state_ref} moved while the task was being archived; nothing was archived",
        hint="another program is writing the chain; try again",
    )


def _take_back(ws: Workspace, ref: str, expected: str) -> None:
    """Delete the archive ref just created, if it still names `expected` (compare-and-delete)."""
    from gitstate.storage import gitcli

    gitcli.run(ws.layout, "update-ref", "-m", "agy-state: archive taken back", "-d", ref, expected)


def _remember(ws: Workspace, doc: Document, ref: str) -> None:
    """Tell the brain (when there is one) with a session block; never fails the archive."""
    try:
        from gitstate.memory.usecases.write import record_archived_task

        record_archived_task(
            ws.layout, goal_of(doc), doc.section("done"), doc.section("key_data"), ref
        )
    except Exception as exc:  # the archive is done; a brain that cannot take it is logged
        try:
            ws.layout.agy_dir.mkdir(parents=True, exist_ok=True)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            with open(ws.layout.agy_dir / "memory.log", "a", encoding="utf-8") as log:
                log.write(f"{stamp} archive {ref}: not recorded in the brain: {exc!r}\n")
        except OSError:
            pass


class Closed(NamedTuple):
    ref: str
    saved: state.Written | None

    def as_json(self) -> dict[str, object]:
        return {"archived": self.ref, "saved": self.saved.as_json() if self.saved else None}


def archive(ws: Workspace) -> Closed:
    """`archive`: finish the current task on request, from any phase (unsaved edits saved first)."""
    ws.require_workdir()
    saved = None
    if ws.view_bytes() is not None:
        saved = state.save(ws)  # may itself archive, when the edits emptied next_steps
        if saved.archived:
            return Closed(saved.archived, saved)
    with ws.locked():
        tip = ws.store.tip()
        doc = ws.snapshot_document(tip)
        if tip is None or doc is None:
            raise NotFound("there is no current task to archive", hint="git agy-state archives")
        return Closed(archive_locked(ws, tip, doc), saved)


def archives(ws: Workspace) -> list[Archive]:
    """Every archived task, newest first."""
    found = []
    for name in ws.store.repo.references:
        if not name.startswith(ARCHIVE_PREFIX):
            continue
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
        commit = state.append_locked(
            ws,
            f"reopen: {chosen.goal or chosen.ref}",
            state=data,
            phase=phase,
            extra=((REOPENED_TRAILER, chosen.ref),),
        )
        view.write(ws.layout, data, commit)
    return chosen, commit
