"""Read a few git config values without pygit2 or a `git` process (for the agent hooks).

Handles what our own keys need: `[section]` / `[section "sub"]` headers, `key = value` lines,
comments, quoted values, booleans without a value; repository config wins over the global one.
Not a full git-config parser (no includes, no continuation lines): callers only read agy.*.
"""

from __future__ import annotations

import os

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.storage.hooklayout import AnyLayout as Layout

# The characters of a section name and of a key (ASCII only, as git's).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_KEY_CHARS = _LETTERS | frozenset("0123456789-")


def _files(layout: Layout | None) -> list[str]:
    """Lowest priority first, as git reads them (system config is not read)."""
    home = os.path.expanduser(os.environ.get("HOME", "~"))
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = [os.path.join(xdg, "git", "config")]
    global_file = os.environ.get("GIT_CONFIG_GLOBAL")
    found.append(global_file if global_file else os.path.join(home, ".gitconfig"))
    if layout is not None:
        found.append(os.path.join(layout.commondir, "config"))
    return found


# Hand-written, not regular expressions: compiling two patterns cost every agent hook more than
# reading the files. The grammar is the one these patterns had (tests/test_gitconfig.py):
#   header  ^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$
#   entry   ^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$


def _header(line: str) -> tuple[str, str, str] | None:
    """(section, subsection as written, the rest of the line) of a `[section]` or
    `[section "sub"]` line; None when the line is no header."""
    text = line.lstrip()
    if not text.startswith("["):
        return None
    end = len(text)
    at = len(text) - len(text[1:].lstrip())
    start = at
    while at < end and text[at] in _NAME_CHARS:
        at += 1
    if at == start:
        return None
    name = text[start:at]
    after = len(text) - len(text[at:].lstrip())
    sub = ""
    if after < end and text[after] == '"' and after > at:
        at = after + 1
        begin = at
        while at < end and text[at] != '"':
            if text[at] == "\\":
                if at + 1 == end:
                    return None  # a lone backslash escapes nothing
                at += 1
            at += 1
        if at == end:
            return None  # no closing quote
        sub = text[begin:at]
        after = len(text) - len(text[at + 1 :].lstrip())
    if after == end or text[after] != "]":
        return None
    return name, sub, text[after + 1 :].lstrip()


def _entry(line: str) -> tuple[str, str | None] | None:
    """(key, raw value or None for a bare key) of a `key = value` line; None when it is none."""
    text = line.lstrip()
    if not text or text[0] not in _LETTERS:
        return None
    at = 1
    while at < len(text) and text[at] in _KEY_CHARS:
        at += 1
    key, rest = text[:at], text[at:].lstrip()
    if not rest:
        return key, None
    if rest[0] != "=":
        return None
    return key, rest[1:].lstrip()


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
    return get_many(layout, (key,))[key]


def get_many(layout: Layout | None, keys: tuple[str, ...]) -> dict[str, str | None]:
    """`get` of several keys in one pass over the files (a hook reads two or three)."""
    wanted: dict[tuple[str, str, str], str] = {}
    for key in keys:
        section, _, name = key.rpartition(".")
        want_section, _, want_sub = section.partition(".")
        wanted[(want_section.lower(), want_sub, name.lower())] = key
    result: dict[str, str | None] = dict.fromkeys(keys)
    for path in _files(layout):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        current: tuple[str, str] | None = None
        for line in lines:
            stripped = line.strip()
            if not stripped or stripped[0] in "#;":
                continue
            header = _header(line)
            if header:
                current = (header[0].lower(), header[1])
                line = header[2]
                if not line:
                    continue
            entry = _entry(line)
            if entry is None or current is None:
                continue
            asked = wanted.get((*current, entry[0].lower()))
            if asked is not None:
                result[asked] = "true" if entry[1] is None else _value(entry[1])
    return result


def get_int(layout: Layout | None, key: str, default: int) -> int:
    return as_int(get(layout, key), default)


def as_int(raw: str | None, default: int) -> int:
    """A config value as git's integers (a k, m or g suffix multiplies); `default` if none."""
    if raw is None:
        return default
    value = raw
    multiplier = 1
    suffix = value[-1:].lower()
    if suffix in ("k", "m", "g"):
        multiplier = {"k": 1024, "m": 1024**2, "g": 1024**3}[suffix]
        value = value[:-1]
    try:
        return int(value) * multiplier
    except ValueError:
        return default
