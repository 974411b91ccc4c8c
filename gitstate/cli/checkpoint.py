"""`git agy-state checkpoint`: tag HEAD as checkpoint-YYYYMMDD-HHMMSS, carrying the state."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, note, say, short
from gitstate.usecases.state import checkpoints
from gitstate.usecases.workspace import Workspace


@click.command()
@click.option("-m", "--message", help="The tag's first line (default: the step in progress).")
@click.option(
    "--allow-secret", is_flag=True, help="Tag even if the message looks like a credential."
)
@json_option
def checkpoint(message: str | None, allow_secret: bool, as_json: bool) -> None:
    """Mark the code (HEAD) and the state together with an annotated tag.

    The tag is named after the UTC time; unsaved STATE.md edits are saved first. Back to it:
    git agy-state restore TAG (the state), git switch --detach TAG (the code).
    """
    ws = Workspace.open()
    result = checkpoints.create(ws, message, allow_secret)
    if as_json:
        emit_json(result.as_json())
        return
    made = result.checkpoint
    if result.saved:
        note(f"note: saved STATE.md first as {short(result.saved)}")
    if result.moved_from:
        note(f"note: {result.moved_from} was taken; named it {made.name}")
    say(f"✓ Checkpoint: {made.name}")
    say(f"  code {short(made.commit)}, state {short(made.state)}")
