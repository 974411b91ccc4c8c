"""The plain-text cache of the brain: its tip's memory files as ordinary files.

Written after every update of refs/agy/memory by this tool, read by the agent hook, which must
not load pygit2. Files are replaced atomically (a reader sees the old or the new text, never a
half) and are private to their owner (0700/0600, docs/memory.md); `.manifest` records the blob
each file was written from, so an update writes only what changed; `.tip` (written last) names
the commit the cache mirrors. Standard library only.
"""

from __future__ import annotations

from pathlib import Path

from gitstate.memory.document.files import is_memory_path
from gitstate.storage import private

TIP_FILE = ".tip"
MANIFEST_FILE = ".manifest"
READ_LIMIT = 1024 * 1024

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def read_text(cache_dir: Path, path: str) -> str | None:
    if not is_memory_path(path):
        return None
    data = _read(cache_dir / path, READ_LIMIT)
    return None if data is None else data.decode("utf-8", errors="replace")


def _read(path: Path, limit: int) -> bytes | None:
    """A cache file's bytes, or None: regular files only, non-blocking and bounded, so a FIFO in
    the cache cannot hold the inject hook (storage/view.py:read_regular)."""
    from gitstate.storage.view import NotRegular, read_regular

    try:
        return read_regular(path, limit)
    except NotRegular:
        return None


def tip(cache_dir: Path) -> str | None:
    data = _read(cache_dir / TIP_FILE, 4096)
    return (data.decode("utf-8", errors="replace").strip() or None) if data else None


def _manifest(cache_dir: Path) -> dict[str, str]:
    data = _read(cache_dir / MANIFEST_FILE, READ_LIMIT)
    if data is None:
        return {}
    text = data.decode("utf-8", errors="replace")
    found = {}
    for line in text.splitlines():
        blob, _, path = line.partition(" ")
        if path:
            found[path] = blob
    return found


def _replace(path: Path, data: bytes) -> None:
    if not path.parent.is_dir():
        private.make_dir(path.parent)
    private.write_file(path, data)


def update(
    cache_dir: Path, commit: str, listing: dict[str, str], load: Callable[[str], bytes]
) -> int:
    """Mirror `listing` (path -> blob id, the tip's tree) into the cache; `load(blob)` reads a
    blob. Returns the number of files written or removed."""
    private.make_dir(cache_dir)  # also tightens a cache an older version made
    old = _manifest(cache_dir)
    changed = 0
    for path, blob in sorted(listing.items()):
        if not is_memory_path(path):
            continue
        target = cache_dir / path
        if old.get(path) == blob and target.is_file():
            continue
        _replace(target, load(blob))
        changed += 1
    for path in old:
        if path not in listing and is_memory_path(path):
            (cache_dir / path).unlink(missing_ok=True)
            changed += 1
    manifest = "".join(f"{blob} {path}\n" for path, blob in sorted(listing.items()))
    _replace(cache_dir / MANIFEST_FILE, manifest.encode())
    _replace(cache_dir / TIP_FILE, (commit + "\n").encode())
    return changed
