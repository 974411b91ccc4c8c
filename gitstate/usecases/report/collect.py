"""Collect a task's history once: its snapshots, and what hangs on them (docs/report.md).

A task is the first-parent run of snapshots from a tip back to the closing snapshot of the task
before: the current one from refs/agy/state, an archived one from its archive ref. Decisions and
known errors come from the notes, placed on the snapshot of the commit they annotate (else the
last snapshot before they were recorded); checkpoints on the snapshot they carry; jobs by when
they were started. Reads only.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from gitstate.document.language import KEYS, Language
from gitstate.document.model import Document, cut_suffix, parse_item, step_text
from gitstate.errors import InvalidDocument, NotFound
from gitstate.storage.snapshots import Snapshot
from gitstate.usecases.decisions import records
from gitstate.usecases.report.model import Annotation, Entry, Job, Mark, Merge, Report, StepEvent
from gitstate.usecases.state import archive, checkpoints, history
from gitstate.usecases.state.finish import ARCHIVE_PREFIX, ARCHIVED_TRAILER
from gitstate.usecases.workspace import Workspace

CONFLICTS_AT = " with conflicts in "
CONFLICT_TRAILER = "Agy-Conflict"
CLOSING_SEARCH = 10_000  # snapshots walked back from the tip to find an archive's closing one


def collect(ws: Workspace, name: str | None = None) -> Report:
    """The report of the current task (`name` None), or of the archived task `name`."""
    if name is None:
        snaps = history.log(ws, None)
        if not snaps:
            raise NotFound("there is no task yet", hint="git agy-state patch --set goal=…")
        if ARCHIVED_TRAILER in snaps[0].trailers:
            done = snaps[0].trailers[ARCHIVED_TRAILER].removeprefix(ARCHIVE_PREFIX)
            raise NotFound(
                f"there is no current task; the last one was archived as {done}",
                hint=f"git agy-state view {done}",
            )
        task, ref, end = "current", ws.layout.state_ref, None
    else:
        found = archive.find(ws, name)
        snaps = _task_walk(ws, found.tip)
        task, ref = found.ref.removeprefix(ARCHIVE_PREFIX), found.ref
        end = _closing_time(ws, found.ref)
    snaps.reverse()  # oldest first
    entries = _entries(ws, snaps)
    start = _when(entries[0].time)
    until = (end or _when(entries[-1].time)) if name is not None else None
    entries = _place_annotations(ws, entries, start, until)
    entries = _place_checkpoints(ws, entries)
    tip = snaps[-1]
    doc = _document(ws, tip.commit)
    return Report(
        task=task,
        ref=ref,
        goal=doc.section("goal") if doc else (),
        phase=tip.phase,
        tip=tip.commit,
        entries=tuple(entries),
        jobs=tuple(_jobs(ws, start, until)),
        language=doc.language if doc else "en",
        open_steps=doc.steps() if doc else (),
    )


def _task_walk(ws: Workspace, start: str) -> list[Snapshot]:
    """Newest first, as history.log, from an archive's tip."""
    found: list[Snapshot] = []
    for snap in ws.store.walk(start):
        if found and ARCHIVED_TRAILER in snap.trailers:
            break
        found.append(snap)
    return found


def _closing_time(ws: Workspace, ref: str) -> datetime | None:
    """When the task of archive `ref` was closed: its closing snapshot's time on the chain."""
    for snap in ws.store.walk(ws.store.tip(), CLOSING_SEARCH):
        if snap.trailers.get(ARCHIVED_TRAILER) == ref and snap.commit != ws.store.tip(ref):
            return _when(snap.time)
    return None


def _entries(ws: Workspace, snaps: list[Snapshot]) -> list[Entry]:
    entries = []
    before: Document | None = None
    if snaps and snaps[0].parents:
        before = _document(ws, snaps[0].parents[0])
    for snap in snaps:
        doc = _document(ws, snap.commit)
        if before is not None and doc is not None:
            sections = doc.changed_keys(before)
        else:
            sections = tuple(k for k in snap.sections if k in KEYS)
        entries.append(
            Entry(
                commit=snap.commit,
                time=snap.time,
                phase=snap.phase,
                subject=snap.subject,
                sections=sections,
                diff=history.snapshot_diff(ws, snap),
                steps=_step_events(before, doc),
                failed=_added(before, doc, "failed_attempts"),
                merge=_merge(snap),
                closing=ARCHIVED_TRAILER in snap.trailers,
            )
        )
        before = doc if doc is not None else before
    return entries


def _document(ws: Workspace, commit: str) -> Document | None:
    """A snapshot's document; None for one no writer of ours makes (a crafted STATE.md that
    does not parse): the timeline still shows the snapshot and its diff."""
    try:
        return ws.snapshot_document(commit)
    except InvalidDocument:
        return None


def _added(before: Document | None, after: Document | None, key: str) -> tuple[str, ...]:
    if after is None:
        return ()
    old = set(before.section(key)) if before is not None else set()
    return tuple(_item_text(line) for line in after.section(key) if line not in old)


def _item_text(line: str) -> str:
    item = parse_item(line)
    return item.text.strip() if item is not None else line.strip().removeprefix("- ")


