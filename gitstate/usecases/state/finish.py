"""Finishing a task: keep its tip as an archive ref, close the chain, take STATE.md away.

The one step that archives (docs/archive.md), called under the work tree's lock by the document
writer (a save or patch that emptied next_steps) and by `archive`. `refs/agy/state` only ever
moves forward: the closing snapshot (no STATE.md, trailer `Agy-Archived: <ref>`, phase IDLE) is
appended after the task's tip, so pushes stay fast-forward. The brain is told by `remember`,
after the lock is released: the core never waits on the memory slice while it holds the lock.
"""

from __future__ import annotations

import time

from gitstate.document.model import Document, render
from gitstate.errors import CannotWrite, Failure, WorkAtRisk
from gitstate.storage import logs, refs, view
from gitstate.storage.snapshot_text import compose_message
from gitstate.usecases.state import chain

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.usecases.workspace import Workspace

ARCHIVE_PREFIX = "refs/agy/archive/"
ARCHIVED_TRAILER = "Agy-Archived"
SLUG_MAX = 40
# Characters that stay in a slug: a–z, 0–9 and CJK ideographs (docs/phase-and-checkpoints.md); the rest → "-".
# A pattern, compiled on first use by `re`'s cache; `re` itself imported then: every save
# imports this module (an agent hook's too, which loads no `re`), few archive.
_SLUG_DROP = (
    "[^a-z0-9\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef\U00030000-\U0003134f]+"
)


def slug(goal: str) -> str:
    import re

    text = re.sub(_SLUG_DROP, "-", goal.lower()).strip("-")
    return text[:SLUG_MAX].strip("-") or "task"


def goal_of(doc: Document | None) -> str:
    lines = doc.section("goal") if doc is not None else ()
    return lines[0].strip() if lines else ""


def finishes(before: Document | None, after: Document) -> bool:
    """Whether a write from `before` to `after` finishes the task: it empties a next_steps that
    still had steps (a task that never had steps is not finished by a write)."""
    return before is not None and bool(before.steps()) and not after.steps()


def archive_locked(ws: Workspace, task_tip: str, doc: Document) -> str:
    """Archive the task whose tip is `task_tip` (the caller holds the lock); returns the ref.

    Check first, write last: the closing snapshot is built (objects only, no ref) before any
    ref moves, so a chain that cannot take it (a ref at a tag, a missing object) fails with
    nothing written. Then the archive ref is created and the chain moved from `task_tip` to the
    closing snapshot; if that fails (the chain moved, the file system refused), the archive ref
    is taken back. The brain is not told here: the caller calls `remember` once unlocked."""
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
            [*chain.trailers(ws, task_tip, (), None, "IDLE"), (ARCHIVED_TRAILER, ref)],
        )
        closing = store.create_snapshot(None, [task_tip], message)
        if store.create_ref(ref, task_tip, "agy-state: archive"):
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
        view.remove(ws.place)
    return ref


def _close(ws: Workspace, task_tip: str, closing: str, subject: str) -> None:
    """Move the chain from the task's tip to its closing snapshot. A failed swap is retried
    while the chain still holds the task's tip (a lock a killed writer left is cleared on the
    way, docs/format.md); a chain that moved elsewhere is WorkAtRisk."""
    store, state_ref = ws.store, ws.place.state_ref

    def attempt() -> bool | None:
        if store.compare_and_swap(state_ref, task_tip, closing, f"agy-state: {subject}"):
            return True
        if store.tip(state_ref) != task_tip:
            raise WorkAtRisk(
                f"{state_ref} moved while the task was being archived; nothing was archived",
                hint="another program is writing the chain; try again",
            )
        return None

    refs.retry(state_ref, attempt, "nothing was archived")


def _take_back(ws: Workspace, ref: str, expected: str) -> None:
    """Delete the archive ref just created, if it still names `expected` (compare-and-delete).
    Best effort: the failure being raised is what the user must see, not this one's."""
    try:
        ws.store.delete_ref(ref, expected, "agy-state: archive taken back")
    except CannotWrite:
        return  # the archive ref stays; the failure being raised says what went wrong


def remember(ws: Workspace, ref: str) -> None:
    """Tell the brain (when there is one) about the task archived as `ref`, with a session
    block; never fails the archive. Called with the work tree's lock released: the brain has
    its own lock, and a slow brain must not hold up every other writer of this work tree."""
    try:
        doc = ws.snapshot_document(ws.store.tip(ref))
        if doc is None:
            return
        # Imported here: archiving is rare, and the memory slice is not on a save's path.
        from gitstate.memory.usecases.write import record_archived_task

        record_archived_task(
            ws.layout, goal_of(doc), doc.section("done"), doc.section("key_data"), ref
        )
    except Exception as exc:  # the archive is done; a brain that cannot take it is logged
        from gitstate import error_map  # only a failure needs its wording

        logs.append(
            ws.place.agy_dir,
            logs.MEMORY_LOG,
            f"archive {ref}: not recorded in the brain: {error_map.log_text(exc)}",
        )
