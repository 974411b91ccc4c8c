"""`memory search` and `memory index`: the FTS5 index, always answering from the ref's tip.

Before every search the index catches up with the tip (by blob id: unchanged files are not read
again). A missing index is built; a corrupt one (or one of another schema) is thrown away and
rebuilt, then the search runs again; only a second failure is reported.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from gitstate.errors import Failure, UsageError
from gitstate.memory.document.search_text import fts_query
from gitstate.memory.storage.brain import Brain
from gitstate.memory.storage.fts import CaughtUp, Hit, Index
from gitstate.memory.usecases.brain import open_brain

DEFAULT_LIMIT = 10
T = TypeVar("T")


class Indexed(NamedTuple):
    tip: str | None
    files: int
    chunks: int
    indexed: int
    removed: int
    rebuilt: bool
    path: str

    def as_json(self) -> dict[str, object]:
        return self._asdict()


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    """A broken or foreign file, as opposed to a busy one (which a rebuild must not delete)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return True
    text = str(exc).lower()
    return any(word in text for word in ("no such", "malformed", "not a database", "schema"))


def _with_index(brain: Brain, work: Callable[[Index, bool], T]) -> T:
    """Run `work` on the caught-up index; rebuild once when the file is corrupt."""
    index = Index(brain.layout.index_path)
    try:
        for attempt in (0, 1):
            try:
                return work(index, attempt == 1)
            except sqlite3.DatabaseError as exc:
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


def catch_up(brain: Brain, index: Index) -> CaughtUp:
    tip = brain.tip()
    return index.catch_up(tip, lambda: brain.listing(tip), brain.blob)


def search(query: str, limit: int = DEFAULT_LIMIT) -> list[Hit]:
    """The chunks that hold every word of QUERY, best first."""
    match = fts_query(query)
    if not match:
        raise UsageError("QUERY has no word to search for")
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    brain, _ = open_brain()

    def work(index: Index, _retry: bool) -> list[Hit]:
        catch_up(brain, index)
        return index.search(match, limit)

    return _with_index(brain, work)


def reindex(rebuild: bool = False) -> Indexed:
    """`memory index`: catch up (or, with rebuild, start from an empty index)."""
    brain, _ = open_brain()

    def work(index: Index, retry: bool) -> Indexed:
        if rebuild and not retry:
            index.rebuild()
        done = catch_up(brain, index)
        files, chunks = index.counts()
        return Indexed(
            done.tip,
            files,
            chunks,
            done.indexed,
            done.removed,
            rebuild or retry,
            str(index.path),
        )

    return _with_index(brain, work)


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
