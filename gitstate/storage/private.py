"""Private runtime files: job folders (prompts, transcripts, unredacted results) and the brain.

Directories are 0700 and files 0600 whatever the umask (docs/jobs.md, docs/memory.md); a
directory an older version made 0755 is tightened when it is next written. Files are
replaced atomically. Standard library only and no `typing` at run time: the agent hook path
may write through here.
"""

from __future__ import annotations

import itertools
import os

DIR_MODE = 0o700
FILE_MODE = 0o600
UMASK = 0o077
# next() on a count is atomic under the GIL: threads of one process never share a name.
_TEMPORARY = itertools.count()

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def make_dir(path: Path) -> Path:
    """`path` as a private directory. Missing parents are created 0700 too (as the XDG base
    directory spec asks of a missing data dir); existing parents are left as they are."""
    missing = []
    current = path
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            continue  # made by a concurrent writer
    tighten(path, DIR_MODE)
    return path


def tighten(path: str | Path, mode: int) -> None:
    """Take group and other bits off `path` when it is ours and has any (best effort: a
    read-only file system or someone else's folder is left alone)."""
    try:
        info = os.stat(path)
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(path, mode)
    except OSError:
        pass


def open_fd(path: str | Path, flags: int) -> int:
    """os.open with 0600 for a file it creates (and 0600 for one it finds, if looser)."""
    fd = os.open(path, flags | os.O_CLOEXEC, FILE_MODE)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, FILE_MODE)
    except OSError:
        pass
    return fd


def write_file(path: Path, data: bytes) -> None:
    """Replace `path` atomically with `data`, mode 0600."""
    # Short and fixed-length, never built from path.name: a name near the file system's limit
    # would otherwise make every later write of that file fail.
    tmp = path.with_name(f".agy-{os.getpid()}-{next(_TEMPORARY)}.tmp")
    fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(tmp, path)


def create_file(path: str | Path) -> None:
    """`path` as an empty 0600 file unless it exists (others then append to it)."""
    os.close(open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND))


class Umask:
    """`with Umask():` — files that libgit2, SQLite or a child process create meanwhile are
    private. The umask is per process: hold it only around a write, never across a wait."""

    def __enter__(self) -> None:
        self.old = os.umask(UMASK)

    def __exit__(self, *exc: object) -> None:
        os.umask(self.old)
