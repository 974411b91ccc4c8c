"""`git agy-state archives`: the finished tasks, newest first."""

from __future__ import annotations

import click

from gitstate.cli.output import json_option
from gitstate.cli.render.archives import print_archives
from gitstate.usecases.workspace import Workspace


@click.command()
@json_option
def archives(as_json: bool) -> None:
    """List archived tasks (git agy-state show archive/NAME prints one)."""
    print_archives(Workspace.open(), as_json)
