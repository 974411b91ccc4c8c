"""Read a few git config values without pygit2 or a `git` process (for the agent hooks).

Handles what our own keys need: `[section]` / `[section "sub"]` headers, `key = value` lines,
comments, quoted values, booleans without a value; repository config wins over the global one.
Not a full git-config parser (no includes, no continuation lines): callers only read agy.*.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gitstate.storage.layout import Layout

_SECTION_RE = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_ENTRY_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def _files(layout: Layout | None) -> list[Path]:
    """Lowest priority first, as git reads them (system config is not read)."""
    home = Path(os.environ.get("HOME", "~")).expanduser()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    found = [xdg / "git" / "config"]
    global_file = os.environ.get("GIT_CONFIG_GLOBAL")
    found.append(Path(global_file) if global_file else home / ".gitconfig")
    if layout is not None:
        found.append(layout.commondir / "config")
    return found


def _value(raw: str) -> str:
    text = raw.strip()
    out = []
    quoted = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            quoted = not quoted
        elif char == "\\" and i + 1 < len(text):
            i += 1
            out.append({"n": "\n", "t": "\t"}.get(text[i], text[i]))
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        i += 1
    return "".join(out).strip()


def get(layout: Layout | None, key: str) -> str | None:
    """The last value of `section.key` (or `section.sub.key`) across the config files."""
    section, _, name = key.rpartition(".")
    want_section, _, want_sub = section.partition(".")
    result: str | None = None
    for path in _files(layout):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        current: tuple[str, str] | None = None
        for line in lines:
            stripped = line.strip()
            if not stripped or stripped[0] in "#;":
                continue
            header = _SECTION_RE.match(line)
            if header:
                current = (header.group(1).lower(), header.group(2) or "")
                rest = header.group(3)
                if not rest:
                    continue
                line = rest
            entry = _ENTRY_RE.match(line)
            if entry is None or current is None:
                continue
            if current != (want_section.lower(), want_sub):
                continue
            if entry.group(1).lower() == name.lower():
                result = "true" if entry.group(2) is None else _value(entry.group(2))
    return result


def get_int(layout: Layout | None, key: str, default: int) -> int:
    value = get(layout, key)
    if value is None:
        return default
    multiplier = 1
    suffix = value[-1:].lower()
    if suffix in ("k", "m", "g"):
        multiplier = {"k": 1024, "m": 1024**2, "g": 1024**3}[suffix]
        value = value[:-1]
    try:
        return int(value) * multiplier
    except ValueError:
        return default
