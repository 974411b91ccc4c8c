"""A per-work-tree writer lock: an flock, so the kernel releases it when the holder dies.

Held across read view → commit → compare-and-swap → rename of the view, so after any race the
view equals the tip. Waits are bounded: a hook must never hang on a stuck writer.
"""

from __future__ import annotations

import fcntl
import os
import time

from gitstate.errors import WorkAtRisk

# Paths may be str or Path, and are handled with os.path: an agent hook's save takes this lock,
# and pathlib would cost it more than the save (docs/hooks.md, "Start-up cost").

DEFAULT_WAIT = 30.0


def held(path: str | os.PathLike[str], wait: float = DEFAULT_WAIT) -> Held:
    """`with held(path):` — the lock for the block, our pid written in its file."""
    return Held(path, wait)


class Held:
    """The lock as a context manager, written out rather than with contextlib, whose import
    (functools, collections) would cost an agent hook's save more than taking the lock does
    (docs/hooks.md, "Start-up cost")."""

    __slots__ = ("_fd", "_path", "_wait")

    def __init__(self, path: str | os.PathLike[str], wait: float) -> None:
        self._path, self._wait = path, wait
        self._fd: int | None = None

    def __enter__(self) -> None:
        fd = acquire(self._path, self._wait)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def __exit__(self, *exc_info: object) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock


def acquire(path: str | os.PathLike[str], wait: float = DEFAULT_WAIT) -> int:
    """Open `path` and take its flock within `wait` seconds; the descriptor, which the caller
    closes to release it. The file is left as the last holder wrote it (storage/refs.py reads
    what a killed holder recorded there)."""
    folder = os.path.dirname(os.fspath(path))
    if folder:  # a bare name is in the current directory
        os.makedirs(folder, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # a lock file needs no reader but us
    try:
        deadline = time.monotonic() + wait
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _holder(path)
                    raise WorkAtRisk(
                        f"another git agy-state{holder} has held {path} for {wait:.0f}s",
                        hint="wait for it to finish, or end it if it is stuck",
                    ) from None
                # Back off up to 50 ms: holders keep the lock for milliseconds.
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
    except BaseException:
        os.close(fd)
        raise


def _holder(path: str | os.PathLike[str]) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            pid = handle.read(64).split("\n", 1)[0].strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
