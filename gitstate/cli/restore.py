"""`git agy-state restore`: a new snapshot equal to an old one."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, note
from gitstate.cli.render.written import report_written
from gitstate.usecases.state import restore as state_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("rev")
@click.option("-f", "--force", is_flag=True, help="Overwrite unsaved edits (they are kept).")
@json_option
def restore(rev: str, force: bool, as_json: bool) -> None:
    """Make a new snapshot equal to REV (history is kept), and check it out.

    REV may be a checkpoint tag: the state comes back; the code is left alone, and the command
    says how to bring it back too.
    """
    ws = Workspace.open()
    result = state_uc.restore(ws, rev, force)
    code_hint = _code_hint(ws, rev)
    if as_json:
        body = result.as_json()
        if code_hint:
            body["code_hint"] = code_hint
        emit_json(body)
        return
    report_written(result, as_json, "restored as")
    if code_hint:
        note(f"hint: the code was left as it is; to bring it back too: {code_hint}")


def _code_hint(ws: Workspace, rev: str) -> str | None:
    if not rev.startswith("checkpoint-"):
        return None  # only a checkpoint tag names code; skip loading the module otherwise
    from gitstate.usecases.state import checkpoints

    return checkpoints.code_hint(ws, rev)
