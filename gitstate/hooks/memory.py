"""The memory core for the agent hook's session-start injection (docs/memory.md).

Framed as data between its own markers, redacted, and the whole framed block within
agy.memoryBudget (hooks/frame.py; docs/hooks.md, "What is injected").

Read from the brain's plain-text cache (memory/storage/cache.py), never through pygit2; standard
library only and no `typing` at run time, like hooks/agent.py. Given only at startup and resume:
not after a compaction (the agent's module says which start that is: agents.after_compaction),
and for agy, whose first invocation of every turn looks alike, once per conversation.
"""

from __future__ import annotations

import time

from gitstate import agents
from gitstate.memory.storage.layout import BrainLayout, inject_settings, work_tree_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitstate.agents.base import AgentCLI
    from gitstate.storage.hooklayout import AnyLayout as Layout

REMEMBERED = 500  # agy conversation ids kept in the brain's `injected` file


def core_for(
    agent: AgentCLI | None, payload: dict[str, Any], layout: Layout | None, project_dir: str
) -> str | None:
    """The memory core to inject, or None (no brain, injection off, compaction, already given)."""
    if agents.after_compaction(agent, payload):
        return None  # the compacted conversation still carries what was injected at its start
    brain = BrainLayout()
    if not brain.exists():
        return None
    mode, budget = inject_settings(layout)
    if mode == "off" or budget <= 0:
        return None
    # Here, not at the top: most turns of most users have no brain, and this hook runs on all.
    from gitstate.memory.storage import cache as memory_cache

    cache = brain.cache_dir
    if memory_cache.tip(cache) is None:
        return None  # no memory command has run with this brain yet
    once = agent.memory_key(payload) if agent is not None else None
    if once is not None and not _first_time(brain, once):
        return None  # this conversation has had it (agy: every turn's first call looks alike)
    from gitstate.hooks import frame
    from gitstate.memory.document.core import core_text
    from gitstate.memory.document.sessions import days

    project = work_tree_name(layout, project_dir)
    today, yesterday = days(time.time())
    tip = memory_cache.tip(cache) or "?"
    source = f"Source: the memory brain {brain.path} (refs/agy/memory at {tip[:12]})."
    overhead = len(frame.memory_frame("", source).encode())
    room = budget - overhead
    for _ in range(3):  # redaction may lengthen a text a little: shrink the room and retry
        core = core_text(
            lambda path: memory_cache.read_text(cache, path), project, today, yesterday, room
        )
        if core is None:
            return None
        framed = frame.memory_frame(core, source)
        excess = len(framed.encode()) - budget
        if excess <= 0:
            return framed
        room -= excess + 64
    return None


def _first_time(brain: BrainLayout, conversation: object) -> bool:
    """Whether this conversation has not had the memory core yet (and remember it)."""
    if not isinstance(conversation, str | int) or conversation == "":
        return True
    key = str(conversation).replace("\n", " ")
    path = brain.injected_path
    from gitstate.storage.view import NotRegular, read_regular

    try:  # a regular file only, bounded, never blocking
        data = read_regular(path, 1024 * 1024)
        seen = data.decode("utf-8", errors="replace").splitlines() if data else []
    except NotRegular:
        seen = []
    if key in seen:
        return False
    seen = [*seen[-(REMEMBERED - 1) :], key]
    try:
        from gitstate.storage import private  # the brain's files are private (docs/memory.md)

        private.make_dir(path.parent)
        private.write_file(path, ("\n".join(seen) + "\n").encode("utf-8"))
    except OSError:
        pass  # cannot remember: inject anyway rather than never
    return True
