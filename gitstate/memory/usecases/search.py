"""`memory search` and `memory index`: the FTS5 index, always answering from the ref's tip.

Before every search the index catches up with the tip (by blob id: unchanged files are not read
again). A missing index is built; a corrupt one (or one of another schema) is thrown away and
rebuilt, then the search runs again; only a second failure is reported.

The tip is first read without pygit2 (BrainLayout.tip): a current index answers at once, and
one that is behind catches up from the plain-text cache when the cache is at the tip
(memory/storage/mirror.py). Only when neither holds (or a cached file is not its blob) is the
brain opened through pygit2, which also brings the cache to the tip.
"""

from __future__ import annotations

from gitstate.memory.document.search_text import fts_query, word_filter
from gitstate.memory.storage.fts import CaughtUp, Hit, Index, sqlite3
from gitstate.memory.storage.layout import BrainLayout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    from gitstate.memory.document.wordbreak import Words
    from gitstate.memory.storage.brain import Brain  # pygit2: only when the brain is opened
    from gitstate.memory.storage.mirror import CachedTip  # pygit2: only when the brain is opened

    T = TypeVar("T")

DEFAULT_LIMIT = 10
# A query is what an agent or a person types: past these it is a mistake (or a flood through
# the MCP server's one-call lock), refused before any work (docs/memory.md, "Search").
MAX_QUERY_CHARS = 1000
MAX_QUERY_WORDS = 32
QUERY_HINT = "search for a few words: the chunks that hold all of them come back"


# Plain classes, not NamedTuples: `memory search` loads no `typing` (memory/search_cli.py).
class Indexed:
    __slots__ = ("chunks", "files", "indexed", "path", "rebuilt", "removed", "tip")

    def __init__(
        self,
        tip: str | None,
        files: int,
        chunks: int,
        indexed: int,
        removed: int,
        rebuilt: bool,
        path: str,
    ) -> None:
        self.tip = tip
        self.files = files
        self.chunks = chunks
        self.indexed = indexed
        self.removed = removed
        self.rebuilt = rebuilt
        self.path = path

    def as_json(self) -> dict[str, object]:
        return {
            "tip": self.tip,
            "files": self.files,
            "chunks": self.chunks,
            "indexed": self.indexed,
            "removed": self.removed,
            "rebuilt": self.rebuilt,
            "path": self.path,
        }


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """A broken or foreign file, as opposed to a busy one (which a rebuild must not delete)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return True
    text = str(exc).lower()
    return any(word in text for word in ("no such", "malformed", "not a database", "schema"))


class Source:
    """The tip the index must reflect and how to read its files (the index calls these only
    when it is behind)."""

    __slots__ = ("listing", "load", "tip")

    def __init__(
        self,
        tip: str | None,
        listing: Callable[[], dict[str, str]],
        load: Callable[[str], bytes],
    ) -> None:
        self.tip = tip
        self.listing = listing
        self.load = load


def _plain_source(layout: BrainLayout) -> Source | None:
    """The tip read without pygit2, its files from the cache (None: the ref is unreadable so).
    The cache is read only when the index is behind: a current one needs no manifest (nor
    memory/storage/mirror.py)."""
    tip = layout.tip()
    if tip is None:
        return None
    found: list[CachedTip | None] = []

    def cached() -> CachedTip:
        from gitstate.memory.storage import mirror

        if not found:
            found.append(mirror.cached_tip(layout, tip))
        if found[0] is None:
            raise mirror.Stale("the cache is not at the tip")
        return found[0]

    return Source(tip, lambda: cached().listing, lambda blob: cached().load(blob))


def _brain_source() -> Source:
    from gitstate.memory.document.files import is_memory_path
    from gitstate.memory.usecases.brain import open_brain

    brain, _ = open_brain()
    tip = brain.tip()

    def listing() -> dict[str, str]:
        return {p: b for p, b in brain.listing(tip).items() if is_memory_path(p)}

    return Source(tip, listing, brain.blob)


def _run(work: Callable[[Index, Source, bool], T]) -> T:
    """`work` on the index and the tip's source: without pygit2 when that can be done."""
    layout = BrainLayout()
    plain = _plain_source(layout)
    if plain is not None:
        try:
            return _with_index(layout, lambda index, retry: work(index, plain, retry))
        except Exception as exc:
            # Only the cache raises Stale, and reading it imported mirror: one raised here
            # finds the module loaded; a current index never loads it.
            from gitstate.memory.storage.mirror import Stale

            if not isinstance(exc, Stale):
                raise
            # behind, and the cache cannot say what the tip holds: ask git
    source = _brain_source()
    return _with_index(layout, lambda index, retry: work(index, source, retry))


