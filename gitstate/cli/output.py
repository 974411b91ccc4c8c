"""How the CLI speaks: JSON on stdout for machines, text on stdout, diagnostics on stderr.

The one place errors become `error: …` / `hint: …` lines (or `{"error", "code"}` JSON).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from gitstate.errors import AgyError, InvalidDocument, SecretFound

MAX_LISTED = 20


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def say(text: str = "") -> None:
    click.echo(text)


def note(text: str) -> None:
    click.echo(text, err=True)


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
    click.echo("\n".join(lines), err=True)
    return exc.exit_code


def _problem_json(problem: Any) -> Any:
    as_json = getattr(problem, "as_json", None)
    return as_json() if callable(as_json) else {"line": None, "message": str(problem)}
