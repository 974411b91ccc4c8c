"""Git hook adapter: what `pre-push`, `post-commit` and `post-checkout` do for us.

None of them may fail or slow the user's git command: pre-push sends the agy refs from a
detached process after the push is over, post-commit refreshes changed_files quickly, and
post-checkout only warns. Failures are logged under the git dir, never raised at git.
"""

from __future__ import annotations

import contextlib
import os
import time

from gitstate.errors import AgyError
from gitstate.storage.layout import Layout
from gitstate.usecases.workspace import Workspace

WAIT_FOR_PUSH = 120.0  # seconds we wait for the user's push to end before sending ours
PUSH_TIMEOUT = 60.0


def _log(layout: Layout, name: str, text: str) -> None:
    try:
        layout.agy_dir.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(layout.agy_dir / name, "a", encoding="utf-8") as log:
            log.write(f"{stamp} {text.rstrip()}\n")
    except OSError:
        pass


def _alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (ended, not yet reaped by its caller) counts as ended."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # The state letter follows the command name, which is in parentheses.
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def pre_push(remote: str, after: int | None) -> int:
    """Send what travels to `remote` once process `after` (the user's git push) has ended."""
    from gitstate.usecases import carry

    if after is not None:
        # Out of the terminal's process group: a Ctrl-C of the push is not ours.
        with contextlib.suppress(OSError):
            os.setsid()
        deadline = time.monotonic() + WAIT_FOR_PUSH
        delay = 0.01
        while _alive(after) and time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
    ws = Workspace.open()
    code, output = carry.push_along(ws, remote, PUSH_TIMEOUT)
    _log(ws.layout, "push.log", f"push to {remote}: exit {code}\n{output}")
    return 0


def post_commit() -> int:
    from gitstate.usecases import changed_files

    ws = Workspace.open()
    try:
        changed_files.refresh(ws)
    except AgyError as exc:  # an invalid view, a credential…: the commit is not ours to fail
        _log(ws.layout, "hook.log", f"post-commit: {exc.message}")
    return 0


def post_checkout(previous: str, new: str, branch_flag: str) -> str | None:
    """A warning when the view was saved on another branch than the one now checked out."""
    if branch_flag != "1":
        return None
    ws = Workspace.open()
    if ws.view_bytes() is None:
        return None
    snapshot = ws.recorded_snapshot() or ws.store.tip()
    if snapshot is None:
        return None
    saved_on = ws.store.snapshot(snapshot).branch
    _, branch = ws.store.head_info()
    if saved_on and branch and saved_on != branch and not ws.store.repo.head_is_detached:
        return (
            f"warning: STATE.md was saved on branch {saved_on}; you are now on {branch} "
            "(git agy-state status)"
        )
    return None
