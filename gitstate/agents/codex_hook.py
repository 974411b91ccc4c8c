"""Codex CLI's hook payload and answers (docs/agents.md): what a hook process needs of it.

Codex (0.171.0) sends Claude Code's shape: `session_id`, `transcript_path` (null in an
ephemeral run), `cwd`, `hook_event_name`, `model`, `permission_mode`; SessionStart adds `source`
(startup, resume, clear, compact, fork), Stop `turn_id`, `stop_hook_active` and
`last_assistant_message`, PreCompact `turn_id` and `trigger`. It reads the same answers: a
SessionStart `hookSpecificOutput.additionalContext` goes into the model's context, a Stop
`{"decision": "block", "reason": …}` becomes the next prompt (session_payload.py, shared with
Claude Code and Gemini CLI). Codex sets no project-directory variable for hooks: the payload's
`cwd` names the workspace. On the agent-hook fast path: standard library only; the plugin,
install, trust and job code is codex.py.
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

NAME = "codex"
SESSION_KEY = "session_id"
PROJECT_ENV: str | None = None  # none documented or set: the payload's cwd is the workspace


def claims(payload: dict[str, Any]) -> int:
    """`turn_id` (Stop, PreCompact, UserPromptSubmit) is Codex's own: sure (2). Its SessionStart
    looks like Claude Code's and is taken for Claude's when no `--agent` says otherwise, which
    is harmless: both read the same answer."""
    return 2 if "turn_id" in payload and "session_id" in payload else 0


def block(reason: str) -> dict[str, Any]:
    # Codex refuses a block without a non-empty reason (the reason is the next prompt).
    return {"decision": "block", "reason": reason}
