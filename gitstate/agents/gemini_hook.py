"""Gemini CLI's hook payload and answers (docs/hooks.md): what a hook process needs of it.

The payload is Claude Code's shape plus a `timestamp`, with Gemini's own event names
(session_payload.py); a stop is blocked with `decision: "deny"`, which forces a retry turn. The
injected context reaches the model with `<` and `>` escaped (`[>]` arrives as `[&gt;]`), so it
carries a note in the header that says so in words (docs/agents.md, "Gemini CLI"). On the agent-hook fast
path: standard library only; the plugin and install code is gemini.py.
"""

from __future__ import annotations

from gitstate.agents.session_payload import after_compaction as after_compaction
from gitstate.agents.session_payload import inject as _session_inject
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


HEADER_START = "=== STATE.md"  # the state header's first line in every language (frame.HEADERS)
# Said in words, not with the characters themselves: those would arrive escaped too. Keyed by
# a word of the state frame's header in that language (hooks/frame.py:HEADERS), else English.
ESCAPE_NOTES = (
    (
        "標記：",
        "（Gemini CLI 把這段文字裡的角括號顯示為 HTML 實體：文中的 [&gt;] 就是進行中標記，"
        "即方括號內一個大於號。寫入 STATE.md 或 patch 時請用原本的大於、小於符號，"
        "不要寫 &gt; 或 &lt;。）",
    ),
    (
        "标记：",
        "（Gemini CLI 把这段文字里的角括号显示为 HTML 实体：文中的 [&gt;] 就是进行中标记，"
        "即方括号内一个大于号。写入 STATE.md 或 patch 时请用原本的大于、小于符号，"
        "不要写 &gt; 或 &lt;。）",
    ),
    (
        "",
        "(Gemini CLI shows the angle brackets of this text as HTML entities: [&gt;] in it is the "
        "in-progress marker, a greater-than sign in square brackets. In STATE.md and in patches "
        "write the plain greater-than and less-than signs, never &gt; or &lt;.)",
    ),
)


def escape_note(text: str) -> str | None:
    """The note for a text framed with the state's header (every state frame: the header
    names the markers), in the header's language; None without one (memory alone has no
    markers to misread)."""
    if HEADER_START not in text:
        return None
    return next(note for word, note in ESCAPE_NOTES if word in text)


def inject(text: str) -> dict[str, Any]:
    """The context with the note at the end of the header's paragraph (hooks/frame.py: the
    line after `=== STATE.md …`), so every other line of the frame stays where it was."""
    note = escape_note(text)
    if note:
        lines = text.split("\n")
        at = next(i for i, line in enumerate(lines) if line.startswith(HEADER_START)) + 1
        if at < len(lines):
            lines[at] = f"{lines[at]} {note}"
            text = "\n".join(lines)
    return _session_inject(text)