def _step_events(before: Document | None, after: Document | None) -> tuple[StepEvent, ...]:
    """How next_steps and done moved from one snapshot to the next."""
    if after is None:
        return ()
    lang = after.lang
    events: list[StepEvent] = []
    old_done = before.section("done") if before is not None else ()
    new_done = after.section("done")
    finished = set()
    for line in new_done:
        if line in old_done:
            continue
        body, verified = _done_parts(line, lang)
        finished.add(step_text(line, lang))
        events.append(StepEvent("done", body, verified))
    for line in old_done:
        if line not in new_done and before is not None:  # e.g. a restore took the completion back
            events.append(StepEvent("undone", _done_parts(line, before.lang)[0]))
    old_steps: dict[str, str] = {}
    if before is not None:
        for line in before.steps():
            item = parse_item(line)
            old_steps[step_text(line, before.lang)] = item.marker if item else " "
    now: set[str] = set()
    for line in after.steps():
        item = parse_item(line)
        if item is None:
            continue
        words = step_text(line, lang)
        now.add(words)
        _, reason = cut_suffix(item.text, lang.reason)
        was = old_steps.get(words)
        if was is None:
            kind = {">": "started", "!": "blocked"}.get(item.marker, "added")
        elif was == item.marker:
            continue
        else:
            kind = {">": "started", "!": "blocked", " ": "paused"}[item.marker]
        events.append(StepEvent(kind, words, (reason or "").strip() if kind == "blocked" else ""))
    for words in old_steps:
        if words not in now and words not in finished:
            events.append(StepEvent("dropped", words))
    return tuple(events)


def _done_parts(line: str, lang: Language) -> tuple[str, str]:
    """A Done line as the step's words and its verification."""
    item = parse_item(line)
    body, verified = cut_suffix(item.text if item is not None else line.strip(), lang.verify)
    return body.strip(), (verified or "").strip()


def _merge(snap: Snapshot) -> Merge | None:
    if len(snap.parents) < 2:
        return None
    conflicts: tuple[str, ...] = ()
    if CONFLICTS_AT in snap.subject:
        listed = snap.subject.split(CONFLICTS_AT, 1)[1]
        conflicts = tuple(s.strip() for s in listed.split(",") if s.strip())
    raw = snap.trailers.get(CONFLICT_TRAILER, "")
    over = tuple(s.strip() for s in raw.split(",") if s.strip())
    return Merge(snap.parents[1], conflicts, over)


def _when(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


def _place_annotations(
    ws: Workspace, entries: list[Entry], start: datetime, until: datetime | None
) -> list[Entry]:
    """Each decision and known error of the task onto one snapshot: the snapshot it annotates,
    or one whose Agy-Head is the commit it annotates, else the last one before it was made."""
    heads: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        heads.setdefault(entry.commit, []).append(i)
        head = ws.store.snapshot(entry.commit).head
        if head:
            heads.setdefault(head, []).append(i)
    times = [_when(e.time) for e in entries]
    placed: dict[int, list[Annotation]] = {}
    for row in records.read_ledger(ws).rows:
        at = _parse_at(row.record.at)
        if at is None:
            continue
        candidates = heads.get(row.commit, [])
        if not candidates and (at < start or (until is not None and at > until)):
            continue  # another task's
        before = [i for i in candidates or range(len(entries)) if times[i] <= at]
        index = before[-1] if before else (candidates[0] if candidates else 0)
        r = row.record
        placed.setdefault(index, []).append(
            Annotation(r.id, r.type, r.text, r.by, r.at, row.commit, row.active, r.issue)
        )
    return [
        replace(entry, annotations=tuple(placed.get(i, ()))) if i in placed else entry
        for i, entry in enumerate(entries)
    ]


def _parse_at(value: str) -> datetime | None:
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _place_checkpoints(ws: Workspace, entries: list[Entry]) -> list[Entry]:
    by_state: dict[str, list[Mark]] = {}
    for cp in checkpoints.listing(ws):
        if cp.state is not None:
            by_state.setdefault(cp.state, []).append(Mark(cp.name, cp.commit, cp.message, cp.at))
    return [
        replace(e, checkpoints=tuple(sorted(by_state[e.commit], key=lambda m: m.name)))
        if e.commit in by_state
        else e
        for e in entries
    ]


def _jobs(ws: Workspace, start: datetime, until: datetime | None) -> list[Job]:
    """The jobs started while the task was open, oldest first."""
    if not (ws.layout.common_agy_dir / "jobs").is_dir():
        return []
    # Imported here: the jobs slice is loaded only where there are jobs (as doctor does).
    from gitstate.jobs.usecases import control

    found = []
    for meta in control.list_jobs(ws.layout):
        created = _parse_at(str(meta.get("created_at") or ""))
        if created is None or created < start or (until is not None and created > until):
            continue
        result = str(meta.get("agy_status") or meta.get("error") or "")
        found.append(
            Job(
                id=str(meta.get("id", "")),
                state=str(meta.get("state", "")),
                agent=str(meta.get("agent") or ""),
                branch=str(meta.get("branch") or ""),
                created_at=str(meta.get("created_at") or ""),
                finished_at=str(meta.get("finished_at") or ""),
                round=int(meta.get("round") or 1),
                result=result,
            )
        )
    return found
