"""Patching the state: apply a ΔΣ to the view (unsaved edits kept), or the tip, or a template.

Shares the write loop of gitstate.usecases.state.writer, so a patch that loses a race is re-applied
to the new tip rather than dropped.
"""

from __future__ import annotations

from gitstate.document.model import Document, template
from gitstate.document.patch import AddLine, AddStep, Patch, SetSection, apply
from gitstate.usecases.state.writer import Written, now_stamp, write
from gitstate.usecases.workspace import Workspace


def patch(
    ws: Workspace,
    change: Patch,
    message: str | None = None,
    allow_secret: bool = False,
    session: str | None = None,
    from_hook: bool = False,
) -> Written:
    """Apply a patch to the view (unsaved edits kept), or to the tip, or to a new template.

    A patch that empties next_steps finishes the task, unless it adds steps itself or a hook
    sent it (`from_hook`)."""
    language = ws.new_language()
    summary = [change.describe()]

    def produce(start: Document | None) -> tuple[Document, tuple[str, ...]]:
        base = start if start is not None else template(language, now_stamp())
        applied = apply(base, change, language)
        summary[0] = applied.summary or summary[0]
        return applied.document, applied.notices

    return write(
        ws,
        produce,
        subject=lambda changed: message or "patch: " + summary[0],
        allow_secret=allow_secret,
        session=session,
        write_view_when_unchanged=True,
        may_archive=not from_hook and not adds_steps(change),
        over_limit_ok=True,  # a patch may shrink a merge result that broke a limit
    )


def adds_steps(change: Patch) -> bool:
    """Whether the patch itself puts steps into next_steps (such a call never archives)."""
    for op in change.ops:
        if isinstance(op, AddStep):
            return True
        if isinstance(op, SetSection | AddLine) and op.section == "next_steps" and op.text.strip():
            return True
    return False
