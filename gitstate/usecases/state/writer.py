"""Writing a document onto the state chain: the one write path of save, patch and restore.

Each caller names its `Intent` (what it does, who asked), and the modes follow from it. Under
the work tree's lock: read the view and the tip, find the starting point, build the new document,
check it, commit it on the tip by compare-and-swap (chain.py), and only then replace the view;
a write that finished the task archives it (finish.py) before the lock goes. A lost race
rebuilds on the new tip (a patch is re-applied), so no writer's change is dropped. Once the lock
is released: the brain hears of an archive, and git's gc starts when due.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

from gitstate.document.language import KEYS
from gitstate.document.model import ESCAPED_IN_PROGRESS, Document, render
from gitstate.document.validate import LIMIT_CODES, Report
from gitstate.errors import WorkAtRisk
from gitstate.storage import exclude, maintenance, refs, view
from gitstate.storage.snapshot_text import compose_message
from gitstate.usecases.state import chain, finish, refusals
from gitstate.usecases.state.chain import MAX_ATTEMPTS, TASK_BASE, now_stamp, one_line, task_base
from gitstate.usecases.state.refusals import refuse_secret_in
from gitstate.usecases.workspace import Workspace

# Type checkers take this as typing.TYPE_CHECKING (True). At run time neither typing,
# dataclasses (it brings inspect) nor enum is loaded: an agent hook that saves comes through
# here on its own clock (storage/loose.py), and enum with what it imports (functools, types)
# would cost it about a tenth (docs/hooks.md, "Start-up cost"). So the names below are classes
# of string constants, typed as Literals.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Final, Literal, NamedTuple

    ActionName = Literal["save", "patch", "restore"]
    OriginName = Literal["user", "hook"]
    OutcomeName = Literal["saved", "unchanged", "nothing", "checked-out"]

    class _ProducedFields(NamedTuple):
        document: Document
        notices: tuple[str, ...] = ()
        summary: str = ""

    class _WrittenFields(NamedTuple):
        outcome: OutcomeName
        snapshot: str | None
        sections: tuple[str, ...] = ()
        notices: tuple[str, ...] = ()
        merged: bool = False  # the view was merged with a tip that moved since it was written
        view_kept: bool = False  # STATE.md changed while we wrote, so it was left alone
        overwritten: Path | None = None  # where replaced unsaved edits were kept
        archived: str | None = None  # the archive ref, when this write finished the task
        repaired: bool = False  # an unchanged write put Gemini's `[&gt;]` back as `[>]`

else:
    _ProducedFields = namedtuple("_ProducedFields", "document notices summary", defaults=((), ""))
    _WrittenFields = namedtuple(
        "_WrittenFields",
        "outcome snapshot sections notices merged view_kept overwritten archived repaired",
        defaults=((), (), False, False, None, None, False),
    )


class Action:
    """What a write does to the state."""

    SAVE: Final = "save"  # snapshot the view as it is; a missing view stays missing
    # Apply a change to the view (or the tip, or a template); the view follows the result, even
    # an unchanged one; a view over its line limits is taken (the patch may be what shrinks it).
    PATCH: Final = "patch"
    # An old snapshot's content becomes the tip; the view follows it (unsaved edits refused).
    RESTORE: Final = "restore"


class Origin:
    """Who asked for the write: only the user's own save or patch may finish the task."""

    USER: Final = "user"  # the command for it: `save`, `patch`, `restore`, `archive`
    # On its own, while doing something else: the agent hooks' saves (stop guard, pre-compact),
    # a checkpoint's save, post-commit's changed_files, a job's seeded chain.
    HOOK: Final = "hook"


class Intent:
    """What a write is for, as its caller names it (docs/archive.md: who may archive)."""

    __slots__ = ("action", "adds_steps", "origin")

    def __init__(
        self, action: ActionName, origin: OriginName = Origin.USER, adds_steps: bool = False
    ) -> None:
        self.action = action
        self.origin = origin
        self.adds_steps = adds_steps  # the change itself puts steps into next_steps

    def _key(self) -> tuple[ActionName, OriginName, bool]:
        return self.action, self.origin, self.adds_steps

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Intent) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Intent({self.action!r}, {self.origin!r}, adds_steps={self.adds_steps})"

    @property
    def may_finish_task(self) -> bool:
        """Emptying next_steps archives the task only for the user's own save or patch, and
        never for a patch that adds steps itself."""
        return (
            self.origin == Origin.USER
            and self.action in (Action.SAVE, Action.PATCH)
            and not self.adds_steps
        )

    @property
    def view_follows_unchanged(self) -> bool:
        """An unchanged write still brings a missing view back (a save leaves it missing)."""
        return self.action != Action.SAVE

    @property
    def starts_from_tip(self) -> bool:
        """The document is built on the tip, the view only guarded, never merged."""
        return self.action == Action.RESTORE

    @property
    def takes_over_limit_view(self) -> bool:
        return self.action == Action.PATCH


