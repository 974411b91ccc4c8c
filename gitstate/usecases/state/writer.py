"""Writing the state chain: save, patch, restore, checkout, init.

Every writer runs the same loop under the work tree's lock: read the view and the tip, build the
new document, commit it on the tip, compare-and-swap the ref, and only then replace the view.
A lost race rebuilds on the new tip (a patch is re-applied), so no writer's change is dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from gitstate import secrets
from gitstate.document.language import KEYS, Language
from gitstate.document.model import Document, render
from gitstate.document.validate import BYTE_RULES, LIMIT_CODES, Report, check_result
from gitstate.errors import Failure, InvalidDocument, SecretFound, UsageError, WorkAtRisk
from gitstate.storage import maintenance, view
from gitstate.storage.snapshots import FORMAT_VERSION, Store, compose_message
from gitstate.usecases.workspace import Workspace

MAX_ATTEMPTS = 20
EXCLUDE_LINE = "/STATE.md"
DECISIONS_REF = "refs/notes/agy/decisions"

# Builds the new document from the starting one (None: no view and no snapshot yet).
# Returns None when there is nothing to write, else (document, notices).
Producer = Callable[[Document | None], tuple[Document, tuple[str, ...]] | None]


class Written(NamedTuple):
    outcome: str  # "saved", "unchanged" (content equals the tip) or "nothing" (no document)
    snapshot: str | None
    sections: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    merged: bool = False  # the view was merged with a tip that moved since it was written
    view_kept: bool = False  # STATE.md changed while we wrote, so it was left alone
    overwritten: Path | None = None  # where replaced unsaved edits were kept
    archived: str | None = None  # the archive ref, when this write finished the task

    def as_json(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "snapshot": self.snapshot,
            "sections": list(self.sections),
            "notices": list(self.notices),
            "merged": self.merged,
            "view_kept": self.view_kept,
            "overwritten": str(self.overwritten) if self.overwritten else None,
            "archived": self.archived,
        }


def now_stamp() -> str:
    return time.strftime("%Y-%m-%d %H:%M")


def save(
    ws: Workspace,
    message: str | None = None,
    allow_secret: bool = False,
    session: str | None = None,
    origin: str | None = None,
) -> Written:
    """Snapshot the view; a no-op that says so when nothing changed.

    `origin` names a hook that saved on its own (`stop-guard`, `pre-compact`), for the log.
    """
    verb = f"save ({origin})" if origin else "save"

    def produce(start: Document | None) -> tuple[Document, tuple[str, ...]] | None:
        return None if start is None else (start, ())

    return write(
        ws,
        produce,
        subject=lambda changed: message or f"{verb}: " + (", ".join(changed) or "no change"),
        allow_secret=allow_secret,
        session=session,
        write_view_when_unchanged=False,
        may_archive=origin is None,  # a hook's save never archives (docs/phase-and-checkpoints.md)
    )


def restore(ws: Workspace, rev: str, force: bool = False) -> Written:
    """A new snapshot equal to an old one; the view follows (unsaved edits refused)."""
    ws.require_workdir()
    commit = ws.store.resolve(rev)
    target = ws.snapshot_document(commit)
    if target is None:
        raise Failure(
            f"snapshot {commit[:12]} holds no STATE.md (it closed a task or only changed the phase)"
        )

    def produce(start: Document | None) -> tuple[Document, tuple[str, ...]]:
        return target, ()

    return write(
        ws,
        produce,
        subject=lambda changed: f"restore {commit[:12]}",
        allow_secret=True,  # the content is already in history
        session=None,
        write_view_when_unchanged=True,
        replace_view=True,
        force=force,
    )


def checkout(ws: Workspace, rev: str | None, force: bool = False) -> Written:
    """Write a snapshot's STATE.md into the work tree; no ref moves."""
    ws.require_workdir()
    with ws.locked():
        commit = ws.store.resolve(rev)
        target = ws.store.state_bytes(commit)
        if target is None:
            raise Failure(
                f"snapshot {commit[:12]} holds no STATE.md (it closed a task or only changed the phase)"
            )
        data = ws.view_bytes()
        kept = _guard_unsaved(ws, data, target, force, "checkout")
        view.write(ws.layout, target, commit)
        return Written("checked-out", commit, overwritten=kept)


