"""A task's history as values: what `view` draws and `report` writes (docs/report.md).

Built once by collect.py; html.py and markdown.py only render it. Every text here came from
STATE.md, notes, tags, remotes or job records: the renderers escape all of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StepEvent:
    """A step as it moved: added to next_steps, started, paused, blocked, done, undone (its
    line left Done, as a `restore` takes it back), or dropped."""

    kind: str  # "added", "started", "paused", "blocked", "done", "undone", "dropped"
    text: str
    detail: str = ""  # done: the verification; blocked: the reason

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text, "detail": self.detail}


@dataclass(frozen=True)
class Annotation:
    """A decision or a known error, on the commit its note hangs on."""

    id: str
    type: str  # Architecture, Lib, Rule, or KnownIssue
    text: str
    by: str
    at: str
    commit: str  # the commit the note annotates (a code commit, or a snapshot)
    active: bool
    issue: tuple[tuple[str, str], ...] = ()

    @property
    def known_error(self) -> bool:
        return self.type == "KnownIssue"

    def error_label(self) -> tuple[str, str]:
        """A known error as its error type and the rest of its text ("cause → fix"): the
        renderers show the type as the label, so the text does not repeat it."""
        kind = dict(self.issue).get("error_type", "").strip()
        prefix = f"{' '.join(kind.split())}: "
        if kind and self.text.startswith(prefix):
            return kind, self.text[len(prefix) :]
        return kind or "error", self.text

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "text": self.text,
            "by": self.by,
            "at": self.at,
            "commit": self.commit,
            "active": self.active,
            **dict(self.issue),
        }


@dataclass(frozen=True)
class Mark:
    """A checkpoint tag carrying one of the task's snapshots."""

    name: str
    commit: str  # the code
    message: str
    at: str | None

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "commit": self.commit, "message": self.message, "at": self.at}


@dataclass(frozen=True)
class Merge:
    """A sync merge: two chains joined, the sections whose edits met, the ones left over limit."""

    other: str  # the second parent: the remote's snapshot
    conflicts: tuple[str, ...]
    over_limit: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "other": self.other,
            "conflicts": list(self.conflicts),
            "over_limit": list(self.over_limit),
        }


@dataclass(frozen=True)
class Entry:
    """One snapshot on the timeline, with everything that happened at it."""

    commit: str
    time: str  # ISO 8601 with offset
    phase: str
    subject: str
    sections: tuple[str, ...]  # the keys that changed
    diff: str  # unified, against the first parent
    steps: tuple[StepEvent, ...] = ()
    failed: tuple[str, ...] = ()  # failed_attempts lines added here
    annotations: tuple[Annotation, ...] = ()
    checkpoints: tuple[Mark, ...] = ()
    merge: Merge | None = None
    closing: bool = False  # the snapshot that archived the task (no STATE.md)

    def as_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "time": self.time,
            "phase": self.phase,
            "subject": self.subject,
            "sections": list(self.sections),
            "diff": self.diff,
            "steps": [s.as_json() for s in self.steps],
            "failed_attempts": list(self.failed),
            "annotations": [a.as_json() for a in self.annotations],
            "checkpoints": [c.as_json() for c in self.checkpoints],
            "merge": self.merge.as_json() if self.merge else None,
            "closing": self.closing,
        }


@dataclass(frozen=True)
class Job:
    """A background job started while the task was open, as its record says now."""

    id: str
    state: str
    agent: str
    branch: str
    created_at: str
    finished_at: str
    round: int
    result: str  # the agent's status, else the error, else ""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            "agent": self.agent,
            "branch": self.branch,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "round": self.round,
            "result": self.result,
        }


@dataclass(frozen=True)
class Report:
    task: str  # "current", or the archive's name
    ref: str  # the ref the task was read from
    goal: tuple[str, ...]
    phase: str
    tip: str
    entries: tuple[Entry, ...]  # oldest first
    jobs: tuple[Job, ...] = ()
    language: str = "en"
    open_steps: tuple[str, ...] = field(default=())  # next_steps at the tip

    @property
    def title(self) -> str:
        return self.goal[0].removeprefix("- ").strip() if self.goal else self.task

    def annotations(self) -> list[Annotation]:
        return [a for e in self.entries for a in e.annotations]

    def done_steps(self) -> list[StepEvent]:
        """The steps done, each once with its latest completion, in the order they were last
        done; a completion undone later (and not done again) is dropped (docs/report.md)."""
        latest: dict[str, StepEvent] = {}
        for entry in self.entries:
            for event in entry.steps:
                if event.kind in ("done", "undone"):
                    latest.pop(event.text, None)  # re-inserted last: the order of the latest
                if event.kind == "done":
                    latest[event.text] = event
        return list(latest.values())

    def checkpoints(self) -> list[Mark]:
        return [c for e in self.entries for c in e.checkpoints]

    def as_json(self) -> dict[str, Any]:
        """`report --json` (docs/json.md)."""
        return {
            "task": self.task,
            "ref": self.ref,
            "title": self.title,
            "goal": list(self.goal),
            "phase": self.phase,
            "tip": self.tip,
            "language": self.language,
            "snapshots": [e.as_json() for e in self.entries],
            "jobs": [j.as_json() for j in self.jobs],
            "next_steps": list(self.open_steps),
        }
