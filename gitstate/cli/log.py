"""`git agy-state log`: the chain, newest first."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.cli.render.archives import print_archives
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace


@click.command()
@click.option("-n", "--max-count", "limit", type=click.IntRange(min=0), help="Show at most N.")
@click.option("-p", "--patch", "with_patch", is_flag=True, help="Show each snapshot's diff.")
@click.option("--archived", is_flag=True, help="List the finished (archived) tasks instead.")
@json_option
def log(limit: int | None, with_patch: bool, archived: bool, as_json: bool) -> None:
    """The current task's snapshots, newest first (--archived: the finished tasks)."""
    ws = Workspace.open()
    if archived:
        print_archives(ws, as_json, limit)
        return
    snaps = history.log(ws, limit)
    if as_json:
        emit_json(history.log_json(ws, snaps, with_patch))
        return
    for snap in snaps:
        when = snap.time.replace("T", " ")[:16]
        say(f"{snap.commit[:12]} {when} {snap.phase:<9} {snap.subject}")
        if with_patch:
            text = history.snapshot_diff(ws, snap)
            if text:
                say(text.rstrip("\n"))
            say()
