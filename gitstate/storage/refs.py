"""Ref updates atomic across processes and work trees: create-only and compare-and-swap.

Every update follows git's lock-file protocol in the common git dir, which git, libgit2 and
every other tool honour: `<ref>.lock` is created exclusively, the ref's value is read under it
and compared with the one the caller expects (absent, for a create), the reflog line is
appended, and the lock is renamed onto the ref. Of two processes — or two work trees — creating
or moving the same ref, exactly one wins; the other is told (False) and rebuilds. (libgit2's
create checks that a ref is absent before it takes the lock, so two creators could both "win";
`git update-ref` would cost a process per write.)

Our writers also hold a kernel flock, `<commondir>/agy/refs.lock`, while they update a ref, and
record there the lock file they made (device, inode, mtime). That makes a left-over lock
provably ours and abandoned: the flock is free only when its last holder has ended, and the
record names that very file. What happens to any other `.lock`: docs/exit-codes.md, "A ref
lock someone else holds".

`attempts` is the one bounded retry loop of every compare-and-swap writer (`retry` wraps it
for a writer whose attempt is one function).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

from gitstate.errors import CannotWrite, WorkAtRisk
from gitstate.storage import lock as lock_mod
from gitstate.storage.hooklayout import AGY_DIR

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded:
# an agent hook's save moves the chain through here (storage/loose.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")
# Paths are strings here, joined with os.path: an agent hook's save comes through, and pathlib
# would cost it more than the update (docs/hooks.md, "Start-up cost"). Callers may pass a Path.
MAX_ATTEMPTS = 20  # lost races before a writer gives up (WorkAtRisk)
# How long a ref lock not proven ours is waited for (by our clock, not its mtime, so a future
# mtime costs no more): git holds one for milliseconds. doctor reports older ones.
STALE_REF_LOCK_SECONDS = 2.0
WAIT_CAP = 3 * STALE_REF_LOCK_SECONDS  # all the waiting one update does, whoever comes and goes
WRITER_WAIT = 10.0  # for our own writer flock (held for about a millisecond per update)
OWN_REFS = "refs/agy/"  # written only by us, a one-shot `git update-ref` repair, or a fetch
WRITER_LOCK = "refs.lock"  # in <commondir>/agy/
WRITER_TMP = "refs.tmp"  # the lock's content, linked into place (only the flock's holder)
RECORD_BYTES = 255  # what the writer flock's file holds: pid and lock identity, padded

# Reads the ref's value under its lock: the commit id, any other text for what is not one (a
# symbolic ref's target), None when it is absent.
Reader = Callable[[], str | None]


def attempts(ref: str, outcome: str = "nothing was written") -> Iterator[int]:
    """The one compare-and-swap loop: `for _ in attempts(ref): … if swapped: return …`, each
    attempt reading the tip, building on it and swapping. Past MAX_ATTEMPTS lost races,
    WorkAtRisk naming the ref and `outcome`."""
    yield from range(MAX_ATTEMPTS)
    raise WorkAtRisk(
        f"{ref} kept moving under {MAX_ATTEMPTS} attempts; {outcome}",
        hint="another program is rewriting the ref; try again",
    )


def retry(ref: str, attempt: Callable[[], T | None], outcome: str = "nothing was written") -> T:
    """`attempts` for one function: `attempt` returns None when it lost the race."""
    for _attempt in attempts(ref, outcome):
        done = attempt()
        if done is not None:
            return done
    raise AssertionError("attempts() raises when they run out")


def update(
    commondir: str | os.PathLike[str],
    ref: str,
    expected: str | None,
    new: str,
    current: Reader,
    log: str,
) -> bool:
    """Move `ref` from `expected` (None: absent, a create-only write) to `new`, with the reflog
    line `log` (`<who> <when>\\t<message>`). False when the ref does not hold `expected`.

    OSError when the file system refuses (nothing moved); CannotWrite for a name that clashes
    with an existing ref's folder; WorkAtRisk when a lock someone else holds outlives the wait.
    """
    if not shared(ref):
        raise ValueError(f"{ref} is not a ref of the common git dir")
    root = os.fspath(commondir)
    fd = lock_mod.acquire(os.path.join(root, AGY_DIR, WRITER_LOCK), WRITER_WAIT)
    made: str | None = None
    try:
        _recover(root, fd)
        made = _lock(root, ref, new, fd)
        if current() != expected:
            return False
        _append_log(root, ref, expected, new, log)
        os.rename(made, os.path.join(root, ref))
        made = None
        return True
    finally:
        try:
            if made is not None:
                _unlink(made)
            _record(fd, "")
        finally:
            os.close(fd)  # releases the flock


def shared(ref: str) -> bool:
    """Whether `ref` lives in the common dir, shared by every work tree, where `update` writes
    it: any `refs/…` but the per-work-tree ones (git's rule: HEAD, refs/worktree/,
    refs/bisect/, refs/rewritten/ live in each work tree's own git dir)."""
    return ref.startswith("refs/") and not ref.startswith(_PER_WORKTREE)


_PER_WORKTREE = ("refs/worktree/", "refs/bisect/", "refs/rewritten/")


def zero_id(like: str) -> str:
    """The all-zero id git's reflog writes for "absent", as long as `like`."""
    return "0" * len(like)


# ---- our lock ------------------------------------------------------------------------------


def _lock(commondir: str, ref: str, new: str, fd: int) -> str:
    """Create `<ref>.lock` holding `new`, recorded as ours before it exists: written as a
    temporary file first, recorded, then hard-linked into place (which fails if the name is
    taken), so no moment exists when our lock is there but not recorded."""
    lock = os.path.join(commondir, ref + ".lock")
    tmp = os.path.join(commondir, AGY_DIR, WRITER_TMP)
    _unlink(tmp)
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        os.write(out, f"{new}\n".encode())
        made = os.fstat(out)
    finally:
        os.close(out)
    try:
        _record(fd, _identity_line(ref, made))
        wait = _Wait(ref, lock)
        folder_made = False
        while True:
            try:
                os.link(tmp, lock)
                return lock
            except FileExistsError:
                wait.step()
            except (FileNotFoundError, NotADirectoryError):
                if folder_made:
                    raise
                _make_folder(commondir, ref)
                folder_made = True
            except OSError:
                # No hard links on this file system: create the lock itself, then record it.
                # (A kill between the two leaves a lock we cannot prove ours.)
                return _lock_without_link(commondir, ref, new, fd, wait)
    finally:
        _unlink(tmp)


def _lock_without_link(commondir: str, ref: str, new: str, fd: int, wait: _Wait) -> str:
    lock = os.path.join(commondir, ref + ".lock")
    while True:
        try:
            out = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            wait.step()
            continue
        try:
            os.write(out, f"{new}\n".encode())
            _record(fd, _identity_line(ref, os.fstat(out)))
        except BaseException:
            os.close(out)
            _unlink(lock)
            raise
        os.close(out)
        return lock


def _make_folder(commondir: str, ref: str) -> None:
    """The folders a new ref's lock goes in. A prefix that is a ref itself (`refs/agy` a file)
    is git's clash: `'refs/agy' exists; cannot create 'refs/agy/x'`."""
    try:
        os.makedirs(os.path.dirname(os.path.join(commondir, ref)), exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        parts = ref.split("/")
        for end in range(2, len(parts)):
            prefix = "/".join(parts[:end])
            if os.path.isfile(os.path.join(commondir, prefix)):
                raise CannotWrite(
                    f"cannot lock ref '{ref}': '{prefix}' exists; cannot create '{ref}'",
                    hint=f"a ref cannot be both a name and a folder; rename or delete {prefix}",
                ) from None
        raise


def _identity_line(ref: str, st: os.stat_result) -> str:
    return f"{os.getpid()}\n{ref} {st.st_dev} {st.st_ino} {st.st_mtime_ns}\n"


def _record(fd: int, text: str) -> None:
    """What the writer flock's file says: our pid, and the lock file we are about to hold.
    Overwritten in place, padded, never truncated: truncating a file makes ext4 flush it."""
    data = (text or f"{os.getpid()}\n").encode()
    os.pwrite(fd, data + b" " * (RECORD_BYTES - len(data)) + b"\n", 0)


def _recover(commondir: str, fd: int) -> None:
    """With the writer flock in hand, every earlier holder has ended. One that recorded a lock
    and never cleared the record was killed inside its update: remove that lock, if it is still
    the very file recorded (device, inode and mtime), and its temporary file."""
    said = os.pread(fd, 4096, 0).decode("utf-8", "replace").split("\n")
    fields = said[1].split() if len(said) > 1 else []
    if not fields:
        return  # the last holder finished (or there was none)
    _unlink(os.path.join(commondir, AGY_DIR, WRITER_TMP))
    if len(fields) == 4 and all(f.isdigit() for f in fields[1:]):
        ref, dev, ino, mtime = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
        lock = os.path.join(commondir, ref + ".lock")
        if shared(ref) and ".." not in ref.split("/") and _identity(lock) == (dev, ino, mtime):
            _unlink(lock)
    _record(fd, "")


def _identity(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns


# ---- a lock someone else holds -------------------------------------------------------------


class _Wait:
    """Waiting out a `<ref>.lock` that is not ours (docs/exit-codes.md, "A ref lock someone
    else holds"): each holder gets STALE_REF_LOCK_SECONDS, all of them WAIT_CAP, by our clock.
    One still there unchanged after its time is left alone and reported — except under
    refs/agy/, where only we write and git holds a lock for milliseconds: there it is taken
    over (a writer killed before its lock was recorded, or by a version that did not record)."""

    def __init__(self, ref: str, lock: str) -> None:
        self.ref, self.lock = ref, lock
        self.began = time.monotonic()
        self.seen: tuple[int, int, int] | None = None
        self.since = self.began
        self.delay = 0.002

    def step(self) -> None:
        """Return when the update may try again; WorkAtRisk when the wait is over."""
        found = _identity(self.lock)
        if found is None:
            return  # gone: try again at once
        now = time.monotonic()
        if found != self.seen:  # another holder (or the first look): its own time
            self.seen, self.since = found, now
        if now - self.since >= STALE_REF_LOCK_SECONDS:
            if self.ref.startswith(OWN_REFS):
                if _identity(self.lock) == found:
                    _unlink_or_say(self.lock)
                self.seen = None
                return
            raise self._held(now)
        if now - self.began >= WAIT_CAP:
            raise self._held(now)
        time.sleep(self.delay)
        self.delay = min(self.delay * 2, 0.1)

    def _held(self, now: float) -> WorkAtRisk:
        return WorkAtRisk(
            f"cannot lock ref '{self.ref}': Unable to create '{self.lock}': File exists.",
            hint=f"another git process seems to be running in this repository (the lock stayed "
            f"{now - self.began:.0f}s); if none is, one crashed there earlier: remove "
            f"{self.lock} and try again",
        )


def _unlink_or_say(lock: str) -> None:
    """Take over an abandoned lock; a folder or an undeletable file is no lock we can take."""
    try:
        os.unlink(lock)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise CannotWrite(
            f"cannot lock ref: {lock} cannot be removed ({os.strerror(exc.errno or 0).lower()})",
            hint=f"remove {lock} if no git process is running, then try again",
        ) from None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return  # already gone


# ---- the reflog ----------------------------------------------------------------------------


def _append_log(commondir: str, ref: str, old: str | None, new: str, log: str) -> None:
    """One line in `logs/<ref>`, under the ref's lock, before the ref moves (as git does)."""
    path = os.path.join(commondir, "logs", ref)
    line = f"{old or zero_id(new)} {new} {log}\n".encode()
    try:
        out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(out, line)
    finally:
        os.close(out)