def _guard_unsaved(
    ws: Workspace, data: bytes | None, target: bytes, force: bool, action: str
) -> Path | None:
    """Refuse (exit 5) to replace unsaved view edits; with force keep them and say where."""
    if data is None or data == target:
        return None
    if ws.view_state(data, ws.store.tip()) != "dirty":
        return None
    if not force:
        raise WorkAtRisk(
            f"STATE.md has unsaved edits; {action} would overwrite them",
            hint="git agy-state save first, or --force (the edits are kept under .git/agy/)",
        )
    return view.keep_overwritten(ws.layout, data)


def _starting_point(
    ws: Workspace,
    data: bytes | None,
    tip: str | None,
    tip_doc: Document | None,
    over_limit_ok: bool,
) -> tuple[Document | None, bool]:
    """The document to build on, and whether it came from a three-way merge.

    A view written from a snapshot that is no longer the tip is merged three ways with the tip
    (base: that snapshot) instead of overwriting it; a true conflict is kept visibly."""
    if data is None:
        return tip_doc, False
    if tip_doc is not None and ws.view_state(data, tip) == "clean":
        return tip_doc, False  # a clean view, even a stale one, says nothing the tip lacks
    # A view while the tip holds no STATE.md (a closed task, then `checkout` of one of its
    # snapshots) holds what the tip lacks, clean or not: it is what gets written.
    view_doc = ws.view_document(data, over_limit_ok)
    base = ws.recorded_snapshot()
    if base is None or tip is None or base == tip or tip_doc is None:
        return view_doc, False
    base_doc = ws.snapshot_document(base)
    if base_doc is None:
        return view_doc, False
    # Imported here: merging is rare, and a save must start fast.
    from gitstate.document.merge import merge_documents

    merged = merge_documents(base_doc, view_doc, tip_doc, label=tip[:7], stamp=now_stamp())
    return merged.document, True


def write(
    ws: Workspace,
    produce: Producer,
    subject: Callable[[tuple[str, ...]], str],
    allow_secret: bool,
    session: str | None,
    write_view_when_unchanged: bool,
    replace_view: bool = False,
    force: bool = False,
    may_archive: bool = False,
    over_limit_ok: bool = False,
) -> Written:
    """The one write path: see the module doc. With `may_archive`, a write that empties a
    next_steps the tip still had finishes the task (docs/phase-and-checkpoints.md)."""
    ws.require_workdir()
    store, layout = ws.store, ws.layout
    with ws.locked():
        data = ws.view_bytes()
        overwritten: Path | None = None
        for _attempt in range(MAX_ATTEMPTS):
            tip = store.tip()
            tip_doc = ws.snapshot_document(tip)
            if replace_view:
                target = render(tip_doc).encode() if tip_doc else b""
                overwritten = overwritten or _guard_unsaved(ws, data, target, force, "restore")
                start, merged = tip_doc, False
            else:
                start, merged = _starting_point(ws, data, tip, tip_doc, over_limit_ok)
            produced = produce(start)
            if produced is None:
                return Written("nothing", tip)
            new, notices = produced
            if tip_doc is not None and new.same_content(tip_doc):
                assert tip is not None
                tip_bytes = store.state_bytes(tip)
                if tip_bytes is not None and (data is not None or write_view_when_unchanged):
                    kept = not _replace_view(ws, data, tip_bytes, tip)
                    return Written(
                        "unchanged", tip, (), notices, view_kept=kept, overwritten=overwritten
                    )
                return Written("unchanged", tip, (), notices, overwritten=overwritten)
            changed = new.changed_keys(tip_doc) if tip_doc else _nonempty(new)
            new = new.with_stamp(now_stamp())
            text = render(new)
            line = one_line(subject(changed))
            report = _refuse_unstorable(text, line, ws.new_language())
            if not allow_secret:
                _refuse_secrets(text, tip_doc, data)
                refuse_secret_in("snapshot message", line)
            written = trailers(ws, tip, changed, session)
            over = _over_limit(report)
            if over:  # kept, not refused: a merge may break a limit; `check` says what to shrink
                written.append(("Agy-Conflict", ", ".join(over)))
            view.check_record_writable(layout)  # nothing moves that could not be finished
            commit = store.create_snapshot(
                text.encode(), [tip] if tip else [], compose_message(line, written)
            )
            if store.compare_and_swap(layout.state_ref, tip, commit, f"agy-state: {line}"):
                kept = not _replace_view(ws, data, text.encode(), commit)
                archived = None
                finished = tip_doc is not None and tip_doc.steps() and not new.steps()
                if may_archive and finished and not merged and not kept:
                    # Imported here: finishing a task is rare, and a save must start fast.
                    from gitstate.usecases.state.archive import archive_locked

                    archived = archive_locked(ws, commit, new)
                if maintenance.gc_due(layout, _int(store.config_value("gc.auto"))):
                    maintenance.start_gc(layout)
                return Written(
                    "saved", commit, changed, notices, merged, kept, overwritten, archived
                )
        raise WorkAtRisk(
            f"{layout.state_ref} kept moving under {MAX_ATTEMPTS} attempts; nothing was saved",
            hint="another program is rewriting the ref; try again",
        )


