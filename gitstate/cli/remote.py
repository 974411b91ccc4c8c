"""`git agy-state remote setup [REMOTE]`: the agy remote (`agy.remote`), and a plain `git fetch`
that brings the agy refs."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.usecases.workspace import Workspace


@click.group()
def remote() -> None:
    """Configure a git remote for the agy refs."""


@remote.command()
@click.argument("name", required=False)
@json_option
def setup(name: str | None, as_json: bool) -> None:
    """Make NAME the agy remote: your agy refs are carried there only (by pre-push and sync).

    Also adds the fetch refspecs for refs/agy/* and the decision notes (never a push refspec).
    NAME defaults to agy.remote, else the current branch's remote, else origin."""
    from gitstate.usecases.sync import run as sync_uc

    done = sync_uc.setup(Workspace.open(), name)
    if as_json:
        emit_json({"actions": done})
    else:
        for line in done:
            say(line)
