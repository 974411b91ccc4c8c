"""`git agy-state restore`: a new snapshot equal to an old one."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, report_written
from gitstate.usecases import state as state_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("rev")
@click.option("-f", "--force", is_flag=True, help="Overwrite unsaved edits (they are kept).")
@json_option
def restore(rev: str, force: bool, as_json: bool) -> None:
    """Make a new snapshot equal to REV (history is kept), and check it out."""
    ws = Workspace.open()
    result = state_uc.restore(ws, rev, force)
    if as_json:
        emit_json(result.as_json())
        return
    report_written(result, as_json, "restored as")
