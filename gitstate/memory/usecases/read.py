"""Reading memory: `memory show` (a file, a layer, or the whole core uncut) and `memory status`.

Reads go to the ref's tip through pygit2; the plain-text cache is only for the agent hook.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from gitstate.errors import NotFound
from gitstate.memory.document import files
from gitstate.memory.document import sessions as sessions_doc
from gitstate.memory.storage import cache as memory_cache
from gitstate.memory.storage.brain import Brain
from gitstate.memory.storage.layout import REMOTE_KEY, BrainLayout, inject_settings
from gitstate.memory.usecases import write as memory_write
from gitstate.memory.usecases.brain import memory_warning, open_brain
from gitstate.memory.usecases.search import index_state
from gitstate.storage.layout import discover


class Shown(NamedTuple):
    tip: str
    brain: str
    files: tuple[tuple[str, str], ...]  # (path, text)

    def as_json(self) -> dict[str, object]:
        return {
            "tip": self.tip,
            "brain": self.brain,
            "files": [{"path": p, "text": t, "lines": files.count_lines(t)} for p, t in self.files],
        }


def days(now: float | None = None) -> tuple[str, str]:
    return sessions_doc.days(time.time() if now is None else now)


def _optional_project(given: str | None) -> str | None:
    if given is not None:
        return memory_write.project_name(given)
    name = memory_write.default_project()
    return name if files.valid_project(name) else None


def show(
    layer: str | None = None,
    path: str | None = None,
    project: str | None = None,
    now: float | None = None,
) -> Shown:
    """One file (FILE), one layer's files, or the core: USER.md, this project's file,
    MEMORY.md, today's and yesterday's sessions."""
    brain, _ = open_brain()
    tip = brain.tip()
    assert tip is not None
    today, yesterday = days(now)
    sessions = [files.session_path(today), files.session_path(yesterday)]
    if path is not None:
        wanted = [memory_write.check_path(path)]
        required = True
    elif layer is not None:
        kind = memory_write.layer_of(layer, files.LAYERS)
        required = kind != "experience"
        if kind == "knowledge":
            wanted = [files.MEMORY_FILE]
        elif kind == "identity":
            wanted = [files.USER_FILE]
        elif kind == "project":
            wanted = [files.project_path(memory_write.project_name(project))]
        else:
            wanted = sessions
    else:
        required = False
        name = _optional_project(project)
        wanted = [files.USER_FILE]
        wanted += [files.project_path(name)] if name else []
        wanted += [files.MEMORY_FILE, *sessions]
    found = tuple((p, t) for p in wanted if (t := brain.text(tip, p)) is not None)
    if required and not found:
        raise NotFound(f"the brain has no {wanted[0]}", hint="git agy-state memory status")
    return Shown(tip, str(brain.layout.path), found)


def status() -> dict[str, object]:
    """The brain at a glance (`memory status --json`)."""
    layout = BrainLayout()
    mode, budget = inject_settings(discover())
    base: dict[str, object] = {
        "brain": str(layout.path),
        "exists": layout.exists(),
        "inject": mode,
        "budget": budget,
        "limit": files.LINE_LIMIT,
        "warn_at": files.WARN_AT,
    }
    if not layout.exists():
        return {**base, "tip": None, "memory_lines": 0, "over_limit": False, "warning": None}
    brain, _ = open_brain()
    return {**base, **_details(brain)}


def _details(brain: Brain) -> dict[str, object]:
    tip = brain.tip()
    listing = brain.listing(tip)
    lines = files.count_lines(brain.text(tip, files.MEMORY_FILE) or "")
    remote = brain.config(REMOTE_KEY)
    cache_tip = memory_cache.tip(brain.layout.cache_dir)
    return {
        "tip": tip,
        "memory_lines": lines,
        "user_lines": files.count_lines(brain.text(tip, files.USER_FILE) or ""),
        "over_limit": lines > files.LINE_LIMIT,
        "warning": memory_warning(lines),
        "sessions": sum(1 for p in listing if p.startswith(files.SESSIONS_DIR + "/")),
        "projects": sum(1 for p in listing if p.startswith(files.PROJECTS_DIR + "/")),
        "remote": remote,
        "index": index_state(brain),
        "cache": {
            "path": str(brain.layout.cache_dir),
            "tip": cache_tip,
            "current": cache_tip == tip,
        },
    }
