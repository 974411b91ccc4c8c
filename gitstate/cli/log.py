"""`git agy-state log`: the chain, newest first."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import click

from gitstate.cli import colour
from gitstate.cli.colour import Paint, colour_options
from gitstate.cli.output import emit_json, json_option, short
from gitstate.cli.pager import pager_option
from gitstate.cli.pager import start as start_pager
from gitstate.cli.render.archives import print_archives
from gitstate.cli.render.diff import diff_lines
from gitstate.cli.render.graph import rows
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace

if TYPE_CHECKING:
    from gitstate.storage.snapshots import Snapshot

IDLE = "IDLE"


@click.command()
@click.option("-n", "--max-count", "limit", type=click.IntRange(min=0), help="Show at most N.")
@click.option("-p", "--patch", "with_patch", is_flag=True, help="Show each snapshot's diff.")
@click.option("--oneline", is_flag=True, help="One short line a snapshot: id, phase, subject.")
@click.option("--graph", is_flag=True, help="Draw the merges (sync's two-parent snapshots).")
@click.option("--archived", is_flag=True, help="List the finished (archived) tasks instead.")
@colour_options
@pager_option
@json_option
def log(
    limit: int | None,
    with_patch: bool,
    oneline: bool,
    graph: bool,
    archived: bool,
    colour_option: str | None,
    no_pager: bool,
    as_json: bool,
) -> None:
    """The current task's snapshots, newest first (--archived: the finished tasks)."""
    ws = Workspace.open()
    if archived:
        print_archives(ws, as_json, limit)
        return
    snaps = history.graph_log(ws, limit) if graph else history.log(ws, limit)
    if as_json:
        emit_json(history.log_json(ws, snaps, with_patch))
        return
    paint = colour.choose(ws, colour_option)
    start_pager(ws, "log", no_pager, as_json)
    width = _terminal_width()
    drawn = rows([(s.commit, s.parents) for s in snaps]) if graph else None
    by_id = {s.commit: s for s in snaps}
    for snap in snaps if drawn is None else ():
        _entry(ws, snap, "", paint, oneline, with_patch, width)
    for prefix, commit in drawn or ():
        if commit is None:
            colour.echo(paint("graph", prefix))
        else:
            _entry(ws, by_id[commit], prefix, paint, oneline, with_patch, width)


def _entry(
    ws: Workspace,
    snap: Snapshot,
    prefix: str,
    paint: Paint,
    oneline: bool,
    with_patch: bool,
    width: int | None,
) -> None:
    sha = short(snap.commit)
    phase = snap.phase if snap.phase != IDLE else ""
    if oneline:
        head = f"{prefix}{sha} " + (f"({phase}) " if phase else "")
        shown = f"{paint('graph', prefix)}{paint('commit', sha)} "
        if phase:
            shown += f"({paint('phase', phase)}) "
    else:
        when = snap.time.replace("T", " ")[:16]
        head = f"{prefix}{sha} {when} " + (f"{phase} " if phase else "")
        shown = f"{paint('graph', prefix)}{paint('commit', sha)} {paint.plain(when)} "
        if phase:
            shown += f"{paint('phase', phase)} "
    colour.echo(shown + paint.plain(_fit(snap.subject, width, len(head))))
    if with_patch:
        text = history.snapshot_diff(ws, snap)
        rail = prefix.replace("*", "|").rstrip()
        rail = f"{rail} " if rail else ""
        for line in diff_lines(text, paint):
            colour.echo(paint("graph", rail) + line)
        colour.echo(paint("graph", rail.rstrip()))


def _terminal_width() -> int | None:
    """The terminal's columns (COLUMNS first, as less and git do); None in a pipe, where
    subjects are never shortened."""
    if not colour.stdout_is_terminal():
        return None
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size((80, 24)).columns


def _fit(subject: str, width: int | None, used: int) -> str:
    """The subject shortened with `…` to end within the terminal's width."""
    if width is None or used + len(subject) <= width:
        return subject
    room = width - used - 1
    return subject[: max(room, 0)] + "…" if room > 0 else subject[:1] + "…"
