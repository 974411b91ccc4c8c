"""`git agy-state status`: the view, its snapshot, the step in progress, the phase."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say, short
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace


@click.command()
@json_option
def status(as_json: bool) -> None:
    """Is STATE.md clean, dirty or missing; which snapshot; what is in progress."""
    ws = Workspace.open()
    info = history.status(ws)
    if as_json:
        emit_json(info)
        return
    view_text = {
        "clean": "clean",
        "dirty": "dirty (unsaved edits: git agy-state save)",
        "missing": "missing (git agy-state checkout writes it)"
        if info["task"] == "open"
        else "missing",
    }[str(info["view"])]
    say(f"STATE.md: {view_text}")
    if info["archived"] and info["view"] == "missing":
        say(f"no task in progress: the last one was archived as {info['archived']}")
    tip = info["tip"]
    if tip is None:
        say("snapshot: none yet")
    else:
        written = info["written_from"]
        if info["view"] == "missing" or written is None:
            say(f"tip: {short(str(tip))}")
        elif info["is_tip"]:
            say(f"written from: {short(str(written))} (the tip)")
        else:
            say(f"written from: {short(str(written))} (the tip is now {short(str(tip))})")
    if not info["valid"]:
        count = info["errors"]
        say(f"valid: no ({count} problem{'s' * (count != 1)}: git agy-state check)")
    if info["in_progress"]:
        say(f"in progress: {info['in_progress']}")
    say(f"phase: {info['phase']}")
