"""`git agy-state checkout`: write a snapshot into the view; no ref moves."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, note, say, short
from gitstate.usecases.state import restore as state_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("rev", required=False)
@click.option("-f", "--force", is_flag=True, help="Overwrite unsaved edits (they are kept).")
@json_option
def checkout(rev: str | None, force: bool, as_json: bool) -> None:
    """Write a snapshot's STATE.md into the work tree (default: the tip)."""
    ws = Workspace.open()
    result = state_uc.checkout(ws, rev, force)
    if as_json:
        emit_json(result.as_json())
        return
    if result.overwritten:
        note(f"note: the replaced STATE.md was kept in {result.overwritten}")
    say(f"STATE.md now holds snapshot {short(result.snapshot)}")
