"""How `run` and `feedback` start a job round's supervisor: a fork of the submitting process when
that is safe, else a fresh isolated interpreter (docs/jobs.md, "Cost per job").

A fresh `python -I -m gitstate.jobs.usecases.supervise` pays the interpreter's start and the
supervisor's imports — about two thirds of the CPU a job costs the runtime, once per job. The
process that submits has the tool loaded already, so a fork of it costs a page-table copy. Its
child is made to look like the fresh interpreter would: its own session, stdin and stdout on
/dev/null, stderr on the job's stderr.log, no file descriptor of the parent's but the job's
supervisor lock (and the pack files libgit2 keeps open and shares between repositories of one
process: closing one would leave its pack cache reading a closed, or reused, descriptor), the
signal handlers the parent set back to their defaults, the main work tree as its working
directory, and a command line of its own (`agy-state supervisor <id> round <n>`: the caller's
may hold a plan's text). It imports nothing from `sys.path` that the parent had not loaded (the
tool's own modules come from the package's folder), and leaves with `os._exit`: no exit handler,
buffer or test of the parent's runs twice. Where its command line cannot be rewritten it execs
the fresh interpreter itself.

The fork is skipped for a process running more than one thread (a server's workers): another
thread may hold a lock the child would wait on forever. Such a process, a platform without fork
or /proc, or a fork the system refuses starts the interpreter instead, as before.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import signal
import subprocess
import sys
import threading
from typing import NamedTuple, NoReturn

from gitstate.errors import EXIT_FAILURE
from gitstate.jobs.storage import supervisor_git
from gitstate.jobs.storage.files import JobFiles
from gitstate.jobs.usecases import supervise
from gitstate.storage import launcher, private
from gitstate.storage.layout import Layout

SUPERVISOR_MODULE = "gitstate.jobs.usecases.supervise"
# What libgit2 holds open for a repository's packs (objects/pack/pack-<id>.pack and friends).
_PACK_FILE = re.compile(r"/objects/pack/[^/]+\.(?:pack|idx|rev|bitmap)$")
_forked: set[int] = set()  # children of this process not yet reaped


class Started(NamedTuple):
    pid: int
    forked: bool  # a fork: it records its own pid at its first look at the queue (ms away)


def start(
    layout: Layout,
    job: JobFiles,
    round_no: int,
    fd: int,
    cwd: str,
    preset: supervisor_git.Preset | None = None,
    slot_likely: bool = False,
    handed: supervise.Handed | None = None,
) -> Started:
    """Start the supervisor of `job`'s round `round_no`, handing it the locked `fd`, and to a
    fork the settings this process read (`preset`: a fresh interpreter reads them itself) and
    whether a slot was free when it queued the job (`slot_likely`), and the config it loaded
    from `preset` and the prompt it wrote (`handed`)."""
    _reap()
    argv = ["--repo", str(layout.commondir), "--job", job.id, "--round", str(round_no)]
    argv += ["--lock-fd", str(fd)]
    if can_fork():
        try:
            pid = os.fork()
        except OSError:
            pid = -1  # no memory or no process slot for a copy: the interpreter may still start
        if pid == 0:
            _child(job, fd, cwd, argv, preset, slot_likely, handed)  # never returns
        if pid > 0:
            _forked.add(pid)
            return Started(pid, forked=True)
    return Started(_spawn(job, fd, cwd, argv), forked=False)


def can_fork() -> bool:
    """Whether a fork of this process can be the supervisor (see the module doc)."""
    return hasattr(os, "fork") and os.path.isdir("/proc/self/fd") and threading.active_count() == 1


def _spawn(job: JobFiles, fd: int, cwd: str, argv: list[str]) -> int:
    # Isolated (-I): the supervisor starts inside the work tree, whose `gitstate/` folder -m
    # would otherwise import in place of the tool (docs/security.md).
    with open(job.stderr, "ab") as stderr:
        proc = subprocess.Popen(
            [*launcher.argv(SUPERVISOR_MODULE), *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=cwd,
            start_new_session=True,  # its own session and process group: detached from ours
            pass_fds=(fd,),
        )
    return proc.pid


def _child(
    job: JobFiles,
    fd: int,
    cwd: str,
    argv: list[str],
    preset: supervisor_git.Preset | None,
    slot_likely: bool,
    handed: supervise.Handed | None,
) -> NoReturn:
    """The forked supervisor: made to look like a fresh one, then supervise.main; never
    returns into the caller's code, whatever happens."""
    code = EXIT_FAILURE
    own_stdio = False
    try:
        # The caller's objects out of this process's collections: a collection walks every
        # object it tracks and so writes to each page holding one, and each such page is then
        # copied from the caller's (copy-on-write): a full collection here cost ≈ 17 ms of CPU,
        # most of a round's own. Nothing of the caller's needs collecting in a fork of it.
        gc.freeze()
        os.setsid()
        _stdio(job)  # first: the caller's stdout may be a pipe someone reads to its end
        own_stdio = True
        _close_inherited(keep=fd)
        _default_signals()
        sys.path[:] = _isolated_path()
        os.chdir(cwd)
        if not _retitle(f"agy-state supervisor {job.id} round {argv[argv.index('--round') + 1]}"):
            _exec(fd, argv)  # the caller's command line (a --text plan) must not stay on show
        code = supervise.main(argv, preset, slot_likely, handed)
    except BaseException as exc:  # a child must not unwind into its parent's code
        with contextlib.suppress(BaseException):  # nothing is left to tell it to
            os.write(2, f"supervisor: {type(exc).__name__}: {exc}\n".encode(errors="replace"))
    finally:
        try:
            if own_stdio:  # the parent's own sys.stderr is never flushed here
                sys.stderr.flush()
        finally:
            os._exit(code)


