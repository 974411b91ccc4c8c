"""Patching the state: apply a ΔΣ to the view (unsaved edits kept), or the tip, or a template.

Shares the write loop of gitstate.usecases.state.writer, so a patch that loses a race is re-applied
to the new tip rather than dropped.
"""

from __future__ import annotations

from gitstate.document.model import Document, template
from gitstate.document.patch import Patch, apply
from gitstate.usecases.state.chain import now_stamp
from gitstate.usecases.state.writer import Action, Intent, Origin, Produced, Written, write_as
from gitstate.usecases.workspace import Workspace

# Type checkers take this as typing.TYPE_CHECKING (True); writer.py says why Origin is a class
# of string constants.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.usecases.state.writer import OriginName


def patch(
    ws: Workspace,
    change: Patch,
    message: str | None = None,
    allow_secret: bool = False,
    session: str | None = None,
    origin: OriginName = Origin.USER,
) -> Written:
    """Apply a patch to the view (unsaved edits kept), or to the tip, or to a new template.

    A patch that empties next_steps finishes the task, unless it adds steps itself or it is not
    the user's own (`origin`: a hook sent it)."""
    language = ws.new_language()
    described = change.describe()

    def produce(start: Document | None) -> Produced:
        base = start if start is not None else template(language, now_stamp())
        applied = apply(base, change, language)
        return Produced(applied.document, applied.notices, applied.summary or described)

    def subject(changed: tuple[str, ...], summary: str) -> str:
        return message or "patch: " + summary

    intent = Intent(Action.PATCH, origin, adds_steps=adds_steps(change))
    return write_as(ws, intent, produce, subject, allow_secret=allow_secret, session=session)


def adds_steps(change: Patch) -> bool:
    """Whether the patch itself puts steps into next_steps (such a call never archives): each op
    says so of itself (Op.adds_steps)."""
    return any(op.adds_steps for op in change.ops)
