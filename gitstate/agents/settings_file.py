"""Someone else's JSON settings file, edited in place so that only our own entries change.

A load remembers the file's layout (indent, separators, ASCII escapes, final newline, CRLF), so a
file written by `json.dumps` comes back byte for byte; a file that is not a JSON object (or not
JSON at all) is refused and never rewritten. Writes are atomic (temp file + os.replace), keep the
file's mode and follow a symlink to its target. The Ledger remembers which files, keys and
directories we created, so an uninstall removes exactly those once they are empty again.
Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from gitstate.errors import Failure
from gitstate.storage import view

KeyPath = tuple[str, ...]


class Style(NamedTuple):
    indent: int | str | None
    separators: tuple[str, str]
    ensure_ascii: bool
    newline: bool
    crlf: bool


DEFAULT_STYLE = Style(2, (",", ": "), False, True, False)


def render(data: Any, style: Style = DEFAULT_STYLE) -> str:
    text = json.dumps(
        data, indent=style.indent, separators=style.separators, ensure_ascii=style.ensure_ascii
    )
    if style.newline:
        text += "\n"
    return text.replace("\n", "\r\n") if style.crlf else text


MAX_BYTES = 8 * 1024 * 1024  # an agent's settings file larger than this is not read


class Loaded(NamedTuple):
    path: Path  # the file as named by the caller
    target: Path  # the file actually read and written (a symlink followed)
    data: dict[str, Any] | None  # None: the file does not exist
    text: str | None
    style: Style
    exact: bool  # render(data, style) reproduces the file byte for byte


def load(path: Path) -> Loaded:
    """Read a JSON object file; Failure (naming the file and why) when it cannot be used."""
    target = path.resolve() if path.is_symlink() else path
    # A regular file only, read non-blocking and bounded: a FIFO or device in its place is
    # refused at once instead of hanging install (storage/view.py:read_regular).
    try:
        found = view.read_regular(target, MAX_BYTES + 1)
    except view.NotRegular as exc:
        why = exc.what.removeprefix("unreadable: ")
        raise _refuse(
            path, f"cannot read it ({why})" if why != exc.what else f"it is {why}"
        ) from None
    if found is None:
        if target.parent.exists() and not target.parent.is_dir():
            raise _refuse(path, "cannot read it (Not a directory)")
        return Loaded(path, target, None, None, DEFAULT_STYLE, True)
    if len(found) > MAX_BYTES:
        raise _refuse(path, f"it is over {MAX_BYTES // (1024 * 1024)} MiB")
    raw = found
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(path, "it is not UTF-8 text") from None
    if not text.strip():
        return Loaded(path, target, {}, text, DEFAULT_STYLE, False)
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        why = f"it is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        if _COMMENT.search(text):
            # Gemini CLI reads settings.json with comments; a rewrite of ours would drop them.
            why += "; it seems to hold comments, which rewriting it would lose"
        raise _refuse(path, why) from None
    except RecursionError:
        raise _refuse(path, "it is nested deeper than JSON readers go") from None
    except _DuplicateKey as exc:
        # json.loads keeps the last value; writing back would silently drop the others.
        raise _refuse(path, f"it has the key {exc.args[0]!r} twice") from None
    if not isinstance(data, dict):
        raise _refuse(path, f"its top level is a {kind(data)}, not an object")
    style, exact = _detect(text, data)
    return Loaded(path, target, data, text, style, exact)


def save(loaded: Loaded, data: dict[str, Any]) -> bool:
    """Write data in the file's own layout; False (and no write) when nothing would change."""
    text = render(data, loaded.style)
    if text == loaded.text:
        return False
    mode = None
    with contextlib.suppress(OSError):
        mode = loaded.target.stat().st_mode & 0o7777
    write_atomic(loaded.target, text, mode)
    return True


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Replace path with text at once (readers see the old file or the new one, never half)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".agy-tmp", dir=path.parent)
    except OSError as exc:
        raise Failure(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise Failure(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


_COMMENT = re.compile(r"^\s*//|/\*", re.MULTILINE)


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _refuse(path: Path, why: str) -> Failure:
    return Failure(
        f"cannot use {path}: {why}; left it untouched",
        hint="fix the file (plain JSON: no comments, no trailing commas), "
        "or add the entries by hand (docs/hooks.md shows them)",
    )


def kind(data: object) -> str:
    return {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(data), "number"
    )


def _detect(text: str, data: dict[str, Any]) -> tuple[Style, bool]:
    """The dump settings that reproduce text exactly, else the nearest (indent, newline, CRLF)."""
    crlf = "\r\n" in text
    body = text.replace("\r\n", "\n")
    newline = body.endswith("\n")
    match = re.search(r"\n([ \t]+)[^ \t\n]", body)
    guess: int | str | None
    if match:
        spaces = match.group(1)
        guess = len(spaces) if not spaces.strip(" ") else spaces
    else:
        guess = 0 if "\n" in body.rstrip("\n") else None
    for indent in dict.fromkeys((guess, None)):
        item = "," if indent is not None else ", "
        for separators in ((item, ": "), (",", ":")):
            for ensure_ascii in (False, True):
                style = Style(indent, separators, ensure_ascii, newline, crlf)
                if render(data, style) == text:
                    return style, True
    return Style(guess if guess is not None else 2, (",", ": "), False, newline, crlf), False


# ---- what we created ------------------------------------------------------------------------


class Ledger:
    """Files, keys inside files, and directories we created: uninstall removes only those.

    Kept as JSON in our data directory. A missing or unreadable ledger is an empty one (it is
    our own bookkeeping; losing it only means a container we created may be left behind).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._files: dict[str, dict[str, Any]] = {}
        self._dirs: set[str] = set()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            files, dirs = data.get("files", {}), data.get("dirs", [])
            if isinstance(files, dict) and isinstance(dirs, list):
                self._files = {k: v for k, v in files.items() if isinstance(v, dict)}
                self._dirs = {d for d in dirs if isinstance(d, str)}
        except (OSError, ValueError, AttributeError):
            pass

    def file(self, path: Path) -> dict[str, Any] | None:
        return self._files.get(_key(path))

    def note_file(self, path: Path, created: bool, keys: list[KeyPath]) -> None:
        entry = self._files.setdefault(_key(path), {"created": created, "keys": []})
        entry["created"] = bool(entry.get("created")) or created
        known = [list(k) for k in entry.get("keys", []) if isinstance(k, list)]
        known += [list(k) for k in keys if list(k) not in known]
        entry["keys"] = known

    def created_keys(self, path: Path) -> set[KeyPath] | None:
        entry = self.file(path)
        if entry is None:
            return None
        return {tuple(k) for k in entry.get("keys", []) if isinstance(k, list)}

    def forget_key(self, path: Path, key: KeyPath) -> None:
        entry = self.file(path)
        if entry is not None:
            entry["keys"] = [k for k in entry.get("keys", []) if k != list(key)]
            if not entry["keys"] and not entry.get("created"):
                self.forget_file(path)

    def forget_file(self, path: Path) -> None:
        self._files.pop(_key(path), None)

    def make_dirs(self, directory: Path) -> None:
        missing = []
        probe = directory
        while not probe.exists() and probe != probe.parent:
            missing.append(probe)
            probe = probe.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Failure(f"cannot create {directory}: {exc.strerror or exc}") from None
        self._dirs.update(_key(d) for d in missing)

    def remove_empty_dirs(self, start: Path) -> list[Path]:
        """Remove start and its parents while each is a directory we created and now empty."""
        removed = []
        probe = start
        while _key(probe) in self._dirs:
            if probe.is_dir():
                if any(probe.iterdir()):
                    break
                probe.rmdir()
                removed.append(probe)
            self._dirs.discard(_key(probe))
            probe = probe.parent
        return removed

    def save(self) -> None:
        """Best effort: failing to keep our own bookkeeping must not fail an install."""
        with contextlib.suppress(OSError, Failure):
            self._save()

    def _save(self) -> None:
        if not self._files and not self._dirs:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            with contextlib.suppress(OSError):
                self.path.parent.rmdir()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"v": 1, "files": self._files, "dirs": sorted(self._dirs)}
        write_atomic(self.path, render(data))


def _key(path: Path) -> str:
    return os.path.abspath(path)
