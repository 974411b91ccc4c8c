"""`git agy-state show`: a snapshot's STATE.md, byte for byte.

Byte for byte for every valid document; one that holds control characters (only a crafted
snapshot can: save and patch refuse them) is printed with them escaped (docs/format.md).
"""

from __future__ import annotations

import sys

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.document.controls import escape_bytes
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("rev", required=False)
@click.option("--section", metavar="KEY", help="Print only this section's lines.")
@json_option
def show(rev: str | None, section: str | None, as_json: bool) -> None:
    """Print a snapshot's STATE.md byte for byte (default: the tip)."""
    ws = Workspace.open()
    commit, data = history.show(ws, rev)
    if as_json:
        emit_json(history.show_json(commit, data, section))
        return
    if section is not None:
        for line in history.section_lines(data, section, commit)[1]:
            say(line)
        return
    out = sys.stdout.buffer  # byte for byte, as git show REV:STATE.md
    out.write(escape_bytes(data))
    out.flush()
