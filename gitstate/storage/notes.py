"""Git notes as append-only line logs (pygit2): read every note of a notes ref, append a line.

A notes ref is a commit chain whose tree maps `<annotated object id>` to a blob, either flat or
fanned out as `ab/cdef…` (git switches to fanout as notes grow, and `git notes merge` may write
it); readers here walk both, and an append extends the note where it already lives. Appends build
the notes commit themselves (pygit2's create_note rewrites the ref without compare-and-swap) and
move the ref with Store.compare_and_swap, retrying on a moved tip (storage/refs.py). This module knows lines and
bytes, not what they mean; the plain-text cache for the agent hooks is written here too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pygit2

from gitstate.storage import multivar, refs
from gitstate.storage.layout import DECISIONS_REF as DECISIONS_REF  # the notes ref we write
from gitstate.storage.layout import Layout
from gitstate.storage.snapshots import Store

REWRITE_KEY = "notes.rewriteRef"
HEX = frozenset("0123456789abcdef")
OID_LENGTHS = (40, 64)  # SHA-1 and SHA-256 repositories
# A note bigger than this is never read (its header says how big it is): the cap sync checks
# received notes against (usecases/sync/trust.py, docs/sync.md), kept by readers too, so a
# note that arrived some other way (a plain `git fetch`) costs no more.
MAX_NOTE_BYTES = 1024 * 1024


class Note(NamedTuple):
    target: str  # id of the annotated object
    path: str  # where the note sits in the notes tree: flat `<id>` or fanned out `ab/cd…`
    data: bytes


def read_all(store: Store, ref: str = DECISIONS_REF) -> list[Note]:
    """Every note under `ref`, in tree order; several for one target when the tree holds both
    a flat and a fanned-out entry (git then shows them concatenated)."""
    tip = store.tip(ref)
    if tip is None:
        return []
    tree = store.repo[tip].peel(pygit2.Tree)
    return list(_walk(store.repo, tree, "", ""))


def _walk(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str, path: str) -> Iterator[Note]:
    for entry in tree:
        name = str(entry.name)
        hex_name = prefix + name
        if not _is_hex(name):
            continue  # a non-note entry: git keeps those, and so do we (we never touch them)
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            if len(name) == 2 and len(hex_name) < max(OID_LENGTHS):
                yield from _walk(repo, entry.peel(pygit2.Tree), hex_name, f"{path}{name}/")
        elif len(hex_name) in OID_LENGTHS and _small_blob(repo, entry.id):
            yield Note(hex_name, path + name, bytes(entry.peel(pygit2.Blob).data))


def _small_blob(repo: pygit2.Repository, oid: pygit2.Oid) -> bool:
    try:
        kind, size = repo.odb.read_header(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    return bool(kind == pygit2.GIT_OBJECT_BLOB and size <= MAX_NOTE_BYTES)


def _is_hex(name: str) -> bool:
    return bool(name) and set(name) <= HEX


def append_line(
    store: Store, target: str, line: str, subject: str, ref: str = DECISIONS_REF
) -> str:
    """Append `line` to the note on `target`, creating the note if needed; return the new
    notes commit. Other lines and other notes are left byte for byte as they were."""
    if "\n" in line:
        raise ValueError("a note line holds no newline")
    data = line.encode("utf-8") + b"\n"
    return refs.retry(ref, lambda: _append_once(store, ref, target, data, subject))


def _append_once(store: Store, ref: str, target: str, data: bytes, subject: str) -> str | None:
    """One attempt: the notes commit on the tip as read, the ref swapped; None when it moved."""
    repo = store.repo
    tip = store.tip(ref)
    tree = repo[tip].peel(pygit2.Tree) if tip else None
    parts, old = _locate(tree, target)
    if old and not old.endswith(b"\n"):
        old += b"\n"
    blob = repo.create_blob(old + data)
    new_tree = _put(repo, tree, parts, blob)
    author = store.signature("AUTHOR")
    committer = store.signature("COMMITTER")
    commit = str(
        repo.create_commit(None, author, committer, subject + "\n", new_tree, [tip] if tip else [])
    )
    if store.compare_and_swap(ref, tip, commit, f"agy-state: {subject}"):
        return commit
    return None


def ensure_rewrite_ref(store: Store, ref: str = DECISIONS_REF) -> bool:
    """Add notes.rewriteRef=<ref> unless some config file gives it (a multi-valued key: the
    user's other values stay), so notes follow their commits through amend and rebase. True
    when added."""
    return multivar.add(store, REWRITE_KEY, ref)


def _locate(tree: pygit2.Tree | None, target: str) -> tuple[list[str], bytes]:
    """The path of `target`'s note as parts, and its bytes (b"" when there is none yet).

    Looked up as git does: a flat entry at each level first, then the two-digit fanout folder.
    A new note goes where git would put it: down the fanout folders that exist, and into a new
    one at a level that is fanned out already; flat otherwise (also what git writes for a few
    notes). git reads any mix of the two layouts, so nothing else needs to move.
    """
    parts: list[str] = []
    rest = target
    while tree is not None:
        if rest in tree:
            entry = tree[rest]
            if entry.filemode != pygit2.GIT_FILEMODE_TREE:
                return [*parts, rest], bytes(entry.peel(pygit2.Blob).data)
        folder = rest[:2]
        if len(rest) > 2 and folder in tree and tree[folder].filemode == pygit2.GIT_FILEMODE_TREE:
            parts.append(folder)
            tree = tree[folder].peel(pygit2.Tree)
            rest = rest[2:]
            continue
        if len(rest) > 2 and _fanned_out(tree):
            return [*parts, folder, rest[2:]], b""
        break
    return [*parts, rest], b""


def _fanned_out(tree: pygit2.Tree) -> bool:
    return any(
        e.filemode == pygit2.GIT_FILEMODE_TREE and len(str(e.name)) == 2 and _is_hex(str(e.name))
        for e in tree
    )


def _put(
    repo: pygit2.Repository, tree: pygit2.Tree | None, parts: list[str], blob: pygit2.Oid
) -> pygit2.Oid:
    """A copy of `tree` with the blob at `parts` (a path), sharing every untouched subtree."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    name = parts[0]
    if len(parts) == 1:
        builder.insert(name, blob, pygit2.GIT_FILEMODE_BLOB)
    else:
        sub = None
        if tree is not None and name in tree and tree[name].filemode == pygit2.GIT_FILEMODE_TREE:
            sub = tree[name].peel(pygit2.Tree)
        builder.insert(name, _put(repo, sub, parts[1:], blob), pygit2.GIT_FILEMODE_TREE)
    return builder.write()


# ---- the plain-text cache the agent hooks read (they may not import pygit2) ---------------

PITFALLS_FILE = "pitfalls.md"  # hooks/agent.py:extras_for reads <commondir>/agy/pitfalls.md


def cache_path(layout: Layout, name: str = PITFALLS_FILE) -> Path:
    """Shared by every work tree of the repository, as the notes ref is."""
    return layout.common_agy_dir / name


def write_cache(layout: Layout, text: str | None, name: str = PITFALLS_FILE) -> Path | None:
    """Replace the cache atomically (readers see the old or the new text, never a half);
    None or empty text removes it."""
    path = cache_path(layout, name)
    if not text:
        path.unlink(missing_ok=True)
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
