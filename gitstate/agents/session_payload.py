"""The hook payload and answers Claude Code and Gemini CLI share (docs/hooks.md).

Gemini CLI's hook payload is Claude Code's shape plus a `timestamp`: both name `session_id`,
`cwd` and `hook_event_name`, set `stop_hook_active` once a stop hook has kept the agent going,
give SessionStart a `source` (startup, resume, clear or compact), and read the same
`hookSpecificOutput` answer at SessionStart. Each agent module takes these as its own; what
differs (how a stop is blocked, which events are its own) stays in the module.
Standard library only, nothing at import time: it is on the agent-hook path.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def project_dir(payload: dict[str, Any]) -> str | None:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def inject_skipped(payload: dict[str, Any]) -> bool:
    return False  # SessionStart fires once per session start: every call injects


def stop_looping(payload: dict[str, Any]) -> bool:
    return payload.get("stop_hook_active") is True


def memory_key(payload: dict[str, Any]) -> object:
    return None  # inject runs only at a session's start


def after_compaction(payload: dict[str, Any]) -> bool:
    return payload.get("source") == "compact"


def nothing(action: str) -> dict[str, Any]:
    return {}


def inject(text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