def _refuse_unstorable(text: str, subject: str, user: Language) -> Report:
    """Refuse, before anything is written, a document that breaks a byte rule (over 1 MiB, not
    UTF-8, a control character): a chain whose tip its own reader refuses takes every later save
    and patch down with it. Whatever built the document — a save, a patch, a merge, a restore —
    this holds; only the line and item limits may be broken by a merge (docs/format.md).
    Returns the document's report."""
    try:
        subject.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            "the snapshot message is not UTF-8 text", hint="pass -m UTF-8 text"
        ) from None
    report = check_result(text, user)
    hard = [p for p in report.errors if p.code in BYTE_RULES]
    if hard:
        raise InvalidDocument(
            "refusing to save: the new STATE.md would break the limits every snapshot keeps; "
            "nothing was saved",
            hard,
            hint="git agy-state check lists the rules; shrink or fix the text and try again",
        )
    return report


def _over_limit(report: Report) -> list[str]:
    keys = {p.section for p in report.errors if p.code in LIMIT_CODES and p.section}
    return [k for k in KEYS if k in keys]


def _replace_view(ws: Workspace, read: bytes | None, new: bytes, snapshot: str) -> bool:
    """Write the view unless it changed since we read it (someone is editing: keep theirs)."""
    if ws.view_bytes() != read:
        return False
    view.write(ws.layout, new, snapshot)
    return True


def _nonempty(doc: Document) -> tuple[str, ...]:
    return tuple(k for k in KEYS if doc.section(k))


KEEP_TREE = object()  # append(): the new snapshot holds the tip's tree as it is


def append(
    ws: Workspace,
    subject: str,
    state: bytes | object | None = KEEP_TREE,
    phase: str | None = None,
    extra: tuple[tuple[str, str], ...] = (),
    ref: str | None = None,
) -> str:
    """Append a snapshot that is not a document edit: a phase change (the tip's tree, a new
    Agy-Phase), or a closing snapshot (no STATE.md). Under the lock, compare-and-swap, retried.
    The view is not touched. Returns the new snapshot id."""
    with ws.locked():
        return append_locked(ws, subject, state, phase, extra, ref)


def append_locked(
    ws: Workspace,
    subject: str,
    state: bytes | object | None = KEEP_TREE,
    phase: str | None = None,
    extra: tuple[tuple[str, str], ...] = (),
    ref: str | None = None,
) -> str:
    """append() for a caller that already holds the work tree's lock."""
    store = ws.store
    target = ref or ws.layout.state_ref
    for _attempt in range(MAX_ATTEMPTS):
        tip = store.tip(target)
        message = compose_message(subject, trailers(ws, tip, (), None, phase) + list(extra))
        parents = [tip] if tip else []
        if state is KEEP_TREE:
            commit = store.commit_tree(store.tree_of(tip) if tip else None, parents, message)
        else:
            assert state is None or isinstance(state, bytes)
            commit = store.create_snapshot(state, parents, message)
        if store.compare_and_swap(target, tip, commit, f"agy-state: {subject}"):
            return commit
    raise WorkAtRisk(
        f"{target} kept moving under {MAX_ATTEMPTS} attempts; nothing was written",
        hint="another program is rewriting the ref; try again",
    )


def trailers(
    ws: Workspace,
    tip: str | None,
    changed: tuple[str, ...],
    session: str | None,
    phase: str | None = None,
) -> list[tuple[str, str]]:
    """The Agy-* trailers of a snapshot built on `tip` (the phase carried from it unless given)."""
    head, branch = ws.store.head_info()
    if phase is None:
        phase = ws.store.snapshot(tip).phase if tip else "IDLE"
    found = [("Agy-Format", FORMAT_VERSION), ("Agy-Sections", ", ".join(changed) or "none")]
    if head:
        found.append(("Agy-Head", head))
    if branch:
        found.append(("Agy-Branch", branch))
    found.append(("Agy-Phase", phase))
    found.append((TASK_BASE, _carried_task_base(ws.store, tip, head)))
    if session:
        found.append(("Agy-Session", session))
    return found


TASK_BASE = "Agy-Task-Base"  # the HEAD the current task began at ("none": before any commit)