SAVE = Intent(Action.SAVE)
HOOK_SAVE = Intent(Action.SAVE, Origin.HOOK)
RESTORE = Intent(Action.RESTORE)


class Outcome:
    """What a write did; the value is the `outcome` of `--json` (docs/json.md)."""

    SAVED: Final = "saved"  # a new snapshot is the tip
    UNCHANGED: Final = "unchanged"  # the content equals the tip: no snapshot
    NOTHING: Final = "nothing"  # no document to write (no view and no snapshot yet)
    CHECKED_OUT: Final = "checked-out"  # `checkout`: the view was written from a snapshot


class Produced(_ProducedFields):
    """What a Producer built: the new document, notices for the user, and what it did in
    words (a patch's summary, for the snapshot's subject)."""

    __slots__ = ()


# Builds the new document from the starting one (None: no view and no snapshot yet); None when
# there is nothing to write. Called again on the new tip when a race is lost.
Producer = Callable[[Document | None], Produced | None]
# The snapshot's subject, from the keys that changed and the Producer's summary.
Subject = Callable[[tuple[str, ...], str], str]


class Written(_WrittenFields):
    __slots__ = ()

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
            "repaired": self.repaired,
        }


def save(
    ws: Workspace,
    message: str | None = None,
    allow_secret: bool = False,
    session: str | None = None,
    origin: str | None = None,
) -> Written:
    """Snapshot the view; a no-op that says so when nothing changed.

    `origin` names a hook or command that saved on its own (`stop-guard`, `pre-compact`,
    `checkpoint`), for the log; such a save never archives (docs/phase-and-checkpoints.md)."""
    verb = f"save ({origin})" if origin else "save"

    def produce(start: Document | None) -> Produced | None:
        return None if start is None else Produced(start)

    def subject(changed: tuple[str, ...], _summary: str) -> str:
        return message or f"{verb}: " + (", ".join(changed) or "no change")

    intent = SAVE if origin is None else HOOK_SAVE
    return write_as(ws, intent, produce, subject, allow_secret=allow_secret, session=session)


def write_as(
    ws: Workspace,
    intent: Intent,
    produce: Producer,
    subject: Subject,
    *,
    allow_secret: bool = False,
    session: str | None = None,
    force: bool = False,
) -> Written:
    """The one write path: see the module doc. `allow_secret` lets a credential through the
    scan; `force` lets a restore replace unsaved edits (kept aside, said in `overwritten`)."""
    ws.check_workdir()
    with ws.locked():
        written = _write_locked(ws, intent, produce, subject, allow_secret, session, force)
    if written.archived:
        finish.remember(ws, written.archived)
    if written.outcome == Outcome.SAVED:
        _maintain(ws)
    return written


def _write_locked(
    ws: Workspace,
    intent: Intent,
    produce: Producer,
    subject: Subject,
    allow_secret: bool,
    session: str | None,
    force: bool,
) -> Written:
    """The loop under the lock: one attempt per tip, until the compare-and-swap holds."""
    store = ws.store
    data = ws.view_bytes()
    overwritten: Path | None = None  # kept aside once, whatever attempt found them

    def attempt() -> Written | None:
        nonlocal overwritten
        tip = store.tip()
        tip_doc = ws.snapshot_document(tip)
        if intent.starts_from_tip:
            target = render(tip_doc).encode() if tip_doc else b""
            overwritten = overwritten or guard_unsaved(ws, data, target, force, "restore")
            start, merged = tip_doc, False
        else:
            start, merged = _starting_point(ws, data, tip, tip_doc, intent.takes_over_limit_view)
        produced = produce(start)
        if produced is None:
            return Written(Outcome.NOTHING, tip)
        new, notices = produced.document, produced.notices
        if tip_doc is not None and new.same_content(tip_doc):
            assert tip is not None
            return _unchanged(ws, intent, data, tip, notices, overwritten)
        changed = new.changed_keys(tip_doc) if tip_doc else _nonempty(new)
        new = new.with_stamp(now_stamp())
        text = render(new)
        line = one_line(subject(changed, produced.summary))
        message = _message(ws, tip, tip_doc, data, text, line, changed, allow_secret, session)
        view.check_record_writable(ws.place)  # nothing moves that could not be finished
        commit = chain.commit_on(ws, tip, text.encode(), message, line)
        if commit is None:
            return None  # the ref moved: rebuild on the new tip
        kept = not _replace_view(ws, data, text.encode(), commit)
        archived = _finish_if_done(ws, intent, commit, tip_doc, new, merged or kept)
        return Written(Outcome.SAVED, commit, changed, notices, merged, kept, overwritten, archived)

    return refs.retry(ws.place.state_ref, attempt, "nothing was saved")


