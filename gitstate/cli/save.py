"""`git agy-state save`: snapshot STATE.md."""

from __future__ import annotations

import click

from gitstate.cli.output import json_option
from gitstate.cli.render.written import report_written
from gitstate.usecases.state import writer as state_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@click.option("-m", "--message", help="The snapshot's first line (default: what changed).")
@click.option("--allow-secret", is_flag=True, help="Save even if a line looks like a credential.")
@json_option
def save(message: str | None, allow_secret: bool, as_json: bool) -> None:
    """Snapshot STATE.md as a commit on refs/agy/state."""
    ws = Workspace.open()
    report_written(state_uc.save(ws, message, allow_secret), as_json, "saved")
