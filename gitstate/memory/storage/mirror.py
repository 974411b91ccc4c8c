"""The brain's tip without pygit2: its files read from the plain-text cache when the cache mirrors
that commit, each checked against its blob id (the commit itself: BrainLayout.tip).

Standard library only, str paths (no pathlib): `memory index` on a brain whose cache is at the
tip, and a search whose index is behind, never import pygit2 (docs/memory.md, "Search"); a
search on a current index does not import this module at all. Every answer here is certain or
None: a cache at another commit or a cached file whose bytes are not the blob the manifest names
send the caller to the brain through pygit2, as before.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.memory.storage.layout import BrainLayout


class Stale(Exception):
    """A cached file is not the blob its manifest names (torn, edited, or mid-update)."""


class CachedTip:
    """The tip's memory files as the cache holds them: `listing` (path -> blob id) and `load`
    (blob id -> bytes, checked), the two callables the index catches up from."""

    def __init__(self, layout: BrainLayout, listing: dict[str, str]) -> None:
        self.cache_dir = layout.cache_root
        self.listing = listing
        self._paths = {blob: path for path, blob in listing.items()}

    def load(self, blob: str) -> bytes:
        from gitstate.memory.storage import cache as memory_cache

        path = self._paths.get(blob)
        data = None if path is None else memory_cache.read_bytes(self.cache_dir, path)
        if data is None or blob_id(data, len(blob)) != blob:
            raise Stale(f"the cached {path} is not blob {blob}")
        return data


def cached_tip(layout: BrainLayout, tip: str) -> CachedTip | None:
    """The cache's files when the cache mirrors `tip`, else None."""
    # Imported here: a current index (the usual search) reads neither the cache nor its paths.
    from gitstate.memory.document.files import is_memory_path
    from gitstate.memory.storage import cache as memory_cache

    if memory_cache.tip(layout.cache_root) != tip:
        return None
    listing = {
        p: b for p, b in memory_cache.manifest(layout.cache_root).items() if is_memory_path(p)
    }
    return CachedTip(layout, listing)


def blob_id(data: bytes, width: int = 40) -> str:
    """Git's object id of a blob holding `data` (SHA-1, or SHA-256 for 64-digit ids)."""
    import hashlib  # OpenSSL's start-up: only a catch-up from the cache pays for it

    digest = hashlib.sha256() if width == 64 else hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()
