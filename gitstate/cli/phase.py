"""`git agy-state phase`: show the agent's phase, or move it (docs/phase-and-checkpoints.md)."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.document import phase as machine
from gitstate.usecases.state import phase as phase_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("new", required=False, metavar="[NEW]")
@json_option
def phase(new: str | None, as_json: bool) -> None:
    """Show the phase and the legal next ones, or move to NEW.

    Phases: IDLE, PLANNING, CONFIRMING, EXECUTING, AUTO_FIX, BLOCKED, ARCHIVING (any case).
    A move is recorded as a snapshot with the same STATE.md and a new Agy-Phase trailer.
    """
    if new is not None:
        machine.name(new)  # an unknown name is a usage error, before anything is opened
    ws = Workspace.open()
    if new is None:
        shown = phase_uc.shown(ws)
        if as_json:
            emit_json(shown)
            return
        say(f"phase: {shown['phase']}")
        say(f"legal next: {', '.join(shown['legal'])}")
        return
    result = phase_uc.change(ws, new)
    if as_json:
        emit_json(result.as_json())
        return
    if not result.changed:
        say(f"State: already {result.new} (nothing changed)")
        return
    say(f"State: {result.old} → {result.new}")
    if result.reason:
        say(f"{result.new} instead of {result.requested}: {result.reason}")
