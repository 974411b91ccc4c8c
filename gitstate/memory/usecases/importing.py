"""`memory import PATH`: a folder of Markdown (an Agent Brain, or notes) into the brain in one
commit (docs/memory.md, "Import").

The folder is walked by file descriptor, never following a symbolic link (a link is listed as
skipped, so nothing outside PATH is read), regular files only, opened non-blocking (a FIFO
cannot hold the import). Bounded: at most MAX_FILES files imported, MAX_FILE_BYTES each,
MAX_TOTAL_BYTES in all, MAX_WALKED entries looked at, MAX_DEPTH folders deep; a file over its
limit, not UTF-8, binary, holding a control character or a credential refuses the whole import
naming the file, and nothing moves. Routing and merging are document/importing.py's; the commit
goes through the one write path (usecases/brain.py:write: the lock, the cap of MEMORY.md, the
scans again on what the merge adds, compare-and-swap, the cache, packing).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from gitstate import secrets
from gitstate.document import controls
from gitstate.document.language import counted
from gitstate.errors import Failure, NotFound, UsageError
from gitstate.memory.document import files, importing
from gitstate.memory.storage.brain import Brain
from gitstate.memory.usecases import brain as brain_uc
from gitstate.memory.usecases.brain import Written

MAX_FILE_BYTES = 1024 * 1024  # as `memory edit`
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_FILES = 20_000
MAX_WALKED = 200_000
MAX_DEPTH = 16
LIMIT_HINT = "move it out of PATH (or split it), then import again"


class Source(NamedTuple):
    source: str  # the path inside the folder
    path: str  # the brain path it goes to
    text: str


class Skipped(NamedTuple):
    source: str
    reason: str


class Planned(NamedTuple):
    source: str
    path: str
    action: str  # new, merged, unchanged


class Imported(NamedTuple):
    folder: str
    dry_run: bool
    files: tuple[Planned, ...]
    skipped: tuple[Skipped, ...]
    written: Written | None  # None on a dry run

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(sorted({p.path for p in self.files if p.action != "unchanged"}))

    def as_json(self) -> dict[str, object]:
        written = self.written.as_json() if self.written else {}
        return {
            "source": self.folder,
            "dry_run": self.dry_run,
            "commit": written.get("commit"),
            "files": [{"source": f.source, "path": f.path, "action": f.action} for f in self.files],
            "skipped": [{"source": s.source, "reason": s.reason} for s in self.skipped],
            "paths": list(self.changed),
            "warnings": written.get("warnings", []),
            "memory_lines": written.get("memory_lines"),
            "brain": written.get("brain"),
        }


# ---- reading the folder -----------------------------------------------------------------------


class _Walk:
    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.skipped: list[Skipped] = []
        self.walked = 0
        self.total = 0


def read_folder(folder: Path) -> tuple[list[Source], list[Skipped]]:
    """The folder's Markdown files routed to brain paths, and what was skipped (sorted)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise NotFound(f"{folder} does not exist") from None
    except NotADirectoryError:
        raise UsageError(
            f"{folder} is not a folder", hint="PATH is a folder of Markdown (~/.agent-brain)"
        ) from None
    except OSError as exc:
        raise Failure(f"cannot read {folder}: {exc.strerror}") from None
    walk = _Walk()
    try:
        _walk(walk, fd, "", 0)
    finally:
        os.close(fd)
    return walk.sources, walk.skipped


def _walk(walk: _Walk, dir_fd: int, prefix: str, depth: int) -> None:
    with os.scandir(dir_fd) as listing:
        names = sorted((entry.name, entry) for entry in listing)
    for name, entry in names:
        walk.walked += 1
        if walk.walked > MAX_WALKED:
            raise Failure(
                f"refusing to import: PATH holds more than {MAX_WALKED} entries",
                hint="import a smaller folder",
            )
        relative = prefix + name
        if entry.is_symlink():
            walk.skipped.append(Skipped(relative, "a symbolic link: not followed"))
        elif entry.is_dir(follow_symlinks=False):
            reason = importing.skipped_folder(relative)
            if reason is not None:
                walk.skipped.append(Skipped(relative + "/", reason))
            elif depth + 1 >= MAX_DEPTH:
                walk.skipped.append(Skipped(relative + "/", f"deeper than {MAX_DEPTH} folders"))
            else:
                _descend(walk, dir_fd, name, relative, depth)
        elif not entry.is_file(follow_symlinks=False):
            walk.skipped.append(Skipped(relative, "not a regular file"))
        else:
            routed = importing.route(relative)
            if routed.path is None:
                walk.skipped.append(Skipped(relative, routed.reason))
                continue
            data = _read(dir_fd, name, relative)
            if data is None:
                walk.skipped.append(Skipped(relative, "not a regular file"))
                continue
            walk.total += len(data)
            if walk.total > MAX_TOTAL_BYTES or len(walk.sources) >= MAX_FILES:
                raise Failure(
                    f"refusing to import: more than {MAX_TOTAL_BYTES // 1024 // 1024} MiB or "
                    f"{MAX_FILES} files of Markdown under PATH",
                    hint="import a smaller folder",
                )
            walk.sources.append(Source(relative, routed.path, _text(relative, data)))


