"""agy's hook payload and answers (docs/hooks.md): what a hook process needs of agy.

PreInvocation (inject, on every model call of a turn: only `invocationNum` 1 injects) and Stop
(stop guard; `executionNum` over 1 means agy already goes on because of us). The payload names
`conversationId` and `workspacePaths`. On the agent-hook fast path: standard library only,
nothing loaded at import time; the plugin, install and job code is agy.py.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "agy"
SESSION_KEY = "conversationId"
PROJECT_ENV = "AGY_PROJECT_DIR"


# ---- the hook payload and the answers ---------------------------------------------------------


def _number(payload: dict[str, Any], key: str) -> int | None:
    value = payload.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def claims(payload: dict[str, Any]) -> int:
    """agy's fields are its own: sure (2)."""
    if (
        "conversationId" in payload
        or "workspacePaths" in payload
        or isinstance(payload.get("invocationNum"), int)
        or isinstance(payload.get("executionNum"), int)
    ):
        return 2
    return 0


def project_dir(payload: dict[str, Any]) -> str | None:
    paths = payload.get("workspacePaths")
    if isinstance(paths, list) and paths and isinstance(paths[0], str) and paths[0]:
        return paths[0].removeprefix("file://")
    return None


def inject_skipped(payload: dict[str, Any]) -> bool:
    return (_number(payload, "invocationNum") or 1) > 1  # only a turn's first model call


def stop_looping(payload: dict[str, Any]) -> bool:
    return (_number(payload, "executionNum") or 0) > 1


def memory_key(payload: dict[str, Any]) -> object:
    # Every turn's first invocation looks alike: the memory core goes once per conversation.
    return payload.get("conversationId")


def after_compaction(payload: dict[str, Any]) -> bool:
    return False  # agy's PreInvocation names no compaction: a turn is a turn


def nothing(action: str) -> dict[str, Any]:
    return {"injectSteps": []} if action == "inject" else {"decision": "allow"}


def inject(text: str) -> dict[str, Any]:
    return {"injectSteps": [{"ephemeralMessage": text}]}


def block(reason: str) -> dict[str, Any]:
    return {"decision": "continue", "reason": reason}
