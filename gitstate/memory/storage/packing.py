"""Keep the brain packed: a detached repack once loose objects take a quarter of the room the
packs do, that never rewrites more than a third of the packs (docs/memory.md, "Packing").

Every write leaves a few loose objects of 4 KB or more each (a session log, the sessions/ folder's
tree, the root tree, the commit); packed, with deltas, they take a few hundred bytes. So the
threshold follows the packs: once the loose objects, sampled, take more than 1/SHARE of the
packs' room (and number more than a floor, so a new brain is not repacked after every write), a
repack starts. It runs two gits in turn:

1. `git repack -d -l`: the loose objects reachable from the refs go into a new pack. This one
   walks the history, so git knows each blob's path and finds its deltas against the same file's
   other versions; `--geometric` packs loose objects as an unnamed list, and its deltas came out
   2.6 times as big (docs/memory.md).
2. `git repack --geometric=2 -d -l` with `--keep-pack` for the largest packs: packs merge so that
   each is at least twice the next smaller (a few packs at any size, each object rewritten
   O(log n) times), but only among the smallest packs that together hold at most 1/ROLL of the
   packs' bytes. git writes the merged pack before it deletes the old ones, so a merge of the
   largest pack would double the brain for a moment; capped, a repack adds at most 1/ROLL.
   The largest pack is never rewritten, but a kept pack is not kept for ever: merges grow past
   it as the brain grows, and once it and the smaller packs hold 1/ROLL of the bytes it rolls
   up. This step also packs any loose object step 1 left (one no ref reaches).

The repack runs in its own session, holding `<brain>/agy/pack.lock` (a flock inherited by the
child and its gits, so the kernel releases it when the last of them ends, however it ends); while
it is held no second repack starts, and a write does not wait for it. Only when writes outrun the
running repack (the loose objects past 1/CAP of the packs) does a write wait for it to end, at
most WAIT_LIMIT seconds, and start the next: that is what keeps a burst of writes within twice
the packed size. `gc.auto=0` in the brain's config turns this off, as it does git's own auto gc.
Standard library only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys

from gitstate.storage import private

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

# Loose objects are spread over objects/00..ff by their id's first byte; these 16 hold 1/16.
SAMPLE = tuple(f"0{digit:x}" for digit in range(16))
EXACT = 16  # objects a sample needs to be scaled up; with fewer, every folder is listed
FLOOR = 16  # loose objects (about 64 KB) a brain may hold whatever its packs
SHARE = 4  # a repack starts once the loose objects take more than 1/SHARE of the packs' room
# ... and a write waits for the running one once they take more than 1/CAP. The same quarter:
# with a third, bursts of writes piled up loose objects while a merge ran and the brain peaked
# at 1.8-1.95 times its packed size in its first 500 writes; with a quarter, 1.6-1.75.
CAP = 4
WAIT_LIMIT = 10.0  # seconds a write waits for a running repack, at most
ROLL = 3  # a repack rewrites at most 1/ROLL of the packs' bytes
LOCK_FILE = "pack.lock"
# Bitmaps off whatever the user's config says: git refuses them on an incremental repack.
REPACK = ("git", "repack", "-d", "-l", "-q", "--no-write-bitmap-index")
# -f: the merge searches its deltas afresh. Each small pack holds a whole copy of every file
# it touches and deltas found within it; reused as they are, 2,000 writes left packs 1.7 times
# a fresh pack, searched afresh 1.01-1.06 times (for twice the repacks' CPU).
# --no-pack-kept-objects: the kept packs stay out whatever repack.writeBitmaps says.
MERGE = (*REPACK, "--geometric=2", "-f", "--no-pack-kept-objects")
# The detached child (an isolated interpreter, no site; argv: the --keep-pack options): step 2
# only once step 1 succeeded, and the gits inherit the lock (close_fds=False), so it is held
# until the last one ends.
CHILD = (
    "import subprocess, sys\n"
    f"if subprocess.call({REPACK!r}, close_fds=False) == 0:\n"
    f"    subprocess.call({MERGE!r} + tuple(sys.argv[1:]), close_fds=False)\n"
)


def loose_sample(objects: Path) -> tuple[list[Path], int]:
    """Loose objects and the factor that scales their number up to all of them: those in the
    SAMPLE folders (1/16, on average), or, when these hold fewer than EXACT, those in every
    folder. A sample of a few objects says little (a 1/16 sample of 40 objects is 0 to 6 of
    them), and with so few the whole listing is cheap: git's prune removes emptied folders."""
    found = _listed(objects, SAMPLE)
    if len(found) >= EXACT:
        return found, 256 // len(SAMPLE)
    try:
        folders = [name for name in os.listdir(objects) if len(name) == 2]
    except OSError:
        return [], 1
    return _listed(objects, folders), 1


def _listed(objects: Path, folders: Iterable[str]) -> list[Path]:
    found: list[Path] = []
    for name in folders:
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
    sample, scale = loose_sample(objects)
    if len(sample) * scale <= FLOOR:
        return 0.0
    loose = sum(_disk(path) for path in sample) * scale
    packs = packed_bytes(objects)
    return loose / packs if packs else float("inf")


def packs(objects: Path) -> list[tuple[str, int]]:
    """The complete packs (a .pack with its .idx) as (file name, bytes of the .pack)."""
    folder = objects / "pack"
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        if name.startswith("pack-") and name.endswith(".pack") and name[:-5] + ".idx" in names:
            with contextlib.suppress(OSError):
                found.append((name, os.stat(folder / name).st_size))
    return found


def kept(found: list[tuple[str, int]], roll: int = ROLL) -> list[str]:
    """The packs a repack must not rewrite: all but the smallest ones that together hold at most
    1/roll of the bytes (ties by name, so the choice is stable)."""
    total = sum(size for _, size in found)
    rolled = 0
    keep: list[str] = []
    for name, size in sorted(found, key=lambda pack: (pack[1], pack[0])):
        if keep or (rolled + size) * roll > total:
            keep.append(name)
        else:
            rolled += size
    return sorted(keep)


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
        keep = [f"--keep-pack={name}" for name in kept(packs(git_dir / "objects"))]
        argv = [sys.executable, "-I", "-S", "-c", CHILD, *keep]
        try:
            with private.Umask():  # the packs are as private as the objects
                subprocess.Popen(
                    argv,
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
