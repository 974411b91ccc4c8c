"""`git agy-state check`: validate STATE.md, the tip, or a file."""

from __future__ import annotations

from pathlib import Path

import click

from gitstate.cli.output import emit_json, json_option, note, say, short
from gitstate.document.language import counted
from gitstate.error_map import problem_lines
from gitstate.errors import EXIT_FAILURE, NotARepository
from gitstate.usecases.state import history
from gitstate.usecases.workspace import Workspace


@click.command()
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
@json_option
def check(file: Path | None, as_json: bool) -> None:
    """Validate STATE.md (or FILE; with no view, the tip). Exit 1 when invalid."""
    ws = _workspace(file)
    checked = history.check(ws, file)
    report = checked.report
    if as_json:
        emit_json(checked.as_json())
    if report is None:
        if not as_json:
            bare = "a bare repository: no work tree, so no STATE.md"
            say(f"no STATE.md and no snapshot yet: nothing to check ({checked.path or bare})")
        return
    if not as_json:
        where = checked.path if checked.source != "tip" else f"snapshot {short(checked.path)}"
        if report.valid:
            say(f"STATE.md is valid ({report.language}): {where}")
        else:
            say(f"STATE.md is invalid ({counted(len(report.errors), 'problem')}): {where}")
            for line in problem_lines(report.errors):
                say(line)
        for warning in problem_lines(report.warnings):
            note("warning:" + warning.removeprefix("  -"))
    if not report.valid:
        click.get_current_context().exit(EXIT_FAILURE)


def _workspace(file: Path | None) -> Workspace | None:
    """The repository's workspace, found once; None when FILE is checked outside any repository
    (its language then comes from the global settings)."""
    try:
        return Workspace.open()
    except NotARepository:
        if file is None:
            raise
        return None
