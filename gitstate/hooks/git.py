"""Git hook adapter: what `pre-push`, `post-commit` and `post-checkout` do for us.

None of them may fail or slow the user's git command: pre-push sends this person's agy refs
from a detached process after the push is over, and only when it went to the agy remote and
really happened; post-commit refreshes changed_files quickly; post-checkout only warns. Failures are logged under the git dir, never raised at git.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time

from gitstate import error_map
from gitstate.errors import EXIT_OK, AgyError
from gitstate.storage import launcher, logs, remote_url
from gitstate.usecases.workspace import Workspace

WAIT_FOR_PUSH = 120.0  # seconds we wait for the user's push to end before sending ours
PUSH_TIMEOUT = 60.0
MAX_STDIN = 1 << 20  # pre-push's ref lines: far more than any push names


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


def pre_push(remote: str, url: str | None, lines: str, after: int | None) -> int:
    """Once process `after` (the user's git push) has ended, carry this person's refs to the agy
    remote if that push went there and really happened (docs/hooks.md); `lines`: git's stdin."""
    from gitstate.usecases.sync import carry

    if after is not None:
        # Out of the terminal's process group: a Ctrl-C of the push is not ours.
        with contextlib.suppress(OSError):
            os.setsid()
        deadline = time.monotonic() + WAIT_FOR_PUSH
        delay = 0.01
        while _alive(after) and time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
        # Still running after the wait: the remote decides below (it shows the push, or not).
    ws = Workspace.open()
    decision = carry.after_push(ws, remote, url, carry.push_lines(lines), PUSH_TIMEOUT)
    if decision.carried:
        logs.append(
            ws.layout.agy_dir,
            logs.PUSH_LOG,
            f"push to {remote_url.public(remote)}: exit {decision.code}\n{decision.text}",
        )
    else:
        logs.append(
            ws.layout.agy_dir,
            logs.PUSH_LOG,
            f"push to {remote_url.public(remote)}: {decision.text}",
        )
    return EXIT_OK


def _parent_of(pid: int) -> tuple[int, str] | None:
    """(parent pid, command name) of `pid`, from /proc or else `ps`."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            head, _, tail = stat.read().rpartition(b")")
            return int(tail.split()[1]), head.partition(b"(")[2].decode(errors="replace")
    except (OSError, ValueError, IndexError):
        pass
    try:
        out = subprocess.run(
            ["ps", "-o", "ppid=", "-o", "comm=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.split(None, 1)
        return int(out[0]), os.path.basename(out[1].strip())
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def _git_push_process() -> int:
    """The `git` process above us (a hand-chained hook may run under wrappers such as husky's),
    else our parent."""
    pid = os.getppid()
    for _ in range(16):
        found = _parent_of(pid)
        if found is None:
            break
        if found[1] == "git":
            return pid
        if found[0] <= 1:
            break
        pid = found[0]
    return os.getppid()


def detach_pre_push(remote: str, url: str | None, lines: str) -> int:
    """pre-push called without --after (a hook that chains ours by hand, docs/hooks.md): run the
    step in a detached process that waits for the git push, and return at once."""
    argv = [*launcher.argv(), "hook", "pre-push"]
    argv += ["--after", str(_git_push_process()), "--", remote, *([url] if url else [])]
    try:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert child.stdin is not None
        with contextlib.suppress(OSError):
            child.stdin.write(lines.encode())
            child.stdin.close()
    except OSError as exc:
        logs.append(
            Workspace.open().layout.agy_dir,
            logs.PUSH_LOG,
            f"push to {remote_url.public(remote)}: not started: {exc}",
        )
    return EXIT_OK


def post_commit() -> int:
    from gitstate.usecases.state import changed_files

    ws = Workspace.open()
    try:
        changed_files.refresh(ws)
    except AgyError as exc:  # an invalid view, a credential…: the commit is not ours to fail
        logs.append(ws.layout.agy_dir, logs.HOOK_LOG, f"post-commit: {error_map.log_text(exc)}")
    return EXIT_OK


def post_checkout(previous: str, new: str, branch_flag: str) -> str | None:
    """A warning when the view was saved on another branch than the one now checked out; a
    failure is logged (error_map's words) and no warning, never a failed checkout."""
    if branch_flag != "1":
        return None
    ws: Workspace | None = None
    try:
        ws = Workspace.open()
        return _branch_warning(ws)
    except AgyError as exc:  # a damaged ref, no repository…: the checkout is done all the same
        if ws is not None:
            logs.append(
                ws.layout.agy_dir, logs.HOOK_LOG, f"post-checkout: {error_map.log_text(exc)}"
            )
        return None


def _branch_warning(ws: Workspace) -> str | None:
    if ws.view_bytes() is None:
        return None
    snapshot = ws.recorded_snapshot() or ws.store.tip()
    if snapshot is None:
        return None
    saved_on = ws.store.snapshot(snapshot).branch
    _, branch = ws.store.head_info()
    if saved_on and branch and saved_on != branch:  # a detached HEAD names no branch
        return (
            f"warning: STATE.md was saved on branch {saved_on}; you are now on {branch} "
            "(git agy-state status)"
        )
    return None
