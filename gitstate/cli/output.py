"""How the CLI speaks: JSON on stdout for machines, text on stdout, diagnostics on stderr.

The one place errors become `error: …` / `hint: …` lines (or `{"error", "code"}` JSON), and
the one place text meets the terminal: everything `say`, `note` and `report_error` print has its
control characters escaped (document/controls.py, docs/format.md), since stored text may come
from a teammate, a remote or an agent. JSON is escaped by json.dumps, and `emit_json` also
writes DEL, C1 and the bidi controls as `\\u` escapes (json.dumps leaves those raw).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gitstate.document.controls import escape, escape_json
from gitstate.errors import AgyError, InvalidDocument, SecretFound

if TYPE_CHECKING:  # the use cases load pygit2; commands that print them import them anyway
    from gitstate.usecases.state.writer import Written

F = TypeVar("F", bound=Callable[..., Any])

MAX_LISTED = 20


def json_option(func: F) -> F:
    """The one `--json` idiom: machine-readable output on stdout, a stable API."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")(func)


def short(sha: str | None) -> str:
    return sha[:12] if sha else "none"


def report_written(result: Written, as_json: bool, verb: str) -> None:
    """What a write did: one line on stdout, notes and warnings on stderr."""
    if as_json:
        emit_json(result.as_json())
        return
    for text in result.notices:
        note(f"note: {text}")
    if result.overwritten:
        note(f"note: the replaced STATE.md was kept in {result.overwritten}")
    if result.merged:
        note("note: merged STATE.md with snapshots written since it was checked out")
    if result.view_kept:
        note("warning: STATE.md changed while saving and was left as it is (git agy-state status)")
    if result.outcome == "saved":
        say(f"{verb} {short(result.snapshot)}: {', '.join(result.sections) or 'no section'}")
        if result.archived:
            from gitstate.cli.archive import archived_line

            say(archived_line(result.archived))
    elif result.outcome == "unchanged":
        say(f"nothing to save: STATE.md equals the tip ({short(result.snapshot)})")
    elif result.outcome == "nothing":
        say("nothing to save: there is no STATE.md")


def emit_json(value: Any) -> None:
    import json  # only --json output pays for it

    click.echo(escape_json(json.dumps(value, ensure_ascii=False, indent=2)))


def say(text: str = "", nl: bool = True) -> None:
    """Text for a human on stdout, control characters escaped."""
    click.echo(escape(text), nl=nl)


def note(text: str) -> None:
    """A diagnostic on stderr, control characters escaped."""
    click.echo(escape(text), err=True)


def problem_lines(problems: Sequence[Any], limit: int = MAX_LISTED) -> list[str]:
    """`- line N: message` for each problem, at most `limit`, then `… and N more`."""
    lines = []
    for problem in problems[:limit]:
        where = f"line {problem.line}: " if getattr(problem, "line", None) else ""
        lines.append(f"  - {where}{problem.message}")
    if len(problems) > limit:
        lines.append(f"  … and {len(problems) - limit} more")
    return lines


def report_error(exc: AgyError, as_json: bool) -> int:
    if as_json:
        body: dict[str, Any] = {"error": exc.message, "code": exc.exit_code}
        if exc.hint:
            body["hint"] = exc.hint
        if isinstance(exc, InvalidDocument):
            body["errors"] = [_problem_json(p) for p in exc.problems]
        if isinstance(exc, SecretFound):
            body["hits"] = [
                {key: getattr(hit, key, None) for key in ("line", "kind", "excerpt")}
                for hit in exc.hits
            ]
        emit_json(body)
        return exc.exit_code
    lines = [f"error: {exc.message}"]
    if isinstance(exc, InvalidDocument) and exc.problems:
        lines.extend(problem_lines(exc.problems))
    if exc.hint:
        lines.append(f"hint: {exc.hint}")
    click.echo(escape("\n".join(lines)), err=True)
    return exc.exit_code


def _problem_json(problem: Any) -> Any:
    as_json = getattr(problem, "as_json", None)
    return as_json() if callable(as_json) else {"line": None, "message": str(problem)}
