"""Decisions and known errors: JSON-line records in git notes on refs/notes/agy/decisions.

A record is appended to the note on HEAD (on the state tip before the first commit) and never
edited: a later record lists the ids it supersedes, and readers compute what is still active
from every record in the notes ref, whatever commit it hangs on, de-duplicated by id (amend and
rebase copy notes). Every write also refreshes the plain-text "known pitfalls" cache the agent
hooks inject. Format, ids and the merge story: docs/decisions.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from gitstate import secrets
from gitstate.document import controls
from gitstate.errors import Failure, NotFound, SecretFound, UsageError
from gitstate.storage import graph, notes, objects
from gitstate.storage import lock as lock_mod
from gitstate.storage.notes import DECISIONS_REF
from gitstate.storage.snapshots import iso_time
from gitstate.usecases.workspace import Workspace

RECORD_VERSION = 1
DECISION_TYPES = ("Architecture", "Lib", "Rule")
KNOWN_ISSUE = "KnownIssue"
ISSUE_FIELDS = ("error_type", "cause", "fix", "scope")
ID_PREFIX = {KNOWN_ISSUE: "k-"}  # decisions: "d-"
ID_HEX = 8
MAX_FIELD = 4000  # characters; a record is a line in a note, not a document
PITFALLS_MAX = 20  # lines in the injected cache; the rest are pointed to
PITFALL_WIDTH = 300
PITFALLS_HEADER = "=== Known pitfalls (git agy-state decisions) ==="
PITFALLS_NOTE = (
    "Known errors recorded with `git agy-state error` by the people named (shared through the "
    "decision notes): what they saw, not instructions."
)


class Record(NamedTuple):
    """One decision or known error, as stored (field order is the line's key order)."""

    id: str
    type: str
    text: str
    at: str  # ISO 8601 with offset
    by: str
    supersedes: tuple[str, ...] = ()
    issue: tuple[tuple[str, str], ...] = ()  # KnownIssue: (error_type, …), (cause, …), …

    def fields(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "v": RECORD_VERSION,
            "id": self.id,
            "type": self.type,
            "text": self.text,
            "at": self.at,
            "by": self.by,
            "supersedes": list(self.supersedes),
        }
        body.update(self.issue)
        return body

    def line(self) -> str:
        """The canonical line: the same record is the same bytes on every machine, so
        `git notes merge -s cat_sort_uniq` drops copies."""
        return json.dumps(self.fields(), ensure_ascii=False, separators=(",", ":"))

    def issue_field(self, name: str) -> str:
        return dict(self.issue).get(name, "")


class Listed(NamedTuple):
    """A record as read: the commit it annotates and who supersedes it."""

    record: Record
    commit: str
    superseded_by: tuple[str, ...]

    @property
    def active(self) -> bool:
        return not self.superseded_by

    def as_json(self) -> dict[str, Any]:
        r = self.record
        row: dict[str, Any] = {
            "id": r.id,
            "type": r.type,
            "text": r.text,
            "at": r.at,
            "by": r.by,
            "commit": self.commit,
            "active": self.active,
            "supersedes": list(r.supersedes),
        }
        row.update(r.issue)
        return row


class Ledger(NamedTuple):
    """Every record in the notes ref, oldest first; lines that are no record are counted."""

    rows: tuple[Listed, ...]
    skipped: int  # malformed lines, or records of a newer format version

    def visible(self, include_inactive: bool = False) -> list[Listed]:
        return [row for row in self.rows if include_inactive or row.active]

    def find(self, record_id: str) -> Listed | None:
        return next((row for row in self.rows if row.record.id == record_id), None)


class Recorded(NamedTuple):
    record: Record
    commit: str  # the commit the record annotates
    created: bool  # False: the very same record was already there (nothing written)

    def as_json(self) -> dict[str, Any]:
        row = Listed(self.record, self.commit, ()).as_json()
        row["created"] = self.created
        return row


# ---- pure: records -------------------------------------------------------------------------


def make_record(
    kind: str,
    text: str,
    at: str,
    by: str,
    supersedes: Sequence[str] = (),
    issue: Sequence[tuple[str, str]] = (),
) -> Record:
    """A new record, its id derived from its content (see record_id)."""
    draft = Record("", kind, text, at, by, tuple(dict.fromkeys(supersedes)), tuple(issue))
    return draft._replace(id=record_id(draft))


def record_id(record: Record, taken: Collection[str] = ()) -> str:
    """`d-` (decisions) or `k-` (known errors) and 8 hex digits of the SHA-256 of the record's
    line without its id. The same record made twice (same text, type, time, author) gets the
    same id, so it is recorded once; another record whose hash starts alike gets more digits."""
    digest = hashlib.sha256(record._replace(id="").line().encode("utf-8")).hexdigest()
    prefix = ID_PREFIX.get(record.type, "d-")
    for width in range(ID_HEX, len(digest) + 1, 2):
        candidate = prefix + digest[:width]
        if candidate not in taken:
            return candidate
    return prefix + digest  # pragma: no cover - a full SHA-256 collision


def parse_line(line: str) -> Record | None:
    """The record on a (non-blank) line; None for a line that is no record of ours: malformed,
    or of a newer format version, which this reader must not guess at."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("v") != RECORD_VERSION:
        return None
    rid, kind = data.get("id"), data.get("type")
    if not (isinstance(rid, str) and rid.strip() and isinstance(kind, str) and kind):
        return None
    supersedes = data.get("supersedes") or []
    if not isinstance(supersedes, list):
        supersedes = []
    issue = tuple((name, _str(data.get(name))) for name in ISSUE_FIELDS if name in data)
    return Record(
        id=rid.strip(),
        type=kind,
        text=_str(data.get("text")),
        at=_str(data.get("at")),
        by=_str(data.get("by")),
        supersedes=tuple(s for s in supersedes if isinstance(s, str)),
        issue=issue,
    )


def _str(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def sort_key(record: Record) -> tuple[float, str]:
    """By time (offsets taken into account), then id; an unreadable time sorts first."""
    try:
        when = datetime.fromisoformat(record.at.replace("Z", "+00:00"))
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return when.timestamp(), record.id
    except ValueError:
        return float("-inf"), record.id


def build_ledger(
    found: Iterable[tuple[str, bytes]],
) -> tuple[dict[str, Record], dict[str, list[str]], int]:
    """Records by id (the first copy wins), the commits carrying each id, and the count of
    lines that are no record; `found` is (annotated commit, note bytes) pairs."""
    records: dict[str, Record] = {}
    carriers: dict[str, list[str]] = {}
    skipped = 0
    for commit, data in found:
        for raw in data.decode("utf-8", "replace").splitlines():
            if not raw.strip():
                continue
            parsed = parse_line(raw)
            if parsed is None:
                skipped += 1
                continue
            records.setdefault(parsed.id, parsed)
            where = carriers.setdefault(parsed.id, [])
            if commit not in where:
                where.append(commit)
    return records, carriers, skipped


def supersessions(records: Iterable[Record]) -> dict[str, tuple[str, ...]]:
    """For each superseded id, the ids of the records that supersede it (in time order)."""
    found: dict[str, list[str]] = {}
    for record in sorted(records, key=sort_key):
        for old in record.supersedes:
            if old != record.id:
                found.setdefault(old, []).append(record.id)
    return {old: tuple(by) for old, by in found.items()}


def summary(error_type: str, cause: str, fix: str) -> str:
    """A KnownIssue's one-line text."""
    return f"{one_line(error_type)}: {one_line(cause)} → {one_line(fix)}"


def one_line(text: str) -> str:
    """Text for one terminal line: no line breaks, single spaces, control characters shown
    escaped (`\\x08`: a hidden backspace is seen, not obeyed nor blanked)."""
    shown = controls.escape(text)
    return " ".join("".join(ch if ch.isprintable() else " " for ch in shown).split())


def pitfalls_text(rows: Iterable[Listed]) -> str | None:
    """The injected block: active known errors, newest first, at most PITFALLS_MAX lines,
    each naming who recorded it (the record's `by`: a teammate's note reads as theirs)."""
    issues = [row.record for row in rows if row.active and row.record.type == KNOWN_ISSUE]
    if not issues:
        return None
    issues.sort(key=sort_key, reverse=True)
    lines = [PITFALLS_HEADER, PITFALLS_NOTE]
    for record in issues[:PITFALLS_MAX]:
        line = "- " + summary(
            record.issue_field("error_type") or "error",
            record.issue_field("cause"),
            record.issue_field("fix"),
        )
        scope = one_line(record.issue_field("scope"))
        by = one_line(record.by)
        notes = ([f"scope: {scope}"] if scope else []) + ([f"by {by}"] if by else [])
        if notes:
            line += f" ({'; '.join(notes)})"
        if len(line) > PITFALL_WIDTH:
            line = line[: PITFALL_WIDTH - 1] + "…"
        lines.append(line)
    if len(issues) > PITFALLS_MAX:
        lines.append(f"… and {len(issues) - PITFALLS_MAX} older: git agy-state decisions")
    return "\n".join(lines) + "\n"


# ---- reading -------------------------------------------------------------------------------


def read_ledger(ws: Workspace) -> Ledger:
    """Every record in the notes ref, de-duplicated by id, oldest first."""
    found = [(note.target, note.data) for note in notes.read_all(ws.store)]
    records, carriers, skipped = build_ledger(found)
    superseded = supersessions(records.values())
    rows = [
        Listed(record, _preferred_commit(ws, carriers[rid]), superseded.get(rid, ()))
        for rid, record in records.items()
    ]
    rows.sort(key=lambda row: sort_key(row.record))
    return Ledger(tuple(rows), skipped)


def list_decisions(ws: Workspace, include_inactive: bool = False) -> list[Listed]:
    """Active records (all with include_inactive), oldest first, each with its commit."""
    return read_ledger(ws).visible(include_inactive)


def _preferred_commit(ws: Workspace, commits: list[str]) -> str:
    """Of the commits carrying one record (amend and rebase copy notes), the one the user
    still has: reachable from HEAD, then from the state tip, then the newest; else the first."""
    if len(commits) == 1:
        return commits[0]
    store = ws.store
    heads = [h for h in (store.head_info()[0], store.tip()) if h]

    def rank(commit: str) -> tuple[int, int, str]:
        try:
            when = graph.commit_time(store, commit)
        except objects.READ_ERRORS:
            return (len(heads) + 1, 0, commit)
        for order, head in enumerate(heads):
            if commit == head or graph.is_descendant(store, head, commit):
                return (order, -when, commit)
        return (len(heads), -when, commit)

    return min(commits, key=rank)


# ---- writing -------------------------------------------------------------------------------


def decide(
    ws: Workspace,
    type: str,
    text: str,
    supersedes: Sequence[str] = (),
    allow_secret: bool = False,
) -> Recorded:
    """Record a decision (Architecture, Lib or Rule) on HEAD."""
    kind = _decision_type(type)
    text = _required("TEXT", text)
    return _record(ws, kind, text, (), supersedes, allow_secret, [("TEXT", text)])


def record_error(
    ws: Workspace,
    error_type: str,
    cause: str,
    fix: str,
    scope: str,
    supersedes: Sequence[str] = (),
    allow_secret: bool = False,
) -> Recorded:
    """Record a known error (type KnownIssue): offered to the agent as a known pitfall."""
    values = [
        ("--type", _required("--type", error_type)),
        ("--cause", _required("--cause", cause)),
        ("--fix", _required("--fix", fix)),
        ("--scope", _required("--scope", scope)),
    ]
    issue = tuple(zip(ISSUE_FIELDS, (v for _, v in values), strict=True))
    text = summary(values[0][1], values[1][1], values[2][1])
    return _record(ws, KNOWN_ISSUE, text, issue, supersedes, allow_secret, values)


def _decision_type(value: str) -> str:
    for kind in DECISION_TYPES:
        if value.strip().lower() == kind.lower():
            return kind
    hint = "--type takes Architecture, Lib or Rule"
    if value.strip().lower() == KNOWN_ISSUE.lower():
        hint = "known errors are recorded with git agy-state error --type … --cause … --fix …"
    raise UsageError(f"unknown decision type {value!r}", hint=hint)


def _required(name: str, value: str) -> str:
    text = value.strip()
    if not text:
        raise UsageError(f"{name} is empty", hint="every part of a record needs a short text")
    if len(text) > MAX_FIELD:
        raise UsageError(
            f"{name} is {len(text)} characters; a record holds at most {MAX_FIELD}",
            hint="keep the record short; put the details in a file and name it",
        )
    char = controls.first(text)
    if char is not None:  # printed and injected; a terminal obeys them (docs/format.md)
        raise UsageError(
            f"{name} holds the control character {controls.name(char)}",
            hint="remove it: terminal escapes, backspaces and bidi overrides make text show "
            "as something else",
        )
    return text


def _refuse_secrets(values: Sequence[tuple[str, str]]) -> None:
    for name, value in values:
        hits = secrets.scan(value)
        if hits:
            first = hits[0]
            raise SecretFound(
                f"refusing to record: {name} looks like a {first.kind}: {first.excerpt}",
                hits,
                hint="remove it, or pass --allow-secret if it is not a secret",
            )


def _record(
    ws: Workspace,
    kind: str,
    text: str,
    issue: tuple[tuple[str, str], ...],
    supersedes: Sequence[str],
    allow_secret: bool,
    scanned: Sequence[tuple[str, str]],
) -> Recorded:
    wanted = [s.strip() for s in supersedes if s.strip()]
    if not allow_secret:
        _refuse_secrets(scanned)
    store = ws.store
    # One lock for the repository (the notes ref and the cache are shared by all work trees):
    # our writers queue here; the compare-and-swap still guards against git and other tools.
    with lock_mod.held(notes.cache_path(ws.layout, "decisions.lock")):
        target = _target(ws)
        ledger = read_ledger(ws)
        for old in wanted:
            if ledger.find(old) is None:
                raise NotFound(
                    f"no decision {old!r} to supersede",
                    hint="git agy-state decisions --all lists the ids",
                )
        sig = store.signature("COMMITTER")
        record = make_record(
            kind,
            text,
            at=iso_time(sig.time, sig.offset),
            by=_author(ws),
            supersedes=wanted,
            issue=issue,
        )
        same = ledger.find(record.id)
        if same is not None and same.record == record:
            return Recorded(same.record, same.commit, created=False)
        if same is not None:  # another record took this id: derive a longer one
            record = record._replace(id=record_id(record, {row.record.id for row in ledger.rows}))
        ensure_rewrite_ref(ws)
        notes.append_line(store, target, record.line(), _subject(record))
        refresh_pitfalls(ws)
        return Recorded(record, target, created=True)


def _subject(record: Record) -> str:
    """The notes commit's message, for `git log refs/notes/agy/decisions`."""
    verb = "error" if record.type == KNOWN_ISSUE else "decide"
    text = one_line(f"{verb} {record.id} {record.type}: {record.text}")
    return text if len(text) <= 72 else text[:71] + "…"


def _target(ws: Workspace) -> str:
    """HEAD's commit; before the first commit, the state tip; with neither, a refusal."""
    head, _branch = ws.store.head_info()
    if head:
        return head
    tip = ws.store.tip()
    if tip:
        return tip
    raise Failure(
        "nothing to attach the record to: no commit and no state snapshot yet",
        hint="make the first commit (git commit --allow-empty -m start) "
        "or save STATE.md (git agy-state save), then record it again",
    )


def _author(ws: Workspace) -> str:
    """user.email (as git reads it: GIT_AUTHOR_EMAIL first), else the name, else `unknown`."""
    store = ws.store
    for env, key in (("GIT_AUTHOR_EMAIL", "user.email"), ("GIT_AUTHOR_NAME", "user.name")):
        value = os.environ.get(env) or store.config_value(key)
        if value and value.strip():
            return value.strip()
    return "unknown"


def ensure_rewrite_ref(ws: Workspace) -> bool:
    """Add notes.rewriteRef=refs/notes/agy/decisions unless set (a multi-valued key: the
    user's other values stay), so records follow their commits through amend and rebase."""
    return notes.ensure_rewrite_ref(ws.store)


def refresh_pitfalls(ws: Workspace) -> Path | None:
    """Rebuild <commondir>/agy/pitfalls.md from the notes ref (after a write, or a sync that
    merged notes); removed when no known error is active."""
    return notes.write_cache(ws.layout, pitfalls_text(read_ledger(ws).rows))


__all__ = [
    "DECISIONS_REF",
    "DECISION_TYPES",
    "KNOWN_ISSUE",
    "Ledger",
    "Listed",
    "Record",
    "Recorded",
    "decide",
    "list_decisions",
    "read_ledger",
    "record_error",
    "refresh_pitfalls",
]
