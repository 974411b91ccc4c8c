"""Writing what sync decided: adopt, fast-forward or merge a state chain.

Imported only when a chain must move, so a sync with nothing to merge never loads pygit2.
The merge commit has both parents; its document comes from gitstate.document.merge against
the merge base; an archive on one side meets edits on the other as docs/phase-and-checkpoints.md says.
"""

from __future__ import annotations

from gitstate.document.language import KEYS
from gitstate.document.merge import merge_documents
from gitstate.document.model import MAX_BYTES, Document, render, template
from gitstate.storage import graph, refs
from gitstate.storage.snapshots import Store, compose_message
from gitstate.usecases.state import chain as state
from gitstate.usecases.state.chain import now_stamp
from gitstate.usecases.sync.results import ChainResult
from gitstate.usecases.workspace import Workspace


def _doc(ws: Workspace, commit: str | None) -> Document | None:
    return ws.snapshot_document(commit)


def _newer(store: Store, a: str, b: str) -> bool:
    """Is b's commit newer than a's? (Ties: not newer; the local side wins.)"""
    return graph.commit_time(store, b) > graph.commit_time(store, a)


def _merge_commit(
    ws: Workspace, local: str, remote: str, source: str
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A merge commit of two diverged chains; (commit, conflicts, over_limit)."""

    store = ws.store
    base = graph.merge_base(store, local, remote)
    ours, theirs = _doc(ws, local), _doc(ws, remote)
    theirs_newer = _newer(store, local, remote)
    phase = store.snapshot(remote if theirs_newer else local).phase
    extra: list[tuple[str, str]] = []
    conflicts: tuple[str, ...] = ()
    over: tuple[str, ...] = ()
    result: Document | None
    if ours is None and theirs is None:
        result = None
        archived = store.snapshot(local).trailers.get("Agy-Archived") or store.snapshot(
            remote
        ).trailers.get("Agy-Archived")
        if archived:
            extra.append(("Agy-Archived", archived))
        phase = "IDLE"
    elif ours is None or theirs is None:
        result, extra, phase = _archive_meets_edits(ws, local, remote, base, ours, theirs, phase)
    else:
        base_doc = _doc(ws, base) or template(ours.lang, ours.stamp)
        merged = merge_documents(
            base_doc, ours, theirs, label=remote[:7], stamp=now_stamp(), theirs_newer=theirs_newer
        )
        result, conflicts, over = merged.document, merged.conflicts, merged.over_limit
    changed = (
        tuple(result.changed_keys(ours)) if result is not None and ours is not None else tuple(KEYS)
    )
    trailers = state.trailers(ws, local, changed, None, phase)
    if over:
        trailers.append(("Agy-Conflict", ", ".join(over)))
    trailers += extra
    subject = f"sync: merge {source} ({remote[:7]})"
    if conflicts:
        subject += " with conflicts in " + ", ".join(conflicts)
    data = render(result).encode() if result is not None else None
    if data is not None and len(data) > MAX_BYTES:
        raise _TooBig(len(data))
    commit = store.create_snapshot(data, [local, remote], compose_message(subject, trailers))
    return commit, conflicts, over


class _TooBig(Exception):
    """The merge of two sides, each within the document limit, is not: committing it would
    leave a chain every later save and patch refuses (docs/sync.md)."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _archive_meets_edits(
    ws: Workspace,
    local: str,
    remote: str,
    base: str | None,
    ours: Document | None,
    theirs: Document | None,
    phase: str,
) -> tuple[Document | None, list[tuple[str, str]], str]:
    """One side closed the task, the other side has a document: if that side went on editing
    since the base, the task reopens from it with a note; else it stays closed (docs/phase-and-checkpoints.md)."""

    store = ws.store
    closed_side, open_doc = (local, theirs) if ours is None else (remote, ours)
    assert open_doc is not None
    base_doc = _doc(ws, base)
    archived = store.snapshot(closed_side).trailers.get("Agy-Archived")
    if base_doc is not None and open_doc.same_content(base_doc):
        extra = [("Agy-Archived", archived)] if archived else []
        return None, extra, "IDLE"
    if archived:
        note = (
            f"- (sync) this task was archived elsewhere as {archived}; reopened: work went on here"
        )
        open_doc = open_doc.with_section("open_issues", [*open_doc.section("open_issues"), note])
    return open_doc.with_stamp(now_stamp()), [], phase


def merge_chain(ws: Workspace, local_ref: str, remote: str, source: str) -> ChainResult:
    """Bring the commit `remote` (checked: gitstate.usecases.sync.trust) into `local_ref`:
    adopt, fast-forward, or merge. CAS with retry. The commit, not its ref, is passed: a
    `git fetch` between the check and here must not swap in something unchecked."""
    store = ws.store
    for _attempt in refs.attempts(local_ref, "nothing was merged"):
        local = store.tip(local_ref)
        if local is None:
            if store.compare_and_swap(local_ref, None, remote, f"agy-state sync: adopt {source}"):
                return ChainResult(local_ref, "adopted", remote)
            continue
        if local == remote:
            return ChainResult(local_ref, "up-to-date", local)
        if graph.is_descendant(store, local, remote):
            return ChainResult(local_ref, "ahead", local)
        if graph.is_descendant(store, remote, local):
            if store.compare_and_swap(local_ref, local, remote, f"agy-state sync: {source}"):
                return ChainResult(local_ref, "fast-forward", remote)
            continue
        try:
            commit, conflicts, over = _merge_commit(ws, local, remote, source)
        except _TooBig as big:
            why = (
                f"merged with {local_ref} its STATE.md would be {big.size:,} bytes, over the "
                f"{MAX_BYTES:,}-byte limit; nothing was merged (shorten one side, then sync again)"
            )
            return ChainResult(local_ref, "skipped", local, reason=why)
        if store.compare_and_swap(local_ref, local, commit, f"agy-state sync: merge {source}"):
            return ChainResult(local_ref, "merged", commit, conflicts, over)
    raise AssertionError("refs.attempts raises when they run out")
