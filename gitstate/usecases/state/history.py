"""Reading the state: status, check, show, log, diff. Nothing here writes.

Reads take no lock: refs and objects are replaced atomically, so a reader sees an old or a new
state, never half of one.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from gitstate.document.language import KEYS, user_language
from gitstate.document.model import MAX_BYTES, Document, parse
from gitstate.document.patch import section_key
from gitstate.document.validate import Problem, Report, check_bytes, decode
from gitstate.errors import BrokenRef, Failure, InvalidDocument, NotFound
from gitstate.storage import abbrev, gitconfig, view
from gitstate.storage.snapshots import Snapshot, Store
from gitstate.usecases.workspace import Workspace


@dataclass(frozen=True)
class Checked:
    source: str  # "view", "tip", "file" or "none"
    path: str | None
    report: Report | None

    def as_json(self) -> dict[str, object]:
        """`check --json` (docs/json.md); the MCP tool state_check returns it too."""
        if self.report is None:
            return {"valid": True, "language": None, "errors": [], "warnings": [], "source": "none"}
        return {**self.report.as_json(), "source": self.source, "path": self.path}


def check(ws: Workspace | None, file: Path | None = None) -> Checked:
    """Validate FILE, else the view, else the tip; with none of them there is nothing to check."""
    if file is not None:
        # A regular file only (a link to one is followed: the user named it), never blocking
        # and bounded: a FIFO or /dev/zero is refused at once (storage/view.py:read_regular).
        try:
            found = view.read_regular(os.path.realpath(file), MAX_BYTES + 1)
        except view.NotRegular as exc:
            if exc.what.startswith("unreadable: "):
                raise Failure(f"cannot read {file}: {exc.what[len('unreadable: ') :]}") from None
            raise Failure(f"cannot check {file}: it is {exc.what}, not a regular file") from None
        if found is None:
            raise NotFound(f"no such file: {file}")
        raw = found
        # Outside a repository: the global agy.language, else the locale.
        lang = (
            ws.new_language()
            if ws
            else user_language(gitconfig.get(None, "agy.language"), os.environ)
        )
        size = file.stat().st_size
        report = check_bytes(raw, lang, size)
        return Checked("file", str(file), report)
    assert ws is not None
    try:
        data = ws.view_bytes()
    except InvalidDocument as exc:  # a directory or unreadable file where STATE.md should be
        problems = tuple(p for p in exc.problems if isinstance(p, Problem))
        report = Report(ws.new_language().code, problems)
        return Checked("view", str(ws.layout.view_path), report)
    if data is not None:
        return Checked("view", str(ws.layout.view_path), ws.view_report(data))
    tip = ws.store.tip()
    tip_bytes = ws.store.state_bytes(tip) if tip else None
    if tip_bytes is not None:
        return Checked("tip", tip, check_bytes(tip_bytes, ws.new_language()))
    path = ws.layout.view_path  # None in a bare repository
    return Checked("none", str(path) if path else None, None)


def status(ws: Workspace) -> dict[str, object]:
    tip = ws.store.tip()
    data = ws.view_bytes()
    state = ws.view_state(data, tip)
    written_from = view_origin(ws, data, tip)
    valid = True
    errors = 0
    in_progress: str | None = None
    language: str | None = None
    doc: Document | None = None
    if data is not None:
        report = ws.view_report(data)
        valid, errors, language = report.valid, len(report.errors), report.language
        if report.valid:
            text, _ = decode(data)
            assert text is not None
            doc = parse(text)
    elif tip is not None:
        doc = ws.snapshot_document(tip)
    if doc is not None:
        steps = doc.in_progress()
        in_progress = steps[0] if steps else None
        language = doc.language
    tip_snap = ws.store.snapshot(tip) if tip else None
    phase = tip_snap.phase if tip_snap else "IDLE"
    return {
        "task": "none" if tip_snap is None or (doc is None and data is None) else "open",
        "archived": tip_snap.trailers.get("Agy-Archived") if tip_snap else None,
        "view": state,
        "tip": tip,
        "valid": valid,
        "in_progress": in_progress,
        "phase": phase,
        "errors": errors,
        "language": language,
        "ref": ws.layout.state_ref,
        "path": str(ws.layout.view_path) if ws.layout.view_path else None,
        "written_from": written_from,
        "is_tip": written_from is not None and written_from == tip,
    }


def view_origin(ws: Workspace, data: bytes | None, tip: str | None) -> str | None:
    """The snapshot the view was written from: the one answer `status` and `doctor` give.

    The tip when the view holds the tip's STATE.md byte for byte, whatever the record says (a
    phase change appends a snapshot of the same tree and leaves the view alone, so the record
    still names the snapshot before); else the recorded snapshot."""
    if data is not None and tip is not None and view.blob_id(data) == ws.store.state_blob(tip):
        return tip
    return ws.recorded_snapshot()


def show(ws: Workspace, rev: str | None) -> tuple[str, bytes]:
    commit = ws.store.resolve(rev)
    data = ws.store.state_bytes(commit)
    if data is None:
        raise NotFound(
            f"snapshot {abbrev.short_id(ws.store, commit)} holds no STATE.md (it closed a task or only changed the phase)",
            hint="git agy-state log shows the snapshots before it",
        )
    return commit, data


def show_json(commit: str, data: bytes, section: str | None = None) -> dict[str, object]:
    """`show --json` (docs/json.md): the document parsed, or one section's lines; the MCP tool
    state_show returns it too."""
    if section is not None:
        key, lines = section_lines(data, section, commit)
        return {"commit": commit, "section": key, "lines": lines}
    doc = parse(text(commit, data))
    return {
        "commit": commit,
        "language": doc.language,
        "stamp": doc.stamp,
        "sections": {k: list(doc.section(k)) for k in KEYS},
        "text": data.decode("utf-8"),
    }


def log_json(ws: Workspace, snaps: list[Snapshot], with_patch: bool) -> list[dict[str, object]]:
    """`log --json` (docs/json.md), each snapshot's diff too with `with_patch`."""
    rows = []
    for snap in snaps:
        row = snap.as_json()
        if with_patch:
            row["diff"] = snapshot_diff(ws, snap)
        rows.append(row)
    return rows


