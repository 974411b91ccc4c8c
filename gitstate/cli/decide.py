"""`git agy-state decide`: record a decision as a git note on HEAD."""

from __future__ import annotations

import click

from gitstate.cli.output import json_option
from gitstate.cli.render.records import report_recorded
from gitstate.usecases.decisions import records as decisions_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@click.option(
    "--type", "kind", required=True, metavar="Architecture|Lib|Rule", help="The kind of decision."
)
@click.option(
    "--supersedes",
    multiple=True,
    metavar="ID",
    help="A record this one replaces (repeatable); the old one stays, marked superseded.",
)
@click.option(
    "--allow-secret", is_flag=True, help="Record even if the text looks like a credential."
)
@json_option
@click.argument("text", nargs=-1, required=True)
def decide(
    kind: str, supersedes: tuple[str, ...], allow_secret: bool, as_json: bool, text: tuple[str, ...]
) -> None:
    """Record a decision: TEXT goes into the note on HEAD (refs/notes/agy/decisions)."""
    ws = Workspace.open()
    done = decisions_uc.decide(ws, kind, " ".join(text), supersedes, allow_secret)
    report_recorded(done, as_json)
