"""The light reads of the jobs' runtime folder, `<commondir>/agy/jobs/`: which job folders there
are, whether a job's supervisor lives, and which finished jobs wait to be harvested.

The stop guard (hooks/agent.py) asks this on every agent turn, so it loads only the standard
library, storage/view.py and the jobs' pending rule (no pygit2, no `typing` at run time);
files.py, which makes and writes the folders, uses the same scan, lock probe and reader.
"""

from __future__ import annotations

import fcntl
import json
import os
import re

from gitstate.jobs.document.pending import pending_state
from gitstate.storage import view

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from gitstate.storage.hooklayout import AnyLayout as Layout

JOB_ID_RE = re.compile(r"^j-\d{8}-\d{6}-[a-z0-9]{4}$")
META_LIMIT = 1024 * 1024  # a job's meta.json is a few hundred bytes
REPLACED = "replaced while it was read"  # storage/view.py:read_regular's word for it
REREADS = 5  # a file replaced that often in a row is read as missing


def root(layout: Layout) -> Path:
    """`<commondir>/agy/jobs`: one folder per job, named by its id."""
    from pathlib import Path  # the stop guard's scan below goes by os.path (_root)

    return Path(_root(layout))


def root_dir(layout: Layout) -> str:
    """root() as a str, for the loops that read every job's files (no Path per job)."""
    return _root(layout)


def _root(layout: Layout) -> str:
    # os.path: the stop guard's layout is str (storage/hooklayout.py), and pathlib costs it ~5 ms.
    return os.path.join(layout.common_agy_dir, "jobs")


def job_names(layout: Layout) -> list[str]:
    """The names of the job folders (those shaped as a job id), sorted; [] with none."""
    try:
        names = os.listdir(_root(layout))
    except OSError:
        return []
    return sorted(name for name in names if JOB_ID_RE.match(name))


def lock_held(path: Path | str) -> bool:
    """Whether some process holds the flock on `path` (a shared probe, released at once). A
    job's supervisor holds its `supervisor.lock` for as long as it lives; a probe that cannot
    be made counts as held, so that no live job is ever taken for an orphan."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def read_bytes(path: Path | str, limit: int) -> bytes | None:
    """read_regular's bytes, None for what it refuses. A file replaced while it was read (its
    writer renamed a new one into place between the reader's lstat and open) is read again:
    writers replace these files all the time, and taking the moment for a missing file made a
    supervisor that had just started leave its job as if it had none, and the stop guard leave
    a finished job out of its list. Every reader of the job files goes through here (files.py)."""
    for _attempt in range(REREADS):
        try:
            return view.read_regular(path, limit)
        except view.NotRegular as exc:
            if exc.what != REPLACED:
                return None
    return None


def waiting(layout: Layout) -> list[str]:
    """Finished jobs nobody has harvested yet, as `<id> (<state>)`, by the jobs' one rule
    (jobs/document/pending.py). Each meta.json is read only as a regular file, bounded and never
    blocking, and read again when it was replaced meanwhile (read_bytes); the supervisor lock is
    probed only for an active job. What cannot be read is left out."""
    folder = _root(layout)
    found = []
    for name in job_names(layout):
        data = read_bytes(os.path.join(folder, name, "meta.json"), META_LIMIT)
        try:
            meta = json.loads(data) if data is not None else None
        except (ValueError, RecursionError):
            continue
        lock = os.path.join(folder, name, "supervisor.lock")
        state = pending_state(meta, lambda lock=lock: lock_held(lock))  # type: ignore[misc]
        if state is not None:
            found.append(f"{name} ({state})")
    return found
