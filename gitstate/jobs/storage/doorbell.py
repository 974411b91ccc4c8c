"""Doorbells: wake the processes that wait on the job queue at once, without polling.

A waiter makes a named pipe `<commondir>/agy/queue/<name>.bell` and keeps it open for reading
(O_RDWR, so it never reads end-of-file); whoever changes the queue rings with one non-blocking
byte per bell: every watcher's bell (`job watch`, `run --wait`), and the bell of the queued job
first in line only. Waking every waiting supervisor for each change would make each of them
count the whole queue — work that grows with the square of the queue's length — when only the
first in line can take a slot; it hands on by ringing again once it has claimed one. A ring that
lands between a waiter's look at the queue and its wait stays in the pipe, so no wake-up is
lost. A process that dies without ringing (kill -9) is noticed through a pidfd where the kernel
has them (Linux ≥ 5.3); the caller's timeout is the safety net. Standard library only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
from collections.abc import Iterable
from pathlib import Path

from gitstate.jobs.document.queue_order import queue_key
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.storage.files import queue_dir
from gitstate.jobs.storage.probe import JOB_ID_RE
from gitstate.storage.layout import Layout

SUFFIX = ".bell"


class Bell:
    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def open(cls, layout: Layout, name: str) -> Bell:
        """A bell that is already being listened to when its name appears (ringers unlink
        names nobody listens to, so it is made and opened under a temporary name first)."""
        folder = queue_dir(layout)
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{name}{SUFFIX}"
        tmp = folder / f".{name}.{os.getpid()}.fifo"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.mkfifo(tmp, 0o600)
        fd = os.open(tmp, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        os.replace(tmp, final)
        return cls(final, fd)

    def wait(self, timeout: float, watch: Iterable[int] = ()) -> str:
        """Block until rung (`rung`), a watched pidfd's process exits (`exit`), or `timeout`."""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        for fd in watch:
            poller.register(fd, select.POLLIN)
        events = poller.poll(max(0.0, timeout) * 1000)
        if not events:
            return "timeout"
        if any(fd == self.fd for fd, _ in events):
            self.drain()
            return "rung"
        return "exit"

    def drain(self) -> None:
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while os.read(self.fd, 4096):
                pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def __enter__(self) -> Bell:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ring(layout: Layout) -> int:
    """Ring every watcher's bell and the bell of the first queued job that listens; unlink the
    bells nobody listens to. Returns how many were rung."""
    folder = queue_dir(layout)
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    rung = 0
    waiting: list[tuple[tuple[str, int, str], str]] = []
    for entry in entries:
        if not entry.name.endswith(SUFFIX):
            continue
        name = entry.name[: -len(SUFFIX)]
        if JOB_ID_RE.match(name):
            meta = jobfiles.read_json(jobfiles.files(layout, name).meta)
            if isinstance(meta, dict) and meta.get("state") == "queued" and "id" in meta:
                waiting.append((queue_key(meta), entry.path))
            continue
        rung += _ring_one(entry.path)
    for _key, path in sorted(waiting):
        if _ring_one(path):
            return rung + 1
    return rung


def _ring_one(path: str) -> int:
    """1 when the bell at `path` was rung (or is full: rung already), else 0; a bell nobody
    listens to any more (its waiter died) is removed."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # no reader: its waiter died
            with contextlib.suppress(OSError):
                os.unlink(path)
        return 0
    try:
        os.write(fd, b"\n")
        return 1
    except BlockingIOError:
        return 1  # full: it has been rung already
    except OSError:
        return 0
    finally:
        os.close(fd)


def pidfds(pids: Iterable[int]) -> list[int]:
    """Pollable fds that turn readable when each process exits (Linux ≥ 5.3; elsewhere none).

    Open them while the processes are known to be alive (under the queue lock, after checking
    their locks), so an exit right after the check is still seen. The caller closes them."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return []
    found = []
    for pid in pids:
        if pid > 0:
            with contextlib.suppress(OSError):
                found.append(opener(pid))
    return found


def close_all(fds: Iterable[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
