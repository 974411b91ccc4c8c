"""The queue's order: FIFO by `queued_at` (microseconds), ties broken by `queue_seq`, the
submission counter, then the id (docs/jobs.md, "The queue"). Pure; standard library only."""

from __future__ import annotations

from typing import Any


def queue_key(meta: dict[str, Any]) -> tuple[str, int, str]:
    return (
        meta.get("queued_at") or meta.get("created_at") or "",
        meta.get("queue_seq") or 0,
        meta["id"],
    )