def _finish_if_done(
    ws: Workspace,
    intent: Intent,
    commit: str,
    before: Document | None,
    after: Document,
    unsettled: bool,
) -> str | None:
    """The archive decision (docs/archive.md): a write the intent lets finish the task, that
    emptied next_steps, archives it; the archive ref, or None. Not when the write is `unsettled`
    (merged with a moved tip, or its view changed under it): the next explicit save decides."""
    if not intent.may_finish_task or unsettled or not finish.finishes(before, after):
        return None
    return finish.archive_locked(ws, commit, after)


def guard_unsaved(
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
    return view.keep_overwritten(ws.place, data)


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


def _unchanged(
    ws: Workspace,
    intent: Intent,
    data: bytes | None,
    tip: str,
    notices: tuple[str, ...],
    overwritten: Path | None,
) -> Written:
    """The content equals the tip: no snapshot; the view follows the tip when there is one
    (or when the intent brings a missing view back)."""
    tip_bytes = ws.store.state_bytes(tip)
    if tip_bytes is not None and (data is not None or intent.view_follows_unchanged):
        kept = not _replace_view(ws, data, tip_bytes, tip)
        repaired = not kept and _unescapes(data, tip_bytes)
        return Written(
            Outcome.UNCHANGED,
            tip,
            (),
            notices,
            view_kept=kept,
            overwritten=overwritten,
            repaired=repaired,
        )
    return Written(Outcome.UNCHANGED, tip, (), notices, overwritten=overwritten)


def _unescapes(view_bytes: bytes | None, tip_bytes: bytes) -> bool:
    """The view had `[&gt;]` markers the tip writes as `[>]` (docs/format.md): replacing it
    with the tip repaired them, though no snapshot was made."""
    marker = ESCAPED_IN_PROGRESS.encode()
    return view_bytes is not None and view_bytes.count(marker) > tip_bytes.count(marker)


def _message(
    ws: Workspace,
    tip: str | None,
    tip_doc: Document | None,
    data: bytes | None,
    text: str,
    line: str,
    changed: tuple[str, ...],
    allow_secret: bool,
    session: str | None,
) -> str:
    """The snapshot's message, once the new text is known to be storable and (unless allowed)
    free of credentials; a document over its line limits is marked, not refused (a merge may
    break a limit; `check` says what to shrink)."""
    report = refusals.refuse_unstorable(text, line, ws.new_language())
    if not allow_secret:
        refusals.refuse_secrets(text, tip_doc, data)
        refuse_secret_in("snapshot message", line)
    written = chain.trailers(ws, tip, changed, session)
    over = _over_limit(report)
    if over:
        written.append(("Agy-Conflict", ", ".join(over)))
    return compose_message(line, written)


def _over_limit(report: Report) -> list[str]:
    keys = {p.section for p in report.errors if p.code in LIMIT_CODES and p.section}
    return [k for k in KEYS if k in keys]


def _replace_view(ws: Workspace, read: bytes | None, new: bytes, snapshot: str) -> bool:
    """Write the view unless it changed since we read it (someone is editing: keep theirs)."""
    if ws.view_bytes() != read:
        return False
    view.write(ws.place, new, snapshot)
    exclude.ensure_view(ws.place)
    return True


def _nonempty(doc: Document) -> tuple[str, ...]:
    return tuple(k for k in KEYS if doc.section(k))


def _maintain(ws: Workspace) -> None:
    """Start git's gc in the background when enough loose objects piled up."""
    layout = ws.place
    if maintenance.gc_due(layout, _int(ws.store.config_value("gc.auto"))):
        maintenance.start_gc(layout)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# MAX_ATTEMPTS, TASK_BASE and task_base are chain.py's, refuse_secret_in is refusals.py's: named
# here too for the callers (tests, bench, checkpoints) that read them with the write path.
__all__ = [
    "HOOK_SAVE",
    "MAX_ATTEMPTS",
    "RESTORE",
    "SAVE",
    "TASK_BASE",
    "Action",
    "Intent",
    "Origin",
    "Outcome",
    "Produced",
    "Written",
    "guard_unsaved",
    "refuse_secret_in",
    "save",
    "task_base",
    "write_as",
]
