"""The brain's full-text index: SQLite FTS5 in the brain's git dir, derived from the ref.

Never the source of truth: it records the tip it was built from and the blob each file was
indexed from, catches up by blob id (a file whose blob did not change is not read), and is
thrown away and rebuilt when it is missing, corrupt, or of another schema. Files are cut into
overlapping chunks, each remembering its file; CJK text is segmented (document/search_text.py).
"""

from __future__ import annotations

import os
import stat

from gitstate.memory.document import search_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3 as sqlite3  # re-exported: usecases/search.py catches its errors
    from collections.abc import Callable
    from pathlib import Path
else:
    try:
        # The C module the sqlite3 package re-exports: the package adds datetime and its
        # adapters (the index stores no dates), about 2 ms of every `memory search`. The same
        # classes: sqlite3.DatabaseError elsewhere catches what this raises.
        import _sqlite3 as sqlite3
    except ImportError:  # pragma: no cover - an interpreter without it
        import sqlite3

SCHEMA = "1"
BUSY_TIMEOUT = 30.0
SNIPPET_TOKENS = 24

_CREATE = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(path TEXT PRIMARY KEY, blob TEXT NOT NULL);
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    seq INTEGER NOT NULL,
    content TEXT NOT NULL
);
CREATE INDEX chunks_path ON chunks(path);
CREATE VIRTUAL TABLE chunks_fts USING fts5(body, tokenize='porter unicode61 remove_diacritics 2');
INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('hashsize', 16777216)
"""
# FTS5 keeps a transaction's new terms in memory up to `hashsize` bytes before writing them out
# as a segment, which later merges rewrite: at 16 MiB instead of 1 a full rebuild of 10,000
# session blocks writes one segment, not a dozen, and costs about 15% less CPU (measured).


# Plain classes, not NamedTuples: `memory search` loads no `typing` (search_cli.py).
class Hit:
    __slots__ = ("chunk", "path", "score", "snippet")

    def __init__(self, path: str, snippet: str, score: float, chunk: int) -> None:
        self.path = path
        self.snippet = snippet
        self.score = score  # higher is better (FTS5's bm25, negated)
        self.chunk = chunk

    def as_json(self) -> dict[str, object]:
        return {"path": self.path, "snippet": self.snippet, "score": self.score}


class CaughtUp:
    __slots__ = ("indexed", "rebuilt", "removed", "tip")

    def __init__(self, tip: str | None, indexed: int, removed: int, rebuilt: bool) -> None:
        self.tip = tip
        self.indexed = indexed  # files (re)indexed
        self.removed = removed  # files dropped
        self.rebuilt = rebuilt


class Index:
    """One open index file. Every method may raise sqlite3.DatabaseError on a corrupt file;
    the caller then calls rebuild() and tries again."""

    def __init__(self, path: str | Path) -> None:
        self.path = os.fspath(path)  # a str: `memory search` loads no pathlib (docs/memory.md)
        self.db: sqlite3.Connection | None = None

    def connect(self) -> sqlite3.Connection:
        if self.db is None:
            folder = os.path.dirname(self.path)
            if not _is_private(folder, stat.S_ISDIR) or not _is_private(self.path, stat.S_ISREG):
                _make_private(folder, self.path)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None)
            try:
                db.execute("PRAGMA synchronous=NORMAL")
                row = _schema_row(db)
                if row is None:
                    _create(db)
                elif row != SCHEMA:
                    raise sqlite3.DatabaseError(f"index schema {row}, expected {SCHEMA}")
            except BaseException:
                db.close()
                raise
            self.db = db
        return self.db

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def rebuild(self) -> None:
        """Throw the file away (with its journal) and start an empty index."""
        self.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            try:  # noqa: SIM105 (`memory search` loads no contextlib)
                os.unlink(self.path + suffix)
            except FileNotFoundError:
                pass
        self.connect()

    def tip(self) -> str | None:
        row = self.connect().execute("SELECT value FROM meta WHERE key = 'tip'").fetchone()
        return str(row[0]) if row else None

    def counts(self) -> tuple[int, int]:
        db = self.connect()
        files = db.execute("SELECT count(*) FROM files").fetchone()[0]
        chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return int(files), int(chunks)

    def catch_up(
        self,
        tip: str | None,
        list_tree: Callable[[], dict[str, str]],
        load: Callable[[str], bytes],
    ) -> CaughtUp:
        """Make the index hold exactly the tip's tree (`list_tree()`: path -> blob id); the
        tree is listed only when the index is behind."""
        db = self.connect()
        if self.tip() == (tip or ""):
            return CaughtUp(tip, 0, 0, False)
        db.execute("BEGIN IMMEDIATE")  # one writer; a concurrent search waits, then sees it done
        try:
            if self.tip() == (tip or ""):
                db.execute("COMMIT")
                return CaughtUp(tip, 0, 0, False)
            listing = list_tree()
            have = dict(db.execute("SELECT path, blob FROM files").fetchall())
            removed = 0
            for path in sorted(set(have) - set(listing)):
                self._drop(path)
                removed += 1
            indexed = 0
            for path, blob in sorted(listing.items()):
                if have.get(path) == blob or not path.endswith(".md"):
                    continue
                if path in have:  # a rebuild starts empty: nothing to delete, 3 statements saved
                    self._drop(path)
                self._add(path, blob, load(blob).decode("utf-8", "replace"))
                indexed += 1
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('tip', ?)", (tip or "",))
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise
        return CaughtUp(tip, indexed, removed, False)

    def _drop(self, path: str) -> None:
        db = self.connect()
        db.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE path = ?)", (path,)
        )
        db.execute("DELETE FROM chunks WHERE path = ?", (path,))
        db.execute("DELETE FROM files WHERE path = ?", (path,))

    def _add(self, path: str, blob: str, text: str) -> None:
        db = self.connect()
        pieces = search_text.chunks(text)
        # Ids chosen here, so that each table takes the file's chunks in one executemany
        # (inside catch_up's transaction: no other writer picks the same ids).
        first = int(db.execute("SELECT coalesce(max(id), 0) + 1 FROM chunks").fetchone()[0])
        db.executemany(
            "INSERT INTO chunks(id, path, seq, content) VALUES (?, ?, ?, ?)",
            [(first + seq, path, seq, piece) for seq, piece in enumerate(pieces)],
        )
        db.executemany(
            "INSERT INTO chunks_fts(rowid, body) VALUES (?, ?)",
            [(first + seq, search_text.segment(piece)) for seq, piece in enumerate(pieces)],
        )
        db.execute("INSERT INTO files(path, blob) VALUES (?, ?)", (path, blob))

    def search(
        self, match: str, limit: int, keep: Callable[[str], bool] | None = None
    ) -> list[Hit]:
        """Chunks matching the FTS5 expression, best first; with `keep`, only the chunks whose
        text it keeps (read in batches until `limit` are kept or none is left)."""
        left, right = search_text.HIGHLIGHT
        batch = limit if keep is None else 2 * limit + 8
        hits: list[Hit] = []
        offset = 0
        while True:
            rows = (
                self.connect()
                .execute(
                    # `rank` (bm25 by default) lets FTS5 sort by itself, and snippet() then
                    # runs for the rows returned only: about twice as fast as ORDER BY bm25(...).
                    "SELECT c.path, c.seq, snippet(chunks_fts, 0, ?, ?, '…', ?), rank, c.content "
                    "FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                    "WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ? OFFSET ?",
                    (left, right, SNIPPET_TOKENS, match, batch, offset),
                )
                .fetchall()
            )
            for path, seq, snippet, rank, content in rows:
                if keep is None or keep(content):
                    text = search_text.unsegment(snippet).strip()
                    hits.append(Hit(path, text, round(-float(rank), 6), seq))
                    if len(hits) == limit:
                        return hits
            if len(rows) < batch:
                return hits
            offset += batch


def _is_private(path: str, kind: Callable[[int], bool]) -> bool:
    """`path` is there, of that kind, with no group or other bits: nothing to make or tighten
    (the usual open, which so needs neither storage/private.py nor a write open)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return kind(mode) and not mode & 0o077


def _make_private(folder: str, path: str) -> None:
    from gitstate.storage import private

    if not os.path.isdir(folder):
        from pathlib import Path

        private.make_dir(Path(folder))
    else:
        private.tighten(folder, private.DIR_MODE)  # one an older version made
    # SQLite gives its journal the database file's mode: a 0600 file keeps both private
    # (docs/memory.md); an index an older version made is tightened here.
    try:  # noqa: SIM105 (`memory search` loads no contextlib)
        private.create_file(path)
    except OSError:
        pass  # read-only: SQLite opens it read-only


def _schema_row(db: sqlite3.Connection) -> str | None:
    exists = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if exists is None:
        return None
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    return str(row[0]) if row else ""


def _create(db: sqlite3.Connection) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        if _schema_row(db) is None:  # another process may have created it meanwhile
            for statement in _CREATE.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO meta(key, value) VALUES ('schema', ?)", (SCHEMA,))
        db.execute("COMMIT")
    except BaseException:
        _rollback(db)
        raise


def _rollback(db: sqlite3.Connection) -> None:
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # a corrupt file: the caller rebuilds it
