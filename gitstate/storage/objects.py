"""What the repository's refs and objects hold, read as plain values for checks and listings.

doctor asks what a ref or an id names (a commit, a tag of one, something else, nothing), and
the archive listing which refs exist under a prefix; neither gets a pygit2 object back. Reads
only: writing objects and moving refs stays with snapshots.py and notes.py.
"""

from __future__ import annotations

from typing import NamedTuple

import pygit2

from gitstate.storage.snapshots import Store

# What reading a damaged repository may raise besides our typed errors: a check that reads
# objects catches these to report "cannot be checked" instead of aborting (usecases/setup/doctor.py).
READ_ERRORS: tuple[type[Exception], ...] = (KeyError, ValueError, pygit2.GitError)


class RefTarget(NamedTuple):
    target: str  # an object id, or for a symbolic ref the name of the ref it points at
    symbolic: bool


class ObjectInfo(NamedTuple):
    id: str
    kind: str  # git's word: commit, tree, blob or tag
    commit: str | None  # the commit it peels to (itself, or a tag's); None when it peels to none


def library_version() -> str:
    """The libgit2 version the store reads and writes with."""
    return str(pygit2.LIBGIT2_VERSION)


def ref_names(store: Store, prefixes: tuple[str, ...]) -> list[str]:
    """The names of the refs that begin with one of `prefixes`, as libgit2 lists them (a loose
    ref file that is no ref at all is skipped, not an error)."""
    return [name for name in store.repo.references if name.startswith(prefixes)]


def ref_exists(store: Store, name: str) -> bool:
    """Whether the ref `name` exists (an unreadable one raises one of READ_ERRORS)."""
    return store.repo.references.get(name) is not None


def ref_target(store: Store, name: str) -> RefTarget | None:
    """What `name` points at, without following it; None when there is no such ref (one that
    cannot be read is a BrokenRef, as Store.reference says)."""
    found = store.reference(name)
    if found is None:
        return None
    symbolic = found.type == pygit2.enums.ReferenceType.SYMBOLIC
    return RefTarget(str(found.target), symbolic)


def describe(store: Store, oid: str) -> ObjectInfo | None:
    """The kind of the object `oid` and the commit it peels to; None when it is missing."""
    obj = store.repo.get(oid)
    if obj is None:
        return None
    try:
        commit: str | None = str(obj.peel(pygit2.Commit).id)
    except (pygit2.GitError, ValueError):  # InvalidSpecError is a ValueError
        commit = None
    return ObjectInfo(str(obj.id), str(obj.type_str), commit)


def empty_tree(store: Store) -> str:
    """The id of the empty tree, written into the object database if it is not there yet (a
    diff from "nothing" names it, as git's own empty tree)."""
    return str(store.repo.TreeBuilder().write())
