"""`git agy-state memory search` and `memory index` without click: the path gitstate/entry.py
takes for them.

An agent runs searches in a loop, and loading click and the command modules costs more than a
query on a current index (docs/memory.md, "Search"); a full `memory index --rebuild` pays it too.
`parse` accepts part of what the click command (cli/memory.py, `search_cmd`) accepts: query
words, `--json`, `-n N`, `-nN`, `--limit N`, `--limit=N` with N plain digits, in any order (the
last limit wins, as in click); `parse_index` accepts `--rebuild` and `--json`. Anything else
(`-h`, `--help`, `--`, any other word that starts with `-`, a limit click would have to convert
or refuse) returns None and goes to click. For what they accept, the output, the error lines
and the exit codes are the click commands': both print through `render`/`render_index` and the
error map (tests/test_memory_search_cli.py runs both on the same arguments).
"""

from __future__ import annotations

import os
import sys

from gitstate.memory.usecases.search import DEFAULT_LIMIT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.memory.storage.fts import Hit
    from gitstate.memory.usecases.search import Indexed


ECHO_LIMIT = 60  # characters of the query a "no match" line repeats


class Arguments:
    __slots__ = ("as_json", "limit", "words")

    def __init__(self, words: list[str], limit: int, as_json: bool) -> None:
        self.words = words
        self.limit = limit
        self.as_json = as_json


def parse(args: list[str]) -> Arguments | None:
    """The arguments after `memory search`, or None: let click parse them."""
    words: list[str] = []
    limit, as_json = DEFAULT_LIMIT, False
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        value = None
        if arg == "--json":
            as_json = True
            continue
        if arg in ("-n", "--limit"):
            if at == len(args):
                return None
            value, at = args[at], at + 1
        elif arg.startswith("--limit="):
            value = arg[len("--limit=") :]
        elif arg.startswith("-n") and len(arg) > 2 and arg[2] != "=":
            value = arg[2:]
        elif arg.startswith("-"):
            return None
        else:
            words.append(arg)
            continue
        if not (value.isascii() and value.isdigit()):
            return None
        limit = int(value)
    return Arguments(words, limit, as_json) if words else None


def render(hits: list[Hit], query: str, as_json: bool) -> str:
    """What `memory search` prints on stdout, control characters escaped."""
    if as_json:
        rows = [hit.as_json() for hit in hits]
        return _rows_json(rows) or _json(rows)
    from gitstate.document.controls import escape

    if not hits:
        shown = query if len(query) <= ECHO_LIMIT else query[:ECHO_LIMIT] + "…"
        return escape(f"no match for {shown!r}") + "\n"
    lines = []
    for hit in hits:
        lines.append(f"{hit.path}  (score {hit.score:.3f})")
        lines.append("    " + " ".join(hit.snippet.split()))
    return "".join(escape(line) + "\n" for line in lines)


def parse_index(args: list[str]) -> tuple[bool, bool] | None:
    """(--rebuild, --json) after `memory index`, or None: let click parse them."""
    if not set(args) <= {"--rebuild", "--json"}:
        return None
    return "--rebuild" in args, "--json" in args


def render_index(done: Indexed, as_json: bool) -> str:
    """What `memory index` prints on stdout."""
    from gitstate.document.controls import escape

    if as_json:
        return _json(done.as_json())
    verb = "rebuilt" if done.rebuilt else "indexed"
    tip = done.tip[:12] if done.tip else "none"
    return (
        escape(
            f"{verb} {tip}: {done.files} files, {done.chunks} chunks "
            f"({done.indexed} read, {done.removed} dropped)"
        )
        + "\n"
    )


# What json.dumps escapes in a string (with ensure_ascii=False: `"`, backslash and C0), and what
# controls.escape_json then writes as \uXXXX (DEL, C1, the bidi controls), in one table.
_JSON_SHORT = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_JSON_ESCAPED = (
    *range(0x20),
    0x22,
    0x5C,
    *range(0x7F, 0xA0),
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)


def _json_string(text: str, table: dict[int, str]) -> str:
    return '"' + text.translate(table) + '"'


def _rows_json(rows: list[dict[str, object]]) -> str | None:
    """`_json(rows)` for a list of flat objects of strings and numbers, without loading json
    (1-2 ms of a search that takes about as much): the same text, byte for byte
    (tests/test_memory_search_cli.py compares them). None for any other value: `_json` then."""
    if not rows:
        return "[]\n"
    table = {code: _JSON_SHORT.get(chr(code)) or f"\\u{code:04x}" for code in _JSON_ESCAPED}
    objects = []
    for row in rows:
        if not row:
            return None
        fields = []
        for key, value in row.items():
            if not isinstance(key, str):
                return None
            if isinstance(value, str):
                text = _json_string(value, table)
            elif isinstance(value, float) and value - value == 0:  # finite: repr is JSON
                text = float.__repr__(value)
            elif isinstance(value, int) and not isinstance(value, bool):
                text = int.__repr__(value)
            else:
                return None
            fields.append(f"    {_json_string(key, table)}: {text}")
        objects.append("  {\n" + ",\n".join(fields) + "\n  }")
    return "[\n" + ",\n".join(objects) + "\n]\n"


def _json(value: object) -> str:
    import json

    from gitstate.document.controls import escape_json

    return escape_json(json.dumps(value, ensure_ascii=False, indent=2)) + "\n"


def run(command: str, args: list[str]) -> int | None:
    """Run `memory COMMAND ARGS` (search or index) and say its result: the exit code, with which
    the console script's process ends at once (gitstate/entry.py, the only caller); None when
    the arguments are left to click."""
    parsed = parse(args) if command == "search" else None
    flags = parse_index(args) if command == "index" else None
    if parsed is None and flags is None:
        return None
    code = _answer(parsed, flags)
    # Every object the process made goes to the collector's permanent generation: the
    # interpreter's shutdown then skips its collections over all of them (modules, functions,
    # the cycles between them), about 2.5 ms on the bench machine, more than a search on a
    # current index. Nothing left needs collecting: the index is closed, the output flushed,
    # and the memory goes back with the process.
    import gc

    gc.freeze()
    return code


def _answer(parsed: Arguments | None, flags: tuple[bool, bool] | None) -> int:
    as_json = parsed.as_json if parsed is not None else bool(flags and flags[1])
    try:
        from gitstate.memory.usecases import search as memory_search

        if parsed is not None:
            query = " ".join(parsed.words)
            text = render(memory_search.search(query, parsed.limit), query, as_json)
        else:
            text = render_index(memory_search.reindex(bool(flags and flags[0])), as_json)
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    except BrokenPipeError:
        # The reader went away (… | head): not our failure (as cli/__init__.py does).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (Exception, KeyboardInterrupt) as exc:
        from gitstate.errors import AgyError

        if os.environ.get("AGY_DEBUG") and not isinstance(exc, (AgyError, KeyboardInterrupt)):
            raise
        return _report(exc, as_json)


def _report(exc: BaseException, as_json: bool) -> int:
    """As cli/output.py's report_error: JSON on stdout, or the error lines on stderr."""
    from gitstate import error_map

    if as_json:
        code, body = error_map.as_json(exc)
        sys.stdout.write(_json(body))
        return code
    code, lines = error_map.text(exc)
    sys.stderr.write("\n".join(lines) + "\n")
    return code