def section_lines(data: bytes, name: str, commit: str = "") -> tuple[str, list[str]]:
    key = section_key(name)
    doc = parse(text(commit, data))
    return key, list(doc.section(key))


def text(commit: str, data: bytes) -> str:
    """A snapshot's STATE.md as text (`show` prints junk byte for byte, but cannot parse it)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BrokenRef(
            commit,
            f"snapshot {commit[:12] or '?'} holds a STATE.md that is not UTF-8 text (line {line})",
            hint="git agy-state show prints it byte for byte; git agy-state doctor names the chain",
        ) from None


def log(ws: Workspace, limit: int | None) -> list[Snapshot]:
    """The current task's snapshots, newest first: the walk stops before the closing snapshot
    of the task before (a tip that is itself a closing snapshot is shown alone)."""
    found: list[Snapshot] = []
    for snap in ws.store.walk(ws.store.tip(), limit):
        if found and "Agy-Archived" in snap.trailers:
            break
        found.append(snap)
    return found


def snapshot_diff(ws: Workspace, snap: Snapshot) -> str:
    before = ws.store.state_bytes(snap.parents[0]) if snap.parents else None
    after = ws.store.state_bytes(snap.commit)
    a = abbrev.short_id(ws.store, snap.parents[0]) if snap.parents else None
    return unified(before, after, a, abbrev.short_id(ws.store, snap.commit))


def graph_log(ws: Workspace, limit: int | None) -> list[Snapshot]:
    """The current task's snapshots with every parent followed (a sync merge has two), in the
    order `git log --graph` draws them (its --topo-order): no commit before one of its
    children, one line of descent shown whole before the next. The walk ends at the task's start as `log`'s does."""
    tip = ws.store.tip()
    if tip is None:
        return []
    found: dict[str, Snapshot] = {}
    pending = [tip]
    while pending:
        commit = pending.pop()
        if commit in found:
            continue
        snap = ws.store.snapshot(commit)
        if "Agy-Archived" in snap.trailers and commit != tip:
            continue  # the closing snapshot of the task before
        found[commit] = snap
        pending.extend(p for p in snap.parents if p not in found)
    children = dict.fromkeys(found, 0)
    for snap in found.values():
        for parent in set(snap.parents):
            if parent in children:
                children[parent] += 1
    ready = [tip]  # a stack, as git's --topo-order: a merge's last parent's line comes first
    order: list[Snapshot] = []
    while ready and (limit is None or len(order) < limit):
        snap = found[ready.pop()]
        order.append(snap)
        for parent in dict.fromkeys(snap.parents):
            if parent in children:
                children[parent] -= 1
                if children[parent] == 0:
                    ready.append(parent)
    return order


def unified(before: bytes | None, after: bytes | None, a: str | None, b: str | None) -> str:
    """A unified diff of two STATE.md versions; the title's time never counts as a change
    (docs/format.md), so the old title is shown as the new one."""
    before = _same_title(before, after)
    old = (before or b"").decode("utf-8", "replace").splitlines(keepends=True)
    new = (after or b"").decode("utf-8", "replace").splitlines(keepends=True)
    lines = difflib.unified_diff(
        old,
        new,
        fromfile=f"a/STATE.md ({a})" if a else "/dev/null",
        tofile=f"b/STATE.md ({b})" if b else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class Diff:
    a: str  # snapshot id or "view"
    b: str
    sections: tuple[str, ...]
    text: str

    def as_json(self) -> dict[str, object]:
        return {"from": self.a, "to": self.b, "sections": list(self.sections), "diff": self.text}


def diff(ws: Workspace, a: str | None, b: str | None) -> Diff:
    """`diff`: tip → view; `diff A`: A → view (or tip); `diff A B`: A → B."""
    if b is not None:
        left, right = ws.store.resolve(a), ws.store.resolve(b)
        return _diff(ws.store, left, ws.store.state_bytes(left), right, ws.store.state_bytes(right))
    left = ws.store.resolve(a)
    data = ws.view_bytes()
    if data is not None:
        if len(data) > MAX_BYTES:  # read only up to just past the limit: never diff a part
            raise InvalidDocument(
                "STATE.md is over 1 MiB: diff compares documents within the limit",
                ws.view_report(data).errors,
                hint="git agy-state check",
            )
        return _diff(ws.store, left, ws.store.state_bytes(left), "view", data)
    tip = ws.store.resolve(None)
    return _diff(ws.store, left, ws.store.state_bytes(left), tip, ws.store.state_bytes(tip))


def _diff(store: Store, a: str, before: bytes | None, b: str, after: bytes | None) -> Diff:
    for name, data in ((a, before), (b, after)):
        if data is not None and len(data) > MAX_BYTES:  # a snapshot no writer of ours makes
            raise InvalidDocument(
                f"snapshot {_short(store, name)} holds a STATE.md of {len(data)} bytes, over 1 MiB: "
                "diff compares documents within the limit",
                hint="git show REV:STATE.md prints it",
            )
    sections = _changed_sections(before, after)
    text = unified(before, after, _short(store, a), _short(store, b))
    return Diff(a, b, sections, text)


def _short(store: Store, name: str) -> str:
    return name if name == "view" else abbrev.short_id(store, name)


def _same_title(before: bytes | None, after: bytes | None) -> bytes | None:
    """`before` with its title line replaced by the one of `after` when both start with one."""
    if not before or not after or not (before.startswith(b"# ") and after.startswith(b"# ")):
        return before
    old_title, newline, rest = before.partition(b"\n")
    new_title = after.partition(b"\n")[0]
    return new_title + newline + rest if old_title != new_title else before


def _changed_sections(before: bytes | None, after: bytes | None) -> tuple[str, ...]:
    docs = []
    for data in (before, after):
        text, _ = decode(data or b"")
        try:
            docs.append(parse(text) if text else None)
        except InvalidDocument:  # an invalid view: every section may differ
            docs.append(None)
    if docs[0] is None or docs[1] is None:
        return tuple(KEYS) if before != after else ()
    return docs[1].changed_keys(docs[0])
