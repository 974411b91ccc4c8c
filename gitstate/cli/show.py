"""`git agy-state show`: a snapshot's STATE.md, byte for byte.

Byte for byte for every valid document; one that holds control characters (only a crafted
snapshot can: save and patch refuse them) is printed with them escaped (docs/format.md). On a
terminal with colour on, the headings are bold; in a pipe it stays byte for byte.
"""

from __future__ import annotations

import sys

import click

from gitstate.cli import colour
from gitstate.cli.colour import colour_options
from gitstate.cli.output import emit_json, json_option, say
from gitstate.cli.pager import pager_option
from gitstate.cli.pager import start as start_pager
from gitstate.document.controls import escape_bytes
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("rev", required=False)
@click.option("--section", metavar="KEY", help="Print only this section's lines.")
@colour_options
@pager_option
@json_option
def show(
    rev: str | None, section: str | None, colour_option: str | None, no_pager: bool, as_json: bool
) -> None:
    """Print a snapshot's STATE.md byte for byte (default: the tip)."""
    ws = Workspace.open()
    commit, data = history.show(ws, rev)
    if as_json:
        emit_json(history.show_json(commit, data, section))
        return
    paint = colour.choose(ws, colour_option)
    start_pager(ws, "show", no_pager, as_json)
    if section is not None:
        for line in history.section_lines(data, section, commit)[1]:
            say(line)
        return
    if paint.on:
        text = escape_bytes(data).decode("utf-8", "replace")
        for line in text.splitlines():
            colour.echo(paint("heading", line) if line.startswith("#") else line)
        return
    out = sys.stdout.buffer  # byte for byte, as git show REV:STATE.md
    out.write(escape_bytes(data))
    out.flush()
