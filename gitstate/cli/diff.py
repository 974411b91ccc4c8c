"""`git agy-state diff`: compare snapshots and the view."""

from __future__ import annotations

import click

from gitstate.cli import colour
from gitstate.cli.colour import colour_options
from gitstate.cli.output import emit_json, json_option
from gitstate.cli.pager import pager_option
from gitstate.cli.pager import start as start_pager
from gitstate.cli.render.diff import diff_lines
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("a", required=False)
@click.argument("b", required=False)
@colour_options
@pager_option
@json_option
def diff(
    a: str | None, b: str | None, colour_option: str | None, no_pager: bool, as_json: bool
) -> None:
    """Compare snapshots: tip → view; A → view; A → B (the title's time never counts)."""
    ws = Workspace.open()
    result = history.diff(ws, a, b)
    if as_json:
        emit_json(result.as_json())
        return
    if not result.text:
        return
    paint = colour.choose(ws, colour_option)
    start_pager(ws, "diff", no_pager, as_json)
    for line in diff_lines(result.text, paint):
        colour.echo(line)
