"""Claude Code's hook payload and answers (docs/hooks.md): what a hook process needs of it.

The payload names `session_id`, `cwd` and `hook_event_name`, and `stop_hook_active` once a
Stop hook has already kept the agent going (session_payload.py, shared with Gemini CLI); a stop
is blocked with `decision: "block"`. On the agent-hook fast path: standard library only; the
plugin, install and job code is claude.py.
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

NAME = "claude"
SESSION_KEY = "session_id"
PROJECT_ENV = "CLAUDE_PROJECT_DIR"


def claims(payload: dict[str, Any]) -> int:
    """Any hook event or session id could be Claude Code's: the fallback (1), never sure."""
    return 1 if payload.get("hook_event_name") is not None or "session_id" in payload else 0


def block(reason: str) -> dict[str, Any]:
    return {"decision": "block", "reason": reason}
