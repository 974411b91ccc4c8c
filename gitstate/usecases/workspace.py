"""One work tree opened for use: its layout, its store, its lock, and the documents in them.

Use cases start here. Reading the view and the tip as Documents, and deciding whether the view
holds unsaved edits, happen in one place so every command agrees on them.
"""

from __future__ import annotations

import os

from gitstate.document import language as lang_mod
from gitstate.document.language import Language
from gitstate.document.model import MAX_BYTES, Document, parse
from gitstate.document.validate import LIMIT_CODES, Report, check_bytes, decode
from gitstate.errors import Failure, InvalidDocument
from gitstate.storage import lock as lock_mod
from gitstate.storage import view
from gitstate.storage.hooklayout import pathlib_layout

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded:
# an agent hook that saves opens a Workspace (for_hook).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from gitstate.storage.hooklayout import AnyLayout
    from gitstate.storage.layout import Layout
    from gitstate.storage.snapshots import Store


class Workspace:
    """The store (pygit2) is opened on first use: a command that only asks git (a sync with
    nothing to merge) never pays pygit2's start-up.

    `place` is the layout the workspace was opened with: the pathlib Layout for a command, the
    str HookLayout for an agent hook's save. A save goes through `place` only, with os.path, so
    the hook never loads pathlib (docs/hooks.md, "Start-up cost"); `layout` is the pathlib
    Layout the rest of the use cases take, made from a HookLayout on first use."""

    def __init__(self, layout: AnyLayout, store: Store | None = None) -> None:
        self.place = layout
        self._layout: Layout | None = None
        self._store = store

    @property
    def layout(self) -> Layout:
        if self._layout is None:
            self._layout = pathlib_layout(self.place)
        return self._layout

    @property
    def store(self) -> Store:
        if self._store is None:
            from gitstate.storage.snapshots import Store

            self._store = Store(self.layout)
        return self._store

    @property
    def store_open(self) -> bool:
        return self._store is not None

    @classmethod
    def open(cls, start: Path | str | None = None) -> Workspace:
        from gitstate.storage import discovery

        layout, store = discovery.find(start)
        return cls(layout, store)

    @classmethod
    def for_hook(cls, layout: AnyLayout) -> Workspace:
        """The work tree an agent hook saves in: its store is the standard-library one where
        that provably writes what pygit2's would, else pygit2's (docs/hooks.md, "The hooks'
        own save")."""
        from gitstate.storage import loose

        return cls(layout, loose.open_for_hook(layout))

    def locked(self) -> _Locked:
        """`with ws.locked():` — the work tree's writer lock, a killed writer's temporary
        files cleared once it is held."""
        return _Locked(self)

    def check_workdir(self) -> None:
        """Failure in a bare repository; asked of `place`, so a hook's save loads no pathlib."""
        if self.place.workdir is None:
            raise Failure(
                "this command needs a work tree; the repository is bare",
                hint="run it in a clone with a work tree",
            )

    def require_workdir(self) -> Path:
        self.check_workdir()
        workdir = self.layout.workdir
        assert workdir is not None  # the same place as `place`
        return workdir

    # ---- documents ------------------------------------------------------------------------

    def new_language(self) -> Language:
        """The user's language: agy.language, else the locale (LC_ALL, LC_MESSAGES, LANG). New
        documents are written in it, and messages about any document are (docs/format.md)."""
        configured = self.store.config_value("agy.language")
        if configured:
            try:
                return lang_mod.by_code(configured)
            except KeyError:
                raise Failure(
                    f"agy.language is {configured!r}",
                    hint="set it to zh-TW, zh-CN or en: git config agy.language en",
                ) from None
        return lang_mod.user_language(None, os.environ)

    def snapshot_document(self, commit: str | None) -> Document | None:
        """The document a snapshot holds; None for no snapshot or a closing one. A STATE.md
        that is not text is a BrokenRef (storage/snapshots.py), never a decode error."""
        if commit is None:
            return None
        text = self.store.state_text(commit)
        if text is None:
            return None
        return parse(text)

    def view_bytes(self) -> bytes | None:
        return view.read(self.place)

    def view_state(self, data: bytes | None, tip: str | None) -> str:
        """`missing`, `clean` or `dirty`; a view equal to the tip is clean even with no record."""
        state = view.status(self.place, data)
        if state != "dirty" or data is None or tip is None:
            return state
        if view.blob_id(data) == self.store.state_blob(tip):
            return "clean"
        # the title never counts (docs/format.md), as in save and diff
        written = self.store.state_bytes(tip)
        if written is not None and view.same_but_title(written, data):
            return "clean"
        return state

    def view_report(self, data: bytes) -> Report:
        # The view is read only up to just past the limit; name the file's real size.
        size = view.size(self.place) if len(data) > MAX_BYTES else None
        return check_bytes(data, self.new_language(), size)

    def view_document(self, data: bytes, over_limit_ok: bool = False) -> Document:
        """The view as a Document; InvalidDocument (every problem) when it breaks a rule.

        With `over_limit_ok`, size-limit problems alone are let through (a sync merge may leave
        a document over its limits; a patch that shrinks it must still be possible)."""
        report = self.view_report(data)
        problems = report.errors
        if over_limit_ok:
            problems = tuple(p for p in problems if p.code not in LIMIT_CODES)
        if problems:
            raise InvalidDocument(
                "STATE.md is invalid", report.errors, hint="fix it, then run git agy-state check"
            )
        text, _ = decode(data)
        assert text is not None
        return parse(text)

    def recorded_snapshot(self) -> str | None:
        """The snapshot the view was last written from, if it still exists."""
        record = view.read_record(self.place)
        if record is None or record.ref != self.place.state_ref:
            return None
        if not self.store.has_object(record.snapshot):
            return None
        return record.snapshot


class _Locked:
    """Workspace.locked as a context manager written out (storage/lock.py:Held says why)."""

    __slots__ = ("_held", "_place")

    def __init__(self, ws: Workspace) -> None:
        self._place = ws.place
        self._held = lock_mod.held(os.path.join(ws.place.agy_dir, "lock"))

    def __enter__(self) -> None:
        self._held.__enter__()
        try:
            view.clean_stale_tmp(self._place)
        except BaseException:
            self._held.__exit__(None, None, None)
            raise

    def __exit__(self, *exc_info: object) -> None:
        self._held.__exit__(*exc_info)
