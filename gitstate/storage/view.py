"""STATE.md in the work tree: reading it, replacing it atomically, and knowing if it is clean.

The view record (`<gitdir>/agy/view`) remembers which snapshot was last written to the view and
the git blob id of the bytes written, so "clean or dirty" needs no pygit2 (hooks read this).
Standard library only. The view is written before its record: a crash in between leaves a view
that reads as dirty but equals the tip, which the next save recognises; never the reverse.
"""

from __future__ import annotations

import os
import time
from collections import namedtuple
from pathlib import Path

from gitstate.document.model import MAX_BYTES
from gitstate.document.validate import Problem
from gitstate.errors import InvalidDocument
from gitstate.storage.layout import Layout

TMP_PREFIX = ".STATE.md.agy-"


# Type checkers take this as typing.TYPE_CHECKING (True); at run time `typing` stays unloaded:
# the stop guard reads the record on every agent stop (see storage/layout.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

    class _RecordFields(NamedTuple):
        ref: str  # the chain the view belongs to
        snapshot: str  # commit id last written to the view
        blob: str  # git blob id of the bytes written

else:
    _RecordFields = namedtuple("_RecordFields", "ref snapshot blob")


class Record(_RecordFields):
    __slots__ = ()


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob (SHA-1 repositories)."""
    try:
        # CPython's built-in SHA-1: the stop guard runs every turn, and hashlib's OpenSSL
        # start-up costs it a few milliseconds.
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha1
    digest: str = sha1(b"blob %d\x00" % len(data) + data).hexdigest()
    return digest


def read(layout: Layout, limit: int = MAX_BYTES + 1) -> bytes | None:
    """The view's bytes (at most `limit`: enough to know it is too big), or None if missing."""
    path = layout.view_path
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        # Not "no view": a later rename onto it would fail after the ref had moved.
        raise _unreadable(f"{path} is a directory, not a file") from None
    except OSError as exc:
        raise _unreadable(f"cannot read {path}: {exc.strerror}") from None


def _unreadable(message: str) -> InvalidDocument:
    problem = Problem(None, message, "not_a_file")
    return InvalidDocument(message, (problem,), hint="STATE.md must be a readable file")


def size(layout: Layout) -> int | None:
    path = layout.view_path
    try:
        return None if path is None else path.stat().st_size
    except FileNotFoundError:
        return None


def _record_path(layout: Layout) -> Path:
    return layout.agy_dir / "view"


def read_record(layout: Layout) -> Record | None:
    """The record is one line, `<snapshot> <blob> <ref>`; anything else counts as no record."""
    try:
        fields = _record_path(layout).read_text().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(fields) != 3:
        return None
    snapshot, blob, ref = fields
    return Record(ref, snapshot, blob)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one rename; a reader sees the old bytes or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{TMP_PREFIX}{os.getpid()}-{time.monotonic_ns()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_record(layout: Layout, record: Record) -> None:
    line = f"{record.snapshot} {record.blob} {record.ref}\n"
    write_atomic(_record_path(layout), line.encode())


def drop_record(layout: Layout) -> None:
    _record_path(layout).unlink(missing_ok=True)


def write(layout: Layout, data: bytes, snapshot: str) -> None:
    """Write the view from a snapshot, then record it (in that order; see the module doc)."""
    path = layout.view_path
    assert path is not None, "a bare repository has no view"
    write_atomic(path, data)
    write_record(layout, Record(layout.state_ref, snapshot, blob_id(data)))


def remove(layout: Layout) -> None:
    path = layout.view_path
    if path is not None:
        path.unlink(missing_ok=True)
    drop_record(layout)


def clean_stale_tmp(layout: Layout) -> None:
    """Remove temp files a killed writer left (called under the work tree's lock)."""
    if layout.workdir is None:
        return
    for leftover in layout.workdir.glob(TMP_PREFIX + "*.tmp"):
        leftover.unlink(missing_ok=True)


def keep_overwritten(layout: Layout, data: bytes) -> Path:
    """Save view bytes about to be overwritten where the user can find them; returns the path."""
    folder = layout.agy_dir / "overwritten"
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    path = folder / f"STATE-{stamp}-{blob_id(data)[:8]}.md"
    write_atomic(path, data)
    return path


def status(layout: Layout, data: bytes | None) -> str:
    """`missing`, `clean` (bytes equal what was last written from the recorded snapshot) or `dirty`."""
    if data is None:
        return "missing"
    record = read_record(layout)
    if record is not None and record.ref == layout.state_ref and record.blob == blob_id(data):
        return "clean"
    return "dirty"