def _carried_task_base(store: Store, tip: str | None, head: str | None) -> str:
    """The task base a snapshot on `tip` carries: the tip's, or HEAD when a task starts here.

    Carried forward on every snapshot so that post-commit reads it off the tip in O(1) instead of
    walking the task back to its first snapshot (docs/hooks.md: the hooks cost the same at 10 and
    at 100,000 snapshots).
    """
    if tip is None or store.state_blob(tip) is None:
        return head or "none"
    return task_base(store, tip) or "none"


def task_base(store: Store, tip: str) -> str | None:
    """The HEAD recorded when the task that `tip` belongs to began (None: before any commit).

    Read from the tip's trailer; a chain written before the trailer existed is walked once (the
    next snapshot carries the answer).
    """
    recorded = store.snapshot(tip).trailers.get(TASK_BASE)
    if recorded:
        return None if recorded == "none" else recorded
    first = None
    for snap in store.walk(tip):
        if store.state_blob(snap.commit) is None:
            break  # a closing snapshot: the task began after it
        recorded = snap.trailers.get(TASK_BASE)
        if recorded:
            return None if recorded == "none" else recorded
        first = snap
    return first.head if first is not None else None


def one_line(text: str) -> str:
    """A commit subject: one line, whatever was passed to -m (a newline could start a paragraph
    that readers would take for trailers)."""
    return " ".join(text.split())


def refuse_secret_in(what: str, text: str) -> None:
    """Refuse a message (commit subject, tag message) that carries a credential: messages travel
    with the refs they describe (docs/secrets.md)."""
    hits = secrets.scan(text)
    if hits:
        first = hits[0]
        raise SecretFound(
            f"refusing to write: the {what} looks like it holds a {first.kind}: {first.excerpt}",
            hits,
            hint="leave it out of -m, or pass --allow-secret if it is not a secret",
        )


def _refuse_secrets(text: str, before: Document | None, source: bytes | None) -> None:
    """Scan what this write adds, whole key blocks seen (a key body added under a BEGIN line
    the tip already holds is caught); refuse the whole write on a hit.

    Hits are named by their line in the user's STATE.md (`source`) when it holds that line:
    the canonical rendering we scan may number lines differently.
    """
    hits = secrets.scan_changed(text, render(before) if before is not None else None)
    if not hits:
        return
    if source is not None:
        rendered = text.splitlines()
        mine = [t.rstrip() for t in source.decode("utf-8", "replace").splitlines()]
        where: dict[str, int] = {}
        for n, t in enumerate(mine, 1):
            where.setdefault(t, n)
        hits = [h._replace(line=where.get(rendered[h.line - 1], h.line)) for h in hits]
    first = hits[0]
    line = first.line
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    raise SecretFound(
        f"refusing to save: line {line} looks like a {first.kind}: {first.excerpt}{more}",
        hits,
        hint="remove it from STATE.md, or pass --allow-secret if it is not a secret",
    )


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def init(ws: Workspace) -> list[str]:
    """Exclude the view from git, let decisions follow rewrites, and start the ref's reflog."""
    done: list[str] = []
    exclude = ws.layout.commondir / "info" / "exclude"
    lines = exclude.read_text().splitlines() if exclude.exists() else []
    if EXCLUDE_LINE not in (line.strip() for line in lines):
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with open(exclude, "a") as handle:
            if lines and not exclude.read_text().endswith("\n"):
                handle.write("\n")
            handle.write(EXCLUDE_LINE + "\n")
        done.append(f"added {EXCLUDE_LINE} to {exclude}")
    config = ws.store.repo.config
    try:
        rewrite = [str(v) for v in config.get_multivar("notes.rewriteRef")]
    except KeyError:
        rewrite = []
    if DECISIONS_REF not in rewrite:
        config.set_multivar("notes.rewriteRef", "^$", DECISIONS_REF)
        done.append(f"set notes.rewriteRef={DECISIONS_REF}")
    if not ws.store.config_value("agy.user"):
        from gitstate.usecases.sync.carry import (
            agy_user,  # here: carry loads subprocess, save must not
        )

        user = agy_user(ws)
        if user:
            ws.store.set_config("agy.user", user)
            done.append(f"set agy.user={user} (your state travels as refs/agy/users/{user}/state)")
    log = ws.layout.commondir / "logs" / ws.layout.state_ref
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        log.touch()
        done.append(f"started the reflog of {ws.layout.state_ref}")
    return done


__all__ = ["SecretFound", "Written", "checkout", "init", "restore", "save"]