def _retitle(title: str) -> bool:
    """Write `title` over this process's command line, what `ps` and /proc/<pid>/cmdline show
    (cut to the caller's length): the fork still shows the caller's, and a `job run --text
    PLAN` would leave the plan there for every local user to read, for as long as the job
    runs. Linux keeps the command line in the process's own memory (/proc/self/stat gives
    where), which the process may write through /proc/self/mem. False when it cannot."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start and arg_end (fields 48, 49)
        size = end - start
        if size <= 0:
            return False
        data = title.encode()[: size - 1]
        with open("/proc/self/mem", "r+b", buffering=0) as memory:
            memory.seek(start)
            memory.write(data + b"\0" * (size - len(data)))
        with open("/proc/self/cmdline", "rb") as handle:
            return handle.read().split(b"\0", 1)[0] == data
    except (OSError, ValueError, IndexError):
        return False


def _exec(fd: int, argv: list[str]) -> NoReturn:
    """Become the fresh supervisor after all (this process is set up as _spawn's child)."""
    os.set_inheritable(fd, True)
    command = [*launcher.argv(SUPERVISOR_MODULE), *argv]
    os.execv(command[0], command)


def _isolated_path() -> list[str]:
    """sys.path as `-I` would leave it: no relative entry (the work tree is about to be the
    working directory), none from PYTHONPATH, no user site. The tool's own modules are found
    through the package already loaded; this guards the few others a round may import."""
    dropped = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    user_site = getattr(sys.modules.get("site"), "USER_SITE", None)
    if isinstance(user_site, str):
        dropped.add(os.path.abspath(user_site))
    return [
        entry
        for entry in sys.path
        if entry and os.path.isabs(entry) and os.path.abspath(entry) not in dropped
    ]


def _default_signals() -> None:
    """The handlers a fresh interpreter starts with: the parent's own (a server's SIGCHLD or
    SIGTERM, a test runner's) back to the default. Ignored signals stay ignored, as across
    exec."""
    with contextlib.suppress(ValueError):  # an asyncio parent's wake-up fd is about to close
        signal.set_wakeup_fd(-1)
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
        except (OSError, ValueError):
            continue
        if callable(handler) and handler is not signal.default_int_handler:
            signal.signal(signum, signal.SIG_DFL)


def _stdio(job: JobFiles) -> None:
    """stdin and stdout on /dev/null, stderr on the job's stderr.log, as _spawn gives them.
    The parent's sys.stdout and sys.stderr objects are set aside, never flushed: what they hold
    is the parent's to write."""
    null = os.open(os.devnull, os.O_RDWR)
    err = private.open_fd(job.stderr, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(err, 2)
    os.close(null)
    os.close(err)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own, for its life
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115


def _close_inherited(keep: int) -> None:
    """Close every descriptor above stderr but `keep` and libgit2's pack files: a pipe or a
    socket of the parent's held open here would keep its reader waiting for an end of file (a
    `$(git agy-state job run)` in a shell, a server's client) for as long as the job runs, and
    a lock file's lock would outlive its holder's release. The kept ones are close-on-exec
    (libgit2 opens them so), so the agent inherits none."""
    for name in os.listdir("/proc/self/fd"):
        number = int(name)
        if number <= 2 or number == keep:
            continue
        try:
            target = os.readlink(f"/proc/self/fd/{number}")
        except OSError:
            continue  # the listing's own descriptor, closed already
        if _PACK_FILE.search(target):
            os.set_inheritable(number, False)
            continue
        with contextlib.suppress(OSError):
            os.close(number)


def _reap() -> None:
    """Collect forked supervisors that have exited, as Popen collects its children, so that a
    long-lived submitter (a test run, a server) does not gather zombies."""
    for pid in list(_forked):
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else (a waitpid(-1) of the caller's)
            done = pid
        if done:
            _forked.discard(pid)
