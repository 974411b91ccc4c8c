"""Questions about the commit graph, answered as plain values: merge base, ancestry, commit time,
whether an object is there at all.

Use cases ask these by intent (sync: "is the remote chain ahead of mine?") and get ids, bools and
ints back, never a pygit2 object. The module loads no pygit2 itself: the Store it is given already
holds the open repository, so a command that imports it and never asks (a sync with nothing to
merge) pays nothing for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitstate.storage.snapshots import Store


def merge_base(store: Store, a: str, b: str) -> str | None:
    """The best common ancestor of two commits; None when their histories never meet."""
    base = store.repo.merge_base(a, b)
    return str(base) if base else None


def is_descendant(store: Store, commit: str, ancestor: str) -> bool:
    """Is `ancestor` a strict ancestor of `commit`? False when both are the same commit (where
    `git merge-base --is-ancestor`, gitcli.is_ancestor, says yes)."""
    return bool(store.repo.descendant_of(commit, ancestor))


def commit_time(store: Store, commit: str) -> int:
    """The committer time of `commit` (a tag is peeled to its commit), in seconds."""
    import pygit2  # already loaded: the store holds a pygit2 repository

    return int(store.repo[commit].peel(pygit2.Commit).commit_time)


def has_object(store: Store, oid: str) -> bool:
    """Is the object `oid` in this repository? False too for text that is no object id."""
    try:
        store.repo[oid]
    except (KeyError, ValueError):
        return False
    return True
