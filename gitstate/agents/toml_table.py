"""One `[table]` of someone else's TOML file, edited as text so that nothing else changes.

Codex keeps its settings in `config.toml` (docs/mcp.md): install adds our table, uninstall takes
it away and gives back the file byte for byte. TOML has no standard-library writer, and parsing
and re-serialising would drop the user's comments and layout, so the edit is textual: a table is
its header line up to the next header that is not one of its sub-tables. Every edit is checked by
parsing the text before and after (tomllib; `tomli` on Python 3.10): the result must equal the
old contents with exactly our table set or removed, otherwise the file is refused and left alone
— as is a file that does not parse at all.

Inserting appends the table at the end, after one blank line (a file without a final newline
gets only the newline), and removing undoes exactly that, so insert-then-remove is the identity.
Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from gitstate.errors import Failure

Key = tuple[str, ...]
Value = str | bool | int | Sequence[str] | Mapping[str, str]

BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class Unparsable(Failure):
    """The file is not TOML we can read, or an edit would change more than our table."""


def loads(text: str, where: str) -> dict[str, Any]:
    """The file's contents; Unparsable (naming `where`) when it is not valid TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: tomli is tomllib's original, when it is installed
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise Unparsable(
                f"cannot edit {where}: reading TOML needs Python 3.11 or the tomli package",
                hint="pip install tomli, or use Python 3.11 or newer",
            ) from None
    try:
        data: dict[str, Any] = tomllib.loads(text)
        return data
    except tomllib.TOMLDecodeError as exc:
        raise Unparsable(
            f"{where} is not valid TOML ({exc}); left it unchanged",
            hint="fix the file (or move it away), then run this again",
        ) from None


def render(key: Key, values: Mapping[str, Value]) -> str:
    """`[a.b]` and one `name = value` line per value (lists and tables inline, so that the
    table is one block with no sub-table headers of its own)."""
    lines = [f"[{dotted(key)}]"]
    lines += [f"{_key(name)} = {_value(value)}" for name, value in values.items()]
    return "\n".join(lines) + "\n"


def get(text: str, key: Key, where: str) -> Any:
    """The table at `key` as parsed, or None."""
    node: Any = loads(text, where)
    for part in key:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def upsert(text: str, key: Key, values: Mapping[str, Value], where: str) -> str:
    """`text` with the table at `key` replaced in place (sub-tables too), or appended."""
    before = loads(text, where)
    block = render(key, values)
    span = _span(text, key)
    if span is None:
        # After one newline: a blank line when the text ends with one, else its line's end.
        new = text + "\n" + block if text else block
    else:
        start, end = span
        new = text[:start] + block + text[end:]
    _expect(new, _with(before, key, loads(block, where), set_=True), key, where)
    return new


def remove(text: str, key: Key, where: str) -> str:
    """`text` without the table at `key` (nor its sub-tables); unchanged when it has none.
    A table at the end takes the newline upsert put before it."""
    before = loads(text, where)
    span = _span(text, key)
    if span is None:
        return text
    start, end = span
    head, tail = text[:start], text[end:]
    if not tail:
        head = head[:-1]  # the newline upsert put before the block (head ends with one)
    elif tail.startswith("\n"):
        tail = tail[1:]  # the blank line that separated the block from the next table
    new = head + tail
    _expect(new, _with(before, key, None, set_=False), key, where)
    return new


def dotted(key: Key) -> str:
    return ".".join(_key(part) for part in key)


# ---- finding a table's lines ---------------------------------------------------------------

HEADER = re.compile(r"[ \t]*\[")


def _span(text: str, key: Key) -> tuple[int, int] | None:
    """The character range of the table at `key` with its sub-tables: from its header line to
    the next header outside it (or the end), without the blank lines before that header."""
    start = end = None
    offset = 0
    in_string: str | None = None
    for line in text.splitlines(keepends=True):
        header = None if in_string else _header(line)
        in_string = _multiline_state(line, in_string)
        if header is not None:
            ours = header[: len(key)] == key
            if start is None and header == key:
                start = offset
            elif start is not None and end is None and not ours:
                end = offset
        offset += len(line)
    if start is None:
        return None
    if end is None:
        end = len(text)
    while end > start and text[:end].endswith("\n\n"):
        end -= 1  # blank lines before the next header belong to neither table
    return start, end


def _header(line: str) -> Key | None:
    """The key of a `[table]` or `[[array]]` header line, or None (found by parsing the line
    alone: a TOML parser knows the quoting rules; the whole-file check catches the rest)."""
    if not HEADER.match(line):
        return None
    stripped = line.strip()
    array = stripped.startswith("[[")
    try:
        node: Any = loads(stripped, "a header")
    except Failure:
        return None
    parts: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        [(name, node)] = node.items()
        parts.append(name)
        if array and isinstance(node, list) and len(node) == 1:
            node = node[0]
    return tuple(parts) if parts else None


def _multiline_state(line: str, in_string: str | None) -> str | None:
    """Whether a multi-line string is still open after `line` (its delimiter), roughly: counts
    of `\"\"\"` and `'''`; good enough to skip `[` lines inside one, and the check after each
    edit refuses whatever it got wrong."""
    for delim in ('"""', "'''"):
        if in_string in (None, delim) and line.count(delim) % 2 == 1:
            return None if in_string == delim else delim
    return in_string


# ---- checking an edit ----------------------------------------------------------------------


def _with(data: dict[str, Any], key: Key, table: Any, set_: bool) -> dict[str, Any]:
    import copy

    out = copy.deepcopy(data)
    node = out
    for part in key[:-1]:
        node = node.setdefault(part, {})
    if set_:
        node[key[-1]] = _dig(table, key)
    else:
        node.pop(key[-1], None)
    return out


def _dig(node: Any, key: Key) -> Any:
    for part in key:
        node = node[part]
    return node


def _pruned(data: dict[str, Any], key: Key) -> dict[str, Any]:
    """`data` without the empty parents along `key`: `[a.b]` makes `a` exist, and a file may
    or may not say `[a]` itself; either way an empty `a` is the same settings."""
    import copy

    out = copy.deepcopy(data)
    for depth in range(len(key) - 1, 0, -1):
        try:
            parent = _dig(out, key[: depth - 1]) if depth > 1 else out
        except (KeyError, TypeError):
            continue  # that parent is not there (a deeper key): nothing to prune at this depth
        if isinstance(parent, dict) and parent.get(key[depth - 1]) == {}:
            del parent[key[depth - 1]]
    return out


def _expect(new: str, wanted: dict[str, Any], key: Key, where: str) -> None:
    try:
        got = loads(new, where)
    except Unparsable:
        got = None
    if got is None or _pruned(got, key) != _pruned(wanted, key):
        raise Unparsable(
            f"cannot edit {where} safely: the change would not be our table alone; "
            "left it unchanged",
            hint="edit the file by hand (docs/mcp.md shows the table)",
        )


# ---- writing values ------------------------------------------------------------------------


def _key(name: str) -> str:
    return name if BARE_KEY.fullmatch(name) else _string(name)


def _string(text: str) -> str:
    # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped too.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_key(k)} = {_string(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    return "[" + ", ".join(_string(item) for item in value) + "]"
