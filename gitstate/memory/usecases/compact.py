"""`memory compact`: list what can go from MEMORY.md (and which projects to archive), and apply
the candidates the user confirms by id (document/compaction.py decides; history comes from here).

Ages come from the ref's first-parent history: a MEMORY.md line is as old as the oldest commit
of the unbroken run, back from the tip, that holds it; a project file as its last change. The
walk stops once it is past the oldest horizon that matters (90 days).
"""

from __future__ import annotations

import time
from typing import NamedTuple

from gitstate.document.language import counted
from gitstate.errors import NotFound, UsageError
from gitstate.memory.document import compaction, files
from gitstate.memory.document.compaction import Candidate, History
from gitstate.memory.document.sessions import belongs_to, parse_log
from gitstate.memory.storage.brain import Brain
from gitstate.memory.usecases import brain as brain_uc
from gitstate.memory.usecases.brain import Written, open_brain


class Compacted(NamedTuple):
    candidates: tuple[Candidate, ...]  # what can go (before anything was applied)
    applied: tuple[str, ...]  # ids applied
    written: Written | None

    def as_json(self) -> dict[str, object]:
        return {
            "candidates": [c.as_json() for c in self.candidates],
            "applied": list(self.applied),
            "commit": self.written.commit if self.written else None,
            "memory_lines": self.written.memory_lines if self.written else None,
        }


def history(brain: Brain, tip: str, now: float) -> History:
    memory = brain.text(tip, files.MEMORY_FILE) or ""
    alive = set(memory.split("\n"))
    since: dict[str, int] = {}
    touched: dict[str, int] = {}
    horizon = int(now - compaction.DROP_DAYS * compaction.DAY)
    chain = brain.first_parents(tip)
    last_blob: str | None = None
    reached = 0
    for index, commit in enumerate(chain):
        when = brain.commit_time(commit)
        reached = when
        blob = brain.entry_id(commit, files.MEMORY_FILE)
        if blob != last_blob:
            text = brain.text(commit, files.MEMORY_FILE) or ""
            alive &= set(text.split("\n"))
            last_blob = blob
        for line in alive:
            since[line] = when
        mine = brain.folder(commit, files.PROJECTS_DIR)
        parent = (
            brain.folder(chain[index + 1], files.PROJECTS_DIR) if index + 1 < len(chain) else {}
        )
        for entry, blob_id in mine.items():
            if parent.get(entry) != blob_id and entry.endswith(".md"):
                touched.setdefault(entry[: -len(".md")], when)
        if when < horizon:
            break
    return History(since, touched, *_sessions(brain, tip, now), horizon=min(horizon, reached))


def _sessions(brain: Brain, tip: str, now: float) -> tuple[dict[str, int], str]:
    """(a project -> its newest session of the last 60 days, the session text of 90 days)."""
    archive_from = time.strftime(
        "%Y-%m-%d", time.localtime(now - compaction.ARCHIVE_DAYS * compaction.DAY)
    )
    drop_from = time.strftime(
        "%Y-%m-%d", time.localtime(now - compaction.DROP_DAYS * compaction.DAY)
    )
    newest: dict[str, int] = {}
    recent: list[str] = []
    prefix = files.SESSIONS_DIR + "/"
    for path, blob in sorted(brain.listing(tip).items()):
        date = path[len(prefix) : -len(".md")] if path.startswith(prefix) else ""
        if not files.DATE_RE.match(date) or date < drop_from:
            continue
        text = brain.blob(blob).decode("utf-8", "replace")
        recent.append(text.casefold())
        if date < archive_from:
            continue
        stamp = int(time.mktime(time.strptime(date, "%Y-%m-%d")))
        for block in parse_log(text)[1]:
            name = block.project or block.context
            if name and belongs_to(block, name):
                newest[name] = max(newest.get(name, 0), stamp)
    return newest, "\n".join(recent)


def plan(brain: Brain, tip: str, now: float) -> list[Candidate]:
    memory = brain.text(tip, files.MEMORY_FILE) or ""
    return compaction.plan(memory, _projects(brain, tip), history(brain, tip, now), now)


def _projects(brain: Brain, tip: str) -> dict[str, str]:
    prefix = files.PROJECTS_DIR + "/"
    found = {}
    for path, blob in brain.listing(tip).items():
        if path.startswith(prefix) and files.is_memory_path(path):
            found[path[len(prefix) : -len(".md")]] = brain.blob(blob).decode("utf-8", "replace")
    return found


def compact(
    apply_ids: tuple[str, ...] = (), apply_all: bool = False, now: float | None = None
) -> Compacted:
    """List the candidates; with ids (or all), apply those, re-planned on the tip they land on."""
    when = time.time() if now is None else now
    brain, _ = open_brain()
    tip = brain.tip()
    assert tip is not None
    listed = tuple(plan(brain, tip, when))
    if not apply_ids and not apply_all:
        return Compacted(listed, (), None)
    wanted = {i.strip().lower() for i in apply_ids if i.strip()}
    applied: list[str] = []

    def change(brain: Brain, tip: str | None) -> dict[str, str | None]:
        assert tip is not None
        candidates = plan(brain, tip, when)
        chosen = [c for c in candidates if apply_all or c.id in wanted]
        unknown = wanted - {c.id for c in candidates}
        if unknown:
            raise NotFound(
                f"no compaction candidate {', '.join(sorted(unknown))}",
                hint="git agy-state memory compact lists them",
            )
        if not chosen:
            raise UsageError("nothing to apply: there are no candidates")
        applied[:] = [c.id for c in chosen]
        memory = brain.text(tip, files.MEMORY_FILE) or ""
        return dict(compaction.apply(memory, _projects(brain, tip), chosen))

    # The lines only move within the brain (or leave it): nothing new to scan.
    written = brain_uc.write(
        change,
        f"memory compact: {counted(len(wanted), 'candidate') if wanted else 'all candidates'}",
        None,
        allow_secret=True,
        brain=brain,
    )
    return Compacted(listed, tuple(applied), written)
