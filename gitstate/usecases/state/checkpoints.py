"""Checkpoints: annotated tags `checkpoint-YYYYMMDD-HHMMSS` (UTC) on HEAD carrying the state.

A checkpoint marks the code (the tag's commit) and the state (its `Agy-State:` trailer) together.
Names are never reused: a name already taken moves to the next free second, and the tag ref is
created only if absent, so no checkpoint is ever overwritten. The work tree, the index and the
branches are never touched; only `refs/tags/checkpoint-*` is written.
"""

from __future__ import annotations

import re
import time
from typing import NamedTuple

import pygit2

from gitstate.errors import Failure
from gitstate.storage import lock as lock_mod
from gitstate.storage.snapshots import iso_time, parse_trailers
from gitstate.usecases.state import writer as state
from gitstate.usecases.workspace import Workspace

PREFIX = "checkpoint-"
TAGS = "refs/tags/"
STATE_TRAILER = "Agy-State"
NAME_FORMAT = "%Y%m%d-%H%M%S"
MAX_SECONDS_AHEAD = 3600  # how far a clash may push the name before we give up
DEFAULT_SUBJECT_MAX = 72
_SIGNATURE_CRUD = re.compile(r"[<>\n\r]")


class Checkpoint(NamedTuple):
    name: str
    commit: str  # the code: the commit the tag points at
    state: str | None  # the snapshot of its Agy-State trailer (None: a tag made by other tools)
    message: str  # the tag's message without the trailer paragraph
    at: str | None  # tagger time, ISO 8601 (None: a lightweight tag)

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "commit": self.commit,
            "state": self.state,
            "message": self.message,
            "at": self.at,
        }


class Created(NamedTuple):
    checkpoint: Checkpoint
    saved: str | None  # the snapshot the unsaved view was saved as first
    wanted: str  # the name for this second; differs from checkpoint.name after a clash

    def as_json(self) -> dict[str, object]:
        return {**self.checkpoint.as_json(), "saved": self.saved, "moved_from": self.moved_from}

    @property
    def moved_from(self) -> str | None:
        return self.wanted if self.wanted != self.checkpoint.name else None


def create(ws: Workspace, message: str | None = None, allow_secret: bool = False) -> Created:
    """Tag HEAD as `checkpoint-<UTC time>`, carrying the tip snapshot (the view saved first)."""
    store = ws.store
    head, _branch = store.head_info()
    if head is None:
        raise Failure(
            "HEAD has no commit yet; a checkpoint marks a commit",
            hint="commit first (git commit), then git agy-state checkpoint",
        )
    saved: str | None = None
    if ws.layout.workdir is not None:
        # Invalid or risky unsaved edits refuse the checkpoint, as they refuse a save.
        written = state.save(ws, origin="checkpoint")
        if written.outcome == "saved":
            saved = written.snapshot
    snapshot = store.tip()
    if snapshot is None:
        raise Failure(
            "there is no state to checkpoint yet",
            hint="a checkpoint records the code and the state together; start the state first: "
            "git agy-state patch --set goal=…",
        )
    tagger = store.signature("COMMITTER")
    text = (message or "").strip() or _default_subject(ws, snapshot)
    if not allow_secret:
        state.refuse_secret_in("checkpoint message", text)  # tags travel with sync and pre-push
    body = f"{text}\n\n{STATE_TRAILER}: {snapshot}\n"
    # One writer of checkpoint names at a time across this repository's work trees: libgit2
    # checks that a ref is absent before it takes the ref's lock, so two processes could
    # otherwise both "create" the same name.
    with lock_mod.held(ws.layout.commondir / "agy" / "checkpoints.lock"):
        wanted = _name(tagger.time)
        for ahead in range(MAX_SECONDS_AHEAD):
            name = _name(tagger.time + ahead)
            ref = TAGS + name
            if store.repo.references.get(ref) is not None:
                continue  # taken: the next free second
            tag = _write_tag(store.repo, head, name, tagger, body)
            if store.compare_and_swap(ref, None, tag, f"agy-state: checkpoint {name}"):
                made = Checkpoint(name, head, snapshot, text, iso_time(tagger.time, tagger.offset))
                return Created(made, saved, wanted)
            # Taken meanwhile by a writer outside our lock (a plain git tag): move on.
    raise Failure(
        f"every checkpoint name in the hour after {wanted} is taken; nothing was tagged",
        hint="git agy-state checkpoints lists them",
    )


