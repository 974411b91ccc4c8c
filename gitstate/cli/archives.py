"""`git agy-state archives`: the finished tasks, newest first."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.usecases.state import archive as archive_uc
from gitstate.usecases.workspace import Workspace


def print_archives(ws: Workspace, as_json: bool, limit: int | None = None) -> None:
    found = archive_uc.archives(ws)[:limit]
    if as_json:
        emit_json([a.as_json() for a in found])
        return
    if not found:
        say("no archived tasks")
    for item in found:
        say(f"{item.ref.removeprefix('refs/agy/archive/')}  {item.tip[:12]}  {item.goal}")


@click.command()
@json_option
def archives(as_json: bool) -> None:
    """List archived tasks (git agy-state show archive/NAME prints one)."""
    print_archives(Workspace.open(), as_json)
