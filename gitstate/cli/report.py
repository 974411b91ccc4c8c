"""`git agy-state report`: a task's history as Markdown for a pull request (docs/report.md)."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.usecases.report import collect, markdown
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("archive", metavar="[ARCHIVE]", required=False)
@json_option
def report(archive: str | None, as_json: bool) -> None:
    """Print the current task's history (or an archived task's) as Markdown."""
    found = collect.collect(Workspace.open(), archive)
    if as_json:
        emit_json(found.as_json())
    else:
        say(markdown.render(found), nl=False)
