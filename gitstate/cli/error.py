"""`git agy-state error`: record a known error (a pitfall the agent is told about)."""

from __future__ import annotations

import click

from gitstate.cli.output import json_option
from gitstate.cli.render.records import report_recorded
from gitstate.usecases.decisions import records as decisions_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@click.option(
    "--type", "error_type", required=True, metavar="T", help="The kind of error (free text)."
)
@click.option("--cause", required=True, metavar="C", help="Its root cause.")
@click.option("--fix", required=True, metavar="F", help="What fixes or avoids it.")
@click.option(
    "--scope", required=True, metavar="S", help="Where it applies (files, modules, tools)."
)
@click.option(
    "--supersedes", multiple=True, metavar="ID", help="A record this one replaces (repeatable)."
)
@click.option(
    "--allow-secret", is_flag=True, help="Record even if a field looks like a credential."
)
@json_option
def error(
    error_type: str,
    cause: str,
    fix: str,
    scope: str,
    supersedes: tuple[str, ...],
    allow_secret: bool,
    as_json: bool,
) -> None:
    """Record a known error (type KnownIssue) in the note on HEAD; agents see it at start-up."""
    ws = Workspace.open()
    done = decisions_uc.record_error(
        ws, error_type, cause, fix, scope, supersedes=supersedes, allow_secret=allow_secret
    )
    report_recorded(done, as_json)
