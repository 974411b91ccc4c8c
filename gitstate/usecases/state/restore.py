"""Going back to a snapshot: `restore` makes its content the tip, `checkout` only writes the view.

Both refuse to replace unsaved view edits (exit 5) unless forced, and then keep them aside.
"""

from __future__ import annotations

from gitstate.document.model import Document
from gitstate.errors import Failure
from gitstate.storage import abbrev, exclude, view
from gitstate.usecases.state.writer import (
    RESTORE,
    Outcome,
    Produced,
    Written,
    guard_unsaved,
    write_as,
)
from gitstate.usecases.workspace import Workspace


def restore(ws: Workspace, rev: str, force: bool = False) -> Written:
    """A new snapshot equal to an old one; the view follows (unsaved edits refused)."""
    ws.require_workdir()
    commit = ws.store.resolve(rev)
    target = ws.snapshot_document(commit)
    if target is None:
        raise Failure(
            f"snapshot {abbrev.short_id(ws.store, commit)} holds no STATE.md (it closed a task or only changed the phase)"
        )

    def produce(start: Document | None) -> Produced:
        return Produced(target)

    return write_as(
        ws,
        RESTORE,
        produce,
        lambda changed, _summary: f"restore {abbrev.short_id(ws.store, commit)}",
        allow_secret=True,  # the content is already in history
        force=force,
    )


def checkout(ws: Workspace, rev: str | None, force: bool = False) -> Written:
    """Write a snapshot's STATE.md into the work tree; no ref moves."""
    ws.require_workdir()
    with ws.locked():
        commit = ws.store.resolve(rev)
        target = ws.store.state_bytes(commit)
        if target is None:
            raise Failure(
                f"snapshot {abbrev.short_id(ws.store, commit)} holds no STATE.md (it closed a task or only changed the phase)"
            )
        data = ws.view_bytes()
        kept = guard_unsaved(ws, data, target, force, "checkout")
        view.write(ws.layout, target, commit)
        exclude.ensure_view(ws.layout)
        return Written(Outcome.CHECKED_OUT, commit, overwritten=kept)