def listing(ws: Workspace) -> list[Checkpoint]:
    """Every `refs/tags/checkpoint-*`, newest first (names are UTC times, so by name)."""
    repo = ws.store.repo
    names = sorted(
        (r[len(TAGS) :] for r in repo.references if r.startswith(TAGS + PREFIX)), reverse=True
    )
    found = (find(ws, name) for name in names)
    return [c for c in found if c is not None]


def find(ws: Workspace, name: str) -> Checkpoint | None:
    """The checkpoint tag `name` (any `checkpoint-*` tag, also one without Agy-State), or None."""
    if not name.startswith(PREFIX):
        return None
    repo = ws.store.repo
    ref = repo.references.get(TAGS + name)
    if ref is None:
        return None
    try:
        obj = repo[ref.resolve().target]
        commit = str(obj.peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None  # a tag of a tree or blob, or a missing object: not a checkpoint
    if not isinstance(obj, pygit2.Tag):
        return Checkpoint(name, commit, None, "", None)  # lightweight, as `git tag` makes
    text, state_id = _split_message(obj.message or "")
    tagger = obj.tagger
    at = iso_time(tagger.time, tagger.offset) if tagger is not None else None
    return Checkpoint(name, commit, _full_id(repo, state_id), text, at)


def code_hint(ws: Workspace, rev: str) -> str | None:
    """How to bring back the code of checkpoint `rev`; None when `rev` is not one carrying a
    state (as Store.resolve decides)."""
    found = find(ws, rev)
    if found is None or found.state is None:
        return None
    return f"git switch --detach {found.name}"


def _name(seconds: int) -> str:
    return PREFIX + time.strftime(NAME_FORMAT, time.gmtime(seconds))


def _default_subject(ws: Workspace, snapshot: str) -> str:
    """`checkpoint: <the step in progress>`, else `checkpoint: <goal>`, else `checkpoint`."""
    doc = ws.snapshot_document(snapshot)
    what = ""
    if doc is not None:
        steps = doc.in_progress()
        goal = [line.strip().removeprefix("- ") for line in doc.section("goal")]
        what = steps[0] if steps else (goal[0] if goal else "")
    subject = f"checkpoint: {' '.join(what.split())}" if what.strip() else "checkpoint"
    if len(subject) > DEFAULT_SUBJECT_MAX:
        subject = subject[: DEFAULT_SUBJECT_MAX - 1] + "…"
    return subject


def _split_message(message: str) -> tuple[str, str | None]:
    """(the text before the trailer paragraph, its Agy-State value)."""
    paragraphs = message.strip().split("\n\n")
    state_id = parse_trailers("x\n\n" + paragraphs[-1]).get(STATE_TRAILER)
    if state_id is None:
        return message.strip(), None
    return "\n\n".join(paragraphs[:-1]).strip(), state_id or None


def _full_id(repo: pygit2.Repository, value: str | None) -> str | None:
    if not value:
        return None
    try:
        return str(repo.revparse_single(value).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return value  # not here (yet): report it as written


def _write_tag(
    repo: pygit2.Repository, target: str, name: str, tagger: pygit2.Signature, message: str
) -> str:
    """The annotated tag object, written on its own so the ref can be created compare-and-swap
    (pygit2's create_tag writes the ref too, with no expected value and no reflog)."""
    who = _SIGNATURE_CRUD.sub("", tagger.name).strip() or "git-agy-state"
    email = _SIGNATURE_CRUD.sub("", tagger.email).strip()
    sign = "-" if tagger.offset < 0 else "+"
    hours, minutes = divmod(abs(tagger.offset), 60)
    raw = (
        f"object {target}\ntype commit\ntag {name}\n"
        f"tagger {who} <{email}> {tagger.time} {sign}{hours:02d}{minutes:02d}\n\n{message}"
    )
    return str(repo.odb.write(pygit2.enums.ObjectType.TAG, raw.encode("utf-8")))
