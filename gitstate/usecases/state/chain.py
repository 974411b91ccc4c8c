"""The state chain: a snapshot committed on the tip and the ref moved by compare-and-swap.

The lowest step every writer shares (the document writer, a phase change, a closing snapshot,
a reopen): build the commit on the tip it read, move the ref only if it still names that tip,
and say when it did not, so the caller rebuilds on the new tip. Also what each snapshot
carries: its Agy-* trailers (docs/format.md). This module reads no view and takes no lock.
"""

from __future__ import annotations

import time

from gitstate.storage import refs
from gitstate.storage.refs import MAX_ATTEMPTS
from gitstate.storage.snapshot_text import FORMAT_VERSION, compose_message

# Type checkers take this as typing.TYPE_CHECKING (True); at run time neither typing nor pygit2
# is loaded: the agent hooks' save comes through here (storage/loose.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.storage.snapshots import Store
    from gitstate.usecases.workspace import Workspace

TASK_BASE = "Agy-Task-Base"  # the HEAD the current task began at ("none": before any commit)
KEEP_TREE = object()  # append(): the new snapshot holds the tip's tree as it is


def now_stamp() -> str:
    """The `Updated` stamp a written document carries."""
    return time.strftime("%Y-%m-%d %H:%M")


def one_line(text: str) -> str:
    """A commit subject: one line, whatever was passed to -m (a newline could start a paragraph
    that readers would take for trailers)."""
    return " ".join(text.split())


def commit_on(
    ws: Workspace,
    tip: str | None,
    state: bytes | object | None,
    message: str,
    subject: str,
    ref: str | None = None,
) -> str | None:
    """One attempt: a snapshot on `tip` holding `state` (bytes, None: no STATE.md, KEEP_TREE:
    the tip's tree), the ref moved from `tip` to it. None when the ref no longer names `tip`:
    the caller rebuilds on the new tip, never overwriting it."""
    store = ws.store
    parents = [tip] if tip else []
    if state is KEEP_TREE:
        commit = store.commit_tree(store.tree_of(tip) if tip else None, parents, message)
    else:
        assert state is None or isinstance(state, bytes)
        commit = store.create_snapshot(state, parents, message)
    target = ref or ws.place.state_ref
    if store.compare_and_swap(target, tip, commit, f"agy-state: {subject}"):
        return commit
    return None


def append(
    ws: Workspace,
    subject: str,
    state: bytes | object | None = KEEP_TREE,
    phase: str | None = None,
    extra: tuple[tuple[str, str], ...] = (),
    ref: str | None = None,
) -> str:
    """Append a snapshot that is not a document edit: a phase change (the tip's tree, a new
    Agy-Phase), or a closing snapshot (no STATE.md). Under the lock, compare-and-swap, retried.
    The view is not touched. Returns the new snapshot id."""
    with ws.locked():
        return append_locked(ws, subject, state, phase, extra, ref)


def append_locked(
    ws: Workspace,
    subject: str,
    state: bytes | object | None = KEEP_TREE,
    phase: str | None = None,
    extra: tuple[tuple[str, str], ...] = (),
    ref: str | None = None,
) -> str:
    """append() for a caller that already holds the work tree's lock."""
    target = ref or ws.place.state_ref

    def attempt() -> str | None:
        tip = ws.store.tip(target)
        message = compose_message(subject, trailers(ws, tip, (), None, phase) + list(extra))
        return commit_on(ws, tip, state, message, subject, target)

    return refs.retry(target, attempt)


def trailers(
    ws: Workspace,
    tip: str | None,
    changed: tuple[str, ...],
    session: str | None,
    phase: str | None = None,
) -> list[tuple[str, str]]:
    """The Agy-* trailers of a snapshot built on `tip` (the phase carried from it unless given)."""
    head, branch = ws.store.head_info()
    if phase is None:
        phase = ws.store.snapshot(tip).phase if tip else "IDLE"
    found = [("Agy-Format", FORMAT_VERSION), ("Agy-Sections", ", ".join(changed) or "none")]
    if head:
        found.append(("Agy-Head", head))
    if branch:
        found.append(("Agy-Branch", branch))
    found.append(("Agy-Phase", phase))
    found.append((TASK_BASE, _carried_task_base(ws.store, tip, head)))
    if session:
        found.append(("Agy-Session", session))
    return found


def _carried_task_base(store: Store, tip: str | None, head: str | None) -> str:
    """The task base a snapshot on `tip` carries: the tip's, or HEAD when a task starts here.

    Carried forward on every snapshot so that post-commit reads it off the tip in O(1) instead of
    walking the task back to its first snapshot (docs/hooks.md: the hooks cost the same at 10 and
    at 100,000 snapshots).
    """
    if tip is None or store.state_blob(tip) is None:
        return head or "none"
    return task_base(store, tip) or "none"


def task_base(store: Store, tip: str) -> str | None:
    """The HEAD recorded when the task that `tip` belongs to began (None: before any commit).

    Read from the tip's trailer; a chain written before the trailer existed is walked once (the
    next snapshot carries the answer).
    """
    recorded = store.snapshot(tip).trailers.get(TASK_BASE)
    if recorded:
        return None if recorded == "none" else recorded
    first = None
    for snap in store.walk(tip):
        if store.state_blob(snap.commit) is None:
            break  # a closing snapshot: the task began after it
        recorded = snap.trailers.get(TASK_BASE)
        if recorded:
            return None if recorded == "none" else recorded
        first = snap
    return first.head if first is not None else None


__all__ = [
    "KEEP_TREE",
    "MAX_ATTEMPTS",
    "TASK_BASE",
    "append",
    "append_locked",
    "commit_on",
    "now_stamp",
    "one_line",
    "task_base",
    "trailers",
]
