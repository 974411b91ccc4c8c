"""`git agy-state memory search` without click: the path gitstate/entry.py takes for it.

An agent runs searches in a loop, and loading click and the command modules costs more than a
query on a current index (docs/memory.md, "Search"). `parse` accepts part of what the click
command (cli/memory.py, `search_cmd`) accepts: query words, `--json`, `-n N`, `-nN`,
`--limit N`, `--limit=N` with N plain digits, in any order (the last limit wins, as in click).
Anything else (`-h`, `--help`, `--`, any other word that starts with `-`, a limit click would
have to convert or refuse) returns None and goes to click. For what it accepts, the output, the
error lines and the exit codes are the click command's: both print through `render` and the
error map (tests/test_memory_search_cli.py runs both on the same arguments).
"""

from __future__ import annotations

import os
import sys

from gitstate.memory.usecases.search import DEFAULT_LIMIT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.memory.storage.fts import Hit


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
    from gitstate.document.controls import escape

    if as_json:
        return _json([hit.as_json() for hit in hits])
    if not hits:
        return escape(f"no match for {query!r}") + "\n"
    lines = []
    for hit in hits:
        lines.append(f"{hit.path}  (score {hit.score:.3f})")
        lines.append("    " + " ".join(hit.snippet.split()))
    return "".join(escape(line) + "\n" for line in lines)


def _json(value: object) -> str:
    import json

    from gitstate.document.controls import escape_json

    return escape_json(json.dumps(value, ensure_ascii=False, indent=2)) + "\n"


def run(args: list[str]) -> int | None:
    """Run the search and say its result; None when `parse` leaves the arguments to click."""
    parsed = parse(args)
    if parsed is None:
        return None
    query = " ".join(parsed.words)
    try:
        from gitstate.memory.usecases import search as memory_search

        hits = memory_search.search(query, parsed.limit)
        sys.stdout.write(render(hits, query, parsed.as_json))
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
        return _report(exc, parsed.as_json)


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
