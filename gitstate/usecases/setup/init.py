"""`init`: prepare a repository for the state (optional: every command works without it).

Excludes the view from git, lets decisions follow rewrites, names the user whose chain sync
carries, and starts the state ref's reflog. Each step is done only when missing, and said.
"""

from __future__ import annotations

from gitstate.storage import exclude, notes
from gitstate.usecases.sync.carry import agy_user
from gitstate.usecases.workspace import Workspace

EXCLUDE_LINE = "/STATE.md"


def init(ws: Workspace) -> list[str]:
    """Exclude the view from git, let decisions follow rewrites, and start the ref's reflog."""
    done: list[str] = []
    if exclude.ensure(ws.layout, (EXCLUDE_LINE,)):
        done.append(f"added {EXCLUDE_LINE} to {exclude.path(ws.layout)}")
    if notes.ensure_rewrite_ref(ws.store):
        done.append(f"set notes.rewriteRef={notes.DECISIONS_REF}")
    if not ws.store.config_value("agy.user"):
        user = agy_user(ws)
        if user:
            ws.store.set_config("agy.user", user)
            done.append(f"set agy.user={user} (your state travels as refs/agy/users/{user}/state)")
    log = ws.layout.commondir / "logs" / ws.layout.state_ref
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        log.touch()
        done.append(f"started the reflog of {ws.layout.state_ref}")
    return done