def _with_index(layout: BrainLayout, work: Callable[[Index, bool], T]) -> T:
    """Run `work` on the caught-up index; rebuild once when the file is corrupt."""
    index = Index(layout.index_file)
    try:
        for attempt in (0, 1):
            try:
                return work(index, attempt == 1)
            except sqlite3.DatabaseError as exc:
                from gitstate.errors import Failure  # only when it fails

                if attempt or not _corrupt(exc):
                    raise Failure(
                        f"the search index {index.path} failed: {exc}",
                        hint="git agy-state memory index --rebuild",
                    ) from None
                try:
                    index.rebuild()
                except (sqlite3.Error, OSError) as again:
                    raise Failure(
                        f"cannot rebuild the search index {index.path}: {again}"
                    ) from None
        raise AssertionError("unreachable")
    finally:
        index.close()


def catch_up(source: Source, index: Index) -> CaughtUp:
    return index.catch_up(source.tip, source.listing, source.load)


def _word_list() -> Words:
    """The word list mapped from its module's source (called at the first hit it judges)."""
    from gitstate.memory.storage import word_list

    return word_list.words()


def _refused(message: str, hint: str | None = None) -> Exception:
    from gitstate.errors import UsageError  # only for a query refused: a search loads no more

    return UsageError(message, hint=hint)


def search(query: str, limit: int = DEFAULT_LIMIT) -> list[Hit]:
    """The chunks that hold every word of QUERY, best first."""
    if len(query) > MAX_QUERY_CHARS:
        raise _refused(
            f"QUERY is {len(query)} characters, over the limit of {MAX_QUERY_CHARS}",
            hint=QUERY_HINT,
        )
    words = len(query.split())
    if words > MAX_QUERY_WORDS:
        raise _refused(
            f"QUERY has {words} words, over the limit of {MAX_QUERY_WORDS}", hint=QUERY_HINT
        )
    match = fts_query(query)
    if not match:
        raise _refused("QUERY has no word to search for")
    if limit < 1:
        raise _refused("--limit must be at least 1")
    keep = word_filter(query, _word_list)

    def work(index: Index, source: Source, _retry: bool) -> list[Hit]:
        catch_up(source, index)
        return index.search(match, limit, keep)

    return _run(work)


def reindex(rebuild: bool = False) -> Indexed:
    """`memory index`: catch up (or, with rebuild, start from an empty index)."""

    def work(index: Index, source: Source, retry: bool) -> Indexed:
        if rebuild and not retry:
            index.rebuild()
        done = catch_up(source, index)
        files, chunks = index.counts()
        return Indexed(
            done.tip,
            files,
            chunks,
            done.indexed,
            done.removed,
            rebuild or retry,
            index.path,
        )

    return _run(work)


def index_state(brain: Brain) -> dict[str, object]:
    """For `memory status`: what the index holds, without catching up."""
    path = brain.layout.index_path
    if not path.exists():
        return {"path": str(path), "tip": None, "current": False, "files": 0, "chunks": 0}
    index = Index(path)
    try:
        tip = index.tip()
        files, chunks = index.counts()
    except sqlite3.DatabaseError:
        return {
            "path": str(path),
            "tip": None,
            "current": False,
            "files": 0,
            "chunks": 0,
            "corrupt": True,
        }
    finally:
        index.close()
    return {
        "path": str(path),
        "tip": tip or None,
        "current": tip == (brain.tip() or ""),
        "files": files,
        "chunks": chunks,
    }
