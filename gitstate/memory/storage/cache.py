"""The plain-text cache of the brain: its tip's memory files as ordinary files.

Written after every update of refs/agy/memory by this tool, read by the agent hook, which must
not load pygit2. Files are replaced atomically (a reader sees the old or the new text, never a
half) and are private to their owner (0700/0600, docs/memory.md); `.manifest` records the blob
each file was written from, so an update writes only what changed; `.tip` (written last) names
the commit the cache mirrors. Standard library only.

A write moves the cache by what it changed (`advance`): the touched files, one line appended to
the manifest per file, `.tip`; so an add costs the same in a brain of 10 files or of 5,000. The
manifest is a log whose later lines win; it is rewritten whole by a full `update` (after a sync,
or a cache that fell behind) and when it has grown past MANIFEST_COMPACT_AT. Only
newline-terminated lines count: a line torn by a crash is the file's unterminated tail, and the
`.tip` written after it is then stale, so the next command does a full update.

Paths are joined with os.path: `cache_dir` may be a str (the search path, which loads no
pathlib, docs/memory.md "Search") or a Path.
"""

from __future__ import annotations

import os

from gitstate.memory.document.files import is_memory_path
from gitstate.storage import private

TIP_FILE = ".tip"
MANIFEST_FILE = ".manifest"
READ_LIMIT = 1024 * 1024
MANIFEST_LIMIT = 16 * READ_LIMIT  # never reached: compacted long before
MANIFEST_COMPACT_AT = 256 * 1024  # bytes of appended log before it is rewritten whole
GONE = "-"  # the blob of a manifest line recording a removed file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    Dir = str | Path


def read_text(cache_dir: Dir, path: str) -> str | None:
    if not is_memory_path(path):
        return None
    data = _read(os.path.join(cache_dir, path), READ_LIMIT)
    return None if data is None else data.decode("utf-8", errors="replace")


def _read(path: str, limit: int) -> bytes | None:
    """A cache file's bytes, or None: regular files only, non-blocking and bounded, so a FIFO in
    the cache cannot hold the inject hook (storage/view.py:read_regular)."""
    from gitstate.storage.view import NotRegular, read_regular

    try:
        return read_regular(path, limit)
    except NotRegular:
        return None


def tip(cache_dir: Dir) -> str | None:
    data = _read(os.path.join(cache_dir, TIP_FILE), 4096)
    return (data.decode("utf-8", errors="replace").strip() or None) if data else None


def read_bytes(cache_dir: Dir, path: str) -> bytes | None:
    """A cached memory file's bytes as stored (for a reader that checks them by blob id)."""
    return _read(os.path.join(cache_dir, path), READ_LIMIT) if is_memory_path(path) else None


def manifest(cache_dir: Dir) -> dict[str, str]:
    """path -> the blob id each cached file was written from."""
    return _manifest(cache_dir)


def _manifest(cache_dir: Dir) -> dict[str, str]:
    """path -> the blob its cached file was written from (a removed file is not there)."""
    data = _read(os.path.join(cache_dir, MANIFEST_FILE), MANIFEST_LIMIT)
    if data is None:
        return {}
    found: dict[str, str] = {}
    for line in data.decode("utf-8", errors="replace").split("\n")[:-1]:
        blob, _, path = line.partition(" ")
        if not path:
            continue
        if blob == GONE:
            found.pop(path, None)
        else:
            found[path] = blob
    return found


def _replace(path: str, data: bytes) -> None:
    from pathlib import Path  # writers only: private.py takes Paths

    target = Path(path)
    if not target.parent.is_dir():
        private.make_dir(target.parent)
    private.write_file(target, data)


def _as_path(path: Dir) -> Path:
    from pathlib import Path

    return Path(path)


def _unlink(path: str) -> None:
    try:  # noqa: SIM105 (`memory search` loads no contextlib)
        os.unlink(path)
    except FileNotFoundError:
        pass


def _write_manifest(cache_dir: Dir, entries: dict[str, str]) -> None:
    lines = "".join(f"{blob} {path}\n" for path, blob in sorted(entries.items()))
    _replace(os.path.join(cache_dir, MANIFEST_FILE), lines.encode())


def _append_manifest(cache_dir: Dir, lines: str) -> None:
    """One write with O_APPEND: no rename, and the old lines are never rewritten."""
    fd = private.open_fd(
        os.path.join(cache_dir, MANIFEST_FILE), os.O_WRONLY | os.O_CREAT | os.O_APPEND
    )
    try:
        view = memoryview(lines.encode())
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def update(
    cache_dir: Dir, commit: str, listing: dict[str, str], load: Callable[[str], bytes]
) -> int:
    """Mirror `listing` (path -> blob id, the tip's tree) into the cache; `load(blob)` reads a
    blob. Returns the number of files written or removed."""
    private.make_dir(_as_path(cache_dir))  # also tightens a cache an older version made
    old = _manifest(cache_dir)
    changed = 0
    for path, blob in sorted(listing.items()):
        if not is_memory_path(path):
            continue
        target = os.path.join(cache_dir, path)
        if old.get(path) == blob and os.path.isfile(target):
            continue
        _replace(target, load(blob))
        changed += 1
    for path in old:
        if path not in listing and is_memory_path(path):
            _unlink(os.path.join(cache_dir, path))
            changed += 1
    _write_manifest(cache_dir, listing)
    _replace(os.path.join(cache_dir, TIP_FILE), (commit + "\n").encode())
    return changed


def advance(
    cache_dir: Dir, parent: str, commit: str, changes: dict[str, tuple[str, bytes] | None]
) -> bool:
    """Move the cache from `parent` to `commit`, which differs from it by `changes` (path ->
    (blob id, bytes), None: removed). False, touching nothing, when the cache does not mirror
    `parent` (the caller then runs a full `update`)."""
    try:
        size = os.stat(os.path.join(cache_dir, MANIFEST_FILE)).st_size
    except OSError:
        return False  # no record of what the cache holds: only a full update knows
    if tip(cache_dir) != parent:
        return False
    log = []
    for path, change in sorted(changes.items()):
        if not is_memory_path(path):
            continue
        target = os.path.join(cache_dir, path)
        if change is None:
            _unlink(target)
            log.append(f"{GONE} {path}\n")
        else:
            _replace(target, change[1])
            log.append(f"{change[0]} {path}\n")
    if size >= MANIFEST_COMPACT_AT:
        entries = _manifest(cache_dir)
        for line in log:
            blob, _, path = line[:-1].partition(" ")
            if blob == GONE:
                entries.pop(path, None)
            else:
                entries[path] = blob
        _write_manifest(cache_dir, entries)
    elif log:
        _append_manifest(cache_dir, "".join(log))
    _replace(os.path.join(cache_dir, TIP_FILE), (commit + "\n").encode())
    return True
