"""`git agy-state checkpoints`: the checkpoint tags, newest first, with their states."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say, short
from gitstate.usecases.state import checkpoints as checkpoints_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@json_option
def checkpoints(as_json: bool) -> None:
    """List the checkpoints: name, code commit, state snapshot, message."""
    ws = Workspace.open()
    found = checkpoints_uc.listing(ws)
    if as_json:
        emit_json([c.as_json() for c in found])
        return
    if not found:
        say("no checkpoints yet (git agy-state checkpoint makes one)")
        return
    for c in found:
        state = f"state {short(c.state)}" if c.state else "no state"
        subject = c.message.split("\n", 1)[0]
        say(f"{c.name}  code {short(c.commit)}  {state}  {subject}".rstrip())
