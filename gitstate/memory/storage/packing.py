"""Keep the brain packed: a detached `git repack --geometric=2 -d -l` once loose objects cost
more disk than the packs do (docs/memory.md, "On disk").

Every write leaves a few loose objects of 4 KB or more each (a session log, the sessions/ folder's
tree, the root tree, the commit); packed, with deltas, they take a few hundred bytes. So the
threshold follows the packs: once the loose objects, sampled, take more than half the room of the
packs (and number more than a floor, so a new brain is not repacked after every write), a repack
starts, which keeps the brain within about twice its packed size. A geometric repack folds the loose objects
into a new pack and merges packs so that each is at least twice the next smaller: a few packs at
any size, and each object rewritten O(log n) times over the brain's life.

The write never waits: the repack runs in its own session, holding `<brain>/agy/pack.lock` (a
flock inherited by the child, so the kernel releases it when the repack ends, however it ends);
while it is held no second repack starts. `gc.auto=0` in the brain's config turns this off, as it
does git's own auto gc. Standard library only.
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
FLOOR = 64  # loose objects (about 300 KB) a brain may hold whatever its packs
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


def due(objects: Path) -> bool:
    """The sampled loose objects, scaled up, number more than FLOOR and take more than half the
    room of the packs on disk (half: the sample is rough, and writes go on while a repack runs,
    so the brain stays within twice its packed size)."""
    sample = loose_sample(objects)
    scale = 256 // len(SAMPLE)
    if len(sample) * scale <= FLOOR:
        return False
    loose = sum(_disk(path) for path in sample) * scale
    return loose * 2 > packed_bytes(objects)


def start(git_dir: Path, lock_dir: Path) -> bool:
    """Start the repack, detached; False when one is running (or git cannot be started).
    Never raises, never waits."""
    import subprocess  # here: only the rare write with a repack due pays for it

    lock = private.open_fd(lock_dir / LOCK_FILE, os.O_WRONLY | os.O_CREAT)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
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
