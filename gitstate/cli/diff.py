"""`git agy-state diff`: compare snapshots and the view."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("a", required=False)
@click.argument("b", required=False)
@json_option
def diff(a: str | None, b: str | None, as_json: bool) -> None:
    """Compare snapshots: tip → view; A → view; A → B."""
    ws = Workspace.open()
    result = history.diff(ws, a, b)
    if as_json:
        emit_json(result.as_json())
    elif result.text:
        say(result.text, nl=False)
