"""Gemini CLI's hook payload and answers (docs/hooks.md): what a hook process needs of it.

The payload is Claude Code's shape plus a `timestamp`, with Gemini's own event names
(session_payload.py); a stop is blocked with `decision: "deny"`, which forces a retry turn. On
the agent-hook fast path: standard library only; the plugin and install code is gemini.py.
"""

from __future__ import annotations

from gitstate.agents.session_payload import after_compaction as after_compaction
from gitstate.agents.session_payload import inject as inject
from gitstate.agents.session_payload import inject_skipped as inject_skipped
from gitstate.agents.session_payload import memory_key as memory_key
from gitstate.agents.session_payload import nothing as nothing
from gitstate.agents.session_payload import project_dir as project_dir
from gitstate.agents.session_payload import stop_looping as stop_looping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "gemini"
SESSION_KEY = "session_id"
PROJECT_ENV = "GEMINI_PROJECT_DIR"
# Events only Gemini CLI sends (Claude Code has SessionStart too, but without a timestamp).
OWN_EVENTS = ("AfterAgent", "PreCompress", "BeforeAgent", "AfterModel", "SessionEnd")


def claims(payload: dict[str, Any]) -> int:
    event = payload.get("hook_event_name")
    if event in OWN_EVENTS:
        return 2
    if event == "SessionStart" and "timestamp" in payload:
        return 2  # Gemini's base payload carries a timestamp; Claude's does not
    return 0


def block(reason: str) -> dict[str, Any]:
    return {"decision": "deny", "reason": reason}
