"""Annotated tags (pygit2): create one under the first free name, read one back as plain values.

A tag ref is created only if absent (storage/refs.py: create-only under the ref's own lock), so
a tag is never overwritten, whoever else creates tags at the same moment — another work tree, a
plain `git tag`. The tag object is written on its own first (pygit2's create_tag writes the ref
too, with no expected value and no reflog line); an object for a name that turned out taken is
left to gc, as git leaves any object nothing refers to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

import pygit2

from gitstate.storage.snapshots import Store

TAGS = "refs/tags/"
_SIGNATURE_CRUD = re.compile(r"[<>\n\r]")


class Tag(NamedTuple):
    commit: str  # the commit the tag names (peeled)
    annotated: bool  # a tag object; False: a lightweight tag (the ref names the commit)
    message: str  # the tag object's message ("" for a lightweight tag)
    tagger_time: int | None  # seconds (None: lightweight, or no tagger line)
    tagger_offset: int  # minutes east of UTC


def create_annotated(
    store: Store,
    names: Iterable[str],
    target: str,
    tagger: pygit2.Signature,
    message: str,
    what: str = "tag",
) -> str | None:
    """Tag `target` with `message` under the first of `names` that is free; that name, or None
    when every one is taken. A name taken between the look and the create is skipped too. The
    reflog line is `agy-state: <what> <name>`."""
    for name in names:
        ref = TAGS + name
        if store.reference(ref) is not None:
            continue  # taken: the next one
        tag = _write_tag(store.repo, target, name, tagger, message)
        if store.create_ref(ref, tag, f"agy-state: {what} {name}"):
            return name
    return None


def names(store: Store, prefix: str) -> list[str]:
    """The names of the tags that start with `prefix`, as listed (unsorted)."""
    start = TAGS + prefix
    return [r[len(TAGS) :] for r in store.repo.references if r.startswith(start)]


def read(store: Store, name: str) -> Tag | None:
    """The tag `name`, or None when it is absent or names no commit (a tag of a tree or a
    blob, a missing object)."""
    repo = store.repo
    ref = repo.references.get(TAGS + name)
    if ref is None:
        return None
    try:
        obj = repo[ref.resolve().target]
        commit = str(obj.peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if not isinstance(obj, pygit2.Tag):
        return Tag(commit, False, "", None, 0)
    tagger = obj.tagger
    if tagger is None:
        return Tag(commit, True, obj.message or "", None, 0)
    return Tag(commit, True, obj.message or "", tagger.time, tagger.offset)


def commit_id(store: Store, rev: str) -> str | None:
    """The full id of the commit `rev` names (an abbreviated id, a tag), None when this
    repository lacks it."""
    try:
        return str(store.repo.revparse_single(rev).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _write_tag(
    repo: pygit2.Repository, target: str, name: str, tagger: pygit2.Signature, message: str
) -> str:
    """The annotated tag object alone, as `git tag -a` writes it."""
    who = _SIGNATURE_CRUD.sub("", tagger.name).strip() or "git-agy-state"
    email = _SIGNATURE_CRUD.sub("", tagger.email).strip()
    sign = "-" if tagger.offset < 0 else "+"
    hours, minutes = divmod(abs(tagger.offset), 60)
    raw = (
        f"object {target}\ntype commit\ntag {name}\n"
        f"tagger {who} <{email}> {tagger.time} {sign}{hours:02d}{minutes:02d}\n\n{message}"
    )
    return str(repo.odb.write(pygit2.enums.ObjectType.TAG, raw.encode("utf-8")))
