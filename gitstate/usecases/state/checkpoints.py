"""Checkpoints: annotated tags `checkpoint-YYYYMMDD-HHMMSS` (UTC) on HEAD carrying the state.

A checkpoint marks the code (the tag's commit) and the state (its `Agy-State:` trailer) together.
Names are never reused: a name already taken moves to the next free second, and the tag ref is
created only if absent (storage/tags.py, atomic across processes and work trees), so no
checkpoint is ever overwritten. The work tree, the index and the
branches are never touched; only `refs/tags/checkpoint-*` is written.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from gitstate.errors import Failure
from gitstate.storage import tags
from gitstate.storage.snapshots import iso_time, parse_trailers
from gitstate.usecases.state import writer as state
from gitstate.usecases.workspace import Workspace

PREFIX = "checkpoint-"
TAGS = tags.TAGS
STATE_TRAILER = "Agy-State"
NAME_FORMAT = "%Y%m%d-%H%M%S"
MAX_SECONDS_AHEAD = 3600  # how far a clash may push the name before we give up
DEFAULT_SUBJECT_MAX = 72


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
    wanted = _name(tagger.time)
    names = (_name(tagger.time + ahead) for ahead in range(MAX_SECONDS_AHEAD))
    name = tags.create_annotated(store, names, head, tagger, body, what="checkpoint")
    if name is None:
        raise Failure(
            f"every checkpoint name in the hour after {wanted} is taken; nothing was tagged",
            hint="git agy-state checkpoints lists them",
        )
    made = Checkpoint(name, head, snapshot, text, iso_time(tagger.time, tagger.offset))
    return Created(made, saved, wanted)


def listing(ws: Workspace) -> list[Checkpoint]:
    """Every `refs/tags/checkpoint-*`, newest first (names are UTC times, so by name)."""
    names = sorted(tags.names(ws.store, PREFIX), reverse=True)
    found = (find(ws, name) for name in names)
    return [c for c in found if c is not None]


def find(ws: Workspace, name: str) -> Checkpoint | None:
    """The checkpoint tag `name` (any `checkpoint-*` tag, also one without Agy-State), or None."""
    if not name.startswith(PREFIX):
        return None
    tag = tags.read(ws.store, name)
    if tag is None:
        return None  # absent, or a tag of a tree or blob, or a missing object: not a checkpoint
    if not tag.annotated:
        return Checkpoint(name, tag.commit, None, "", None)  # lightweight, as `git tag` makes
    text, state_id = _split_message(tag.message)
    at = iso_time(tag.tagger_time, tag.tagger_offset) if tag.tagger_time is not None else None
    return Checkpoint(name, tag.commit, _full_id(ws, state_id), text, at)


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


def _full_id(ws: Workspace, value: str | None) -> str | None:
    if not value:
        return None
    return tags.commit_id(ws.store, value) or value  # not here (yet): report it as written
