"""Which jobs wait to be harvested: the one rule the stop guard, `job pending`, `job list` and
doctor share (docs/jobs.md). Pure: the caller says whether a job's supervisor still lives.

Standard library only and no `typing` at run time: the stop guard reads it on every agent turn.
"""

from __future__ import annotations

ACTIVE = ("queued", "running")
PENDING = ("done", "error", "interrupted")  # finished and worth a look: the stop guard's list

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def pending_state(meta: object, supervisor_alive: Callable[[], bool]) -> str | None:
    """The state in which the job (its meta.json) waits to be harvested, or None when it does
    not: finished and not harvested yet, or active with its supervisor gone, which reads as
    interrupted (whoever reconciles it next settles it)."""
    if not isinstance(meta, dict) or meta.get("harvested_at"):
        return None
    state = meta.get("state")
    if state in ACTIVE:
        if supervisor_alive():
            return None
        state = "interrupted"
    return state if state in PENDING else None


def is_pending(meta: object) -> bool:
    """pending_state() of a reconciled job (an active one has its supervisor)."""
    return pending_state(meta, lambda: True) is not None
