"""`git agy-state status`: the view, its snapshot, the step in progress, the phase."""

from __future__ import annotations

import click

from gitstate.cli import colour
from gitstate.cli.colour import Paint, colour_options
from gitstate.cli.output import emit_json, json_option, short
from gitstate.cli.pager import pager_option
from gitstate.cli.pager import start as start_pager
from gitstate.document.language import counted
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace

# `status -s`: two letters as git's porcelain (docs/commands.md, "Short status").
SHORT_CODES = {"dirty": " M", "missing": " D"}


@click.command()
@click.option("-s", "--short", "short_form", is_flag=True, help="One line, as git status -s.")
@colour_options
@pager_option
@json_option
def status(short_form: bool, colour_option: str | None, no_pager: bool, as_json: bool) -> None:
    """Is STATE.md clean, dirty or missing; which snapshot; what is in progress."""
    ws = Workspace.open()
    info = history.status(ws)
    if as_json:
        emit_json(info)
        return
    paint = colour.choose(ws, colour_option)
    start_pager(ws, "status", no_pager, as_json, default_on=False)  # as git: only when asked
    if short_form:
        line = _short_line(info, paint)
        if line is not None:
            colour.echo(line)
        return
    state = str(info["view"])
    view_text = {
        "clean": "clean",
        "dirty": "dirty (unsaved edits: git agy-state save)",
        "missing": "missing (git agy-state checkout writes it)"
        if info["task"] == "open"
        else "missing",
    }[state]
    colour.echo(
        paint.plain("STATE.md: ") + paint("clean" if state == "clean" else "dirty", view_text)
    )
    if info["archived"] and info["view"] == "missing":
        colour.echo(
            paint.plain(f"no task in progress: the last one was archived as {info['archived']}")
        )
    tip = info["tip"]
    if tip is None:
        colour.echo("snapshot: none yet")
    else:
        written = info["written_from"]
        if info["view"] == "missing" or written is None:
            colour.echo(f"tip: {paint('commit', short(str(tip)))}")
        elif info["is_tip"]:
            colour.echo(f"written from: {paint('commit', short(str(written)))} (the tip)")
        else:
            colour.echo(
                f"written from: {paint('commit', short(str(written)))} "
                f"(the tip is now {paint('commit', short(str(tip)))})"
            )
    if not info["valid"]:
        problems = counted(int(str(info["errors"])), "problem")
        colour.echo(f"valid: {paint('dirty', 'no')} ({problems}: git agy-state check)")
    if info["in_progress"]:
        colour.echo(paint.plain(f"in progress: {info['in_progress']}"))
    colour.echo(paint.plain(f"phase: {info['phase']}"))


def _short_line(info: dict[str, object], paint: Paint) -> str | None:
    """As `git status -s`: nothing when STATE.md is clean (or absent with no task open), else
    ` M STATE.md` (unsaved edits) or ` D STATE.md` (gone from an open task), with `(invalid: N
    problems)` after it when the view does not validate."""
    state = str(info["view"])
    if state == "clean" or (state == "missing" and info["task"] != "open"):
        return None
    line = f"{paint('dirty', SHORT_CODES[state])} STATE.md"
    if not info["valid"]:
        line += f" ({paint('dirty', 'invalid')}: {counted(int(str(info['errors'])), 'problem')})"
    return line
