"""`git agy-state archive`: finish the current task now, or `--reopen` a finished one."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, say, short
from gitstate.cli.render.archives import archived_line
from gitstate.usecases.state import archive as archive_uc
from gitstate.usecases.workspace import Workspace


@click.command()
@click.option(
    "--reopen",
    "reopen",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[ARCHIVE]",
    help="Bring the newest (or the named) archived task back as the current one.",
)
@json_option
def archive(reopen: str | None, as_json: bool) -> None:
    """Finish the current task: keep it under refs/agy/archive/ and take STATE.md away."""
    ws = Workspace.open()
    if reopen is not None:
        chosen, commit = archive_uc.reopen(ws, reopen or None)
        if as_json:
            emit_json({"reopened": chosen.ref, "snapshot": commit})
        else:
            say(f"reopened {chosen.ref} as snapshot {short(commit)}; STATE.md is back")
        return
    closed = archive_uc.archive(ws)
    if as_json:
        emit_json(closed.as_json())
    else:
        say(archived_line(closed.ref))
