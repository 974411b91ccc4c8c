"""`git agy-state init`: exclude the view from commits and prepare the refs."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.usecases.setup import init as init_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@json_option
def init(as_json: bool) -> None:
    """Exclude STATE.md from commits and prepare the refs (optional: every command works without)."""
    ws = Workspace.open()
    done = init_uc.init(ws)
    if as_json:
        emit_json({"actions": done})
    elif done:
        for line in done:
            say(line)
    else:
        say("already initialized")