def _descend(walk: _Walk, dir_fd: int, name: str, relative: str, depth: int) -> None:
    try:
        # O_NOFOLLOW: a folder swapped for a link since it was listed is not entered.
        sub = os.open(
            name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except OSError:
        walk.skipped.append(Skipped(relative + "/", "not a folder that can be read"))
        return
    try:
        _walk(walk, sub, relative + "/", depth + 1)
    finally:
        os.close(sub)


def _read(dir_fd: int, name: str, relative: str) -> bytes | None:
    """A regular file's bytes (None when it is not one, e.g. swapped for a link or a FIFO)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        raise Failure(
            f"refusing to import {importing.shown(relative)}: it is over {MAX_FILE_BYTES // 1024} KiB",
            hint=LIMIT_HINT,
        )
    return b"".join(chunks)


def _text(relative: str, data: bytes) -> str:
    try:
        text = data.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise Failure(
            f"refusing to import {importing.shown(relative)}: it is not UTF-8 text (byte {exc.start})",
            hint=LIMIT_HINT,
        ) from None
    if "\x00" in text:
        raise Failure(
            f"refusing to import {importing.shown(relative)}: it is binary (it holds a NUL byte)"
        )
    return text if text.endswith("\n") or not text else text + "\n"


# ---- checking and merging ---------------------------------------------------------------------


def _check(source: Source, brain_text: str | None, allow_secret: bool) -> None:
    """The lines this file would add, checked as every write checks them, naming the file."""
    old = set((brain_text or "").split("\n"))
    for number, line in enumerate(source.text.split("\n"), 1):
        char = controls.first(line + "\n" if line.endswith("\r") else line)
        if char is not None and line not in old:
            raise Failure(
                f"refusing to import {importing.shown(source.source)}: line {number} holds the control character "
                f"{controls.name(char)}",
                hint="remove it: terminal escapes, backspaces and bidi overrides make text "
                "show as something else",
            )
    if allow_secret:
        return
    hits = secrets.scan_changed(source.text, brain_text)
    if hits:
        raise brain_uc.secret_refusal(f"import {importing.shown(source.source)}", hits)


def plan(
    brain: Brain | None, tip: str | None, sources: list[Source], allow_secret: bool
) -> tuple[dict[str, str | None], list[Planned]]:
    """(path -> merged text of every file the import changes, what happens to each source);
    `brain` None: there is none yet (a dry run before the first write)."""

    def held(path: str) -> str | None:
        if brain is None:  # the brain the write creates holds the templates
            return {
                files.MEMORY_FILE: files.MEMORY_TEMPLATE,
                files.USER_FILE: files.USER_TEMPLATE,
            }.get(path)
        return brain.text(tip, path)

    merged: dict[str, str] = {}
    planned: list[Planned] = []
    for source in sources:
        current = merged[source.path] if source.path in merged else held(source.path)
        _check(source, current, allow_secret)
        new = importing.merge(source.path, current, source.text)
        action = "new" if current is None else ("unchanged" if new == current else "merged")
        planned.append(Planned(source.source, source.path, action))
        merged[source.path] = new
    changes: dict[str, str | None] = {
        path: text for path, text in merged.items() if text != held(path)
    }
    return changes, planned


def import_folder(folder: str, dry_run: bool = False, allow_secret: bool = False) -> Imported:
    root = Path(folder).expanduser().absolute()
    sources, skipped = read_folder(root)
    clashes = importing.collisions([(source.source, source.path) for source in sources])
    if clashes:
        path, one, two = clashes[0]
        more = f" (and {len(clashes) - 1} more)" if len(clashes) > 1 else ""
        raise UsageError(
            f"refusing to import: {importing.shown(one)} and {importing.shown(two)} both go to "
            f"{path}{more}",
            hint="rename one of them (a folder's `/` becomes `-` in a project name)",
        )
    outcome: list[list[Planned]] = [[]]

    def change(brain: Brain, tip: str | None) -> dict[str, str | None]:
        changes, planned = plan(brain, tip, sources, allow_secret)
        outcome[0] = planned
        return changes

    if dry_run:
        brain: Brain | None = None
        if brain_uc.exists():
            brain, _ = brain_uc.open_brain()
        outcome[0] = plan(brain, brain.tip() if brain else None, sources, allow_secret)[1]
        return Imported(str(root), True, tuple(outcome[0]), tuple(skipped), None)
    subject = f"memory import: {root.name or root} ({counted(len(sources), 'file')})"
    written = brain_uc.write(change, subject, None, allow_secret)
    return Imported(str(root), False, tuple(outcome[0]), tuple(skipped), written)


__all__ = ["Imported", "Planned", "Skipped", "Source", "import_folder", "plan", "read_folder"]
