"""Keep the brain packed: a detached `git repack --geometric=2 -d -l` once loose objects take
a quarter of the room the packs do (docs/memory.md, "Packing").

Every write leaves a few loose objects of 4 KB or more each (a session log, the sessions/ folder's
tree, the root tree, the commit); packed, with deltas, they take a few hundred bytes. So the
threshold follows the packs: once the loose objects, sampled, take more than 1/SHARE of the
packs' room (and number more than a floor, so a new brain is not repacked after every write), a
repack starts. A geometric repack folds the loose objects into a new pack and merges packs so
that each is at least twice the next smaller: a few packs at any size, and each object
rewritten O(log n) times over the brain's life.

The repack runs in its own session, holding `<brain>/agy/pack.lock` (a flock inherited by the
child, so the kernel releases it when the repack ends, however it ends); while it is held no
second repack starts, and a write does not wait for it. Only when writes outrun the running
repack (the loose objects past 1/CAP of the packs) does a write wait for it to end, at most
WAIT_LIMIT seconds, and start the next: that is what keeps a burst of writes within twice the
packed size. `gc.auto=0` in the brain's config turns this off, as it does git's own auto gc.
Standard library only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from gitstate.storage import private

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# Loose objects are spread over objects/00..ff by their id's first byte; these 16 hold 1/16.
SAMPLE = tuple(f"0{digit:x}" for digit in range(16))
FLOOR = 16  # loose objects (about 64 KB) a brain may hold whatever its packs
SHARE = 4  # a repack starts once the loose objects take more than 1/SHARE of the packs' room
CAP = 2  # ... and a write waits for the running one once they take more than 1/CAP
WAIT_LIMIT = 10.0  # seconds a write waits for a running repack, at most
LOCK_FILE = "pack.lock"
COMMAND = ("git", "repack", "--geometric=2", "-d", "-l", "-q")


def loose_sample(objects: Path) -> list[Path]:
    """The loose objects in the sampled folders (1/16 of them, on average)."""
    found: list[Path] = []
    for name in SAMPLE:
        folder = objects / name
        with contextlib.suppress(OSError):
            found.extend(folder / entry for entry in os.listdir(folder))
    return found


def _disk(path: Path) -> int:
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


def packed_bytes(objects: Path) -> int:
    try:
        names = os.listdir(objects / "pack")
    except OSError:
        return 0
    return sum(_disk(objects / "pack" / name) for name in names)


def pressure(objects: Path) -> float:
    """The sampled loose objects' room on disk, scaled up, over the packs' (0 while they number
    FLOOR or fewer; infinite with no pack yet)."""
    sample = loose_sample(objects)
    scale = 256 // len(SAMPLE)
    if len(sample) * scale <= FLOOR:
        return 0.0
    loose = sum(_disk(path) for path in sample) * scale
    packs = packed_bytes(objects)
    return loose / packs if packs else float("inf")


def due(objects: Path) -> bool:
    """The loose objects number more than FLOOR and take more than 1/SHARE of the packs' room:
    a quarter, so that what the writes add while the repack runs still leaves the brain within
    twice its packed size (docs/memory.md, "Packing")."""
    return pressure(objects) * SHARE > 1


def start(git_dir: Path, lock_dir: Path, wait: float = 0.0) -> bool:
    """Start the repack, detached; False when one is running (after waiting up to `wait`
    seconds for it to end) or git cannot be started. Never raises."""
    import subprocess  # here: only the rare write with a repack due pays for it

    lock = private.open_fd(lock_dir / LOCK_FILE, os.O_WRONLY | os.O_CREAT)
    try:
        if not _take(lock, wait):
            return False  # a repack is running: it takes these objects too, or the next one will
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        try:
            with private.Umask():  # the packs are as private as the objects
                subprocess.Popen(
                    COMMAND,
                    cwd=git_dir,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    pass_fds=(lock,),  # the child holds the flock until it exits
                )
        except OSError:
            return False  # no git on PATH: the brain only grows
        return True
    finally:
        os.close(lock)


def _take(lock: int, wait: float) -> bool:
    """The flock on `lock`, polled every 10 ms for up to `wait` seconds (flock has no timeout;
    a signal-based one would disturb the caller)."""
    import time

    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
        time.sleep(0.01)
