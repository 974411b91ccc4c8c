"""`git agy-state doctor`: check refs, view, leftovers, hooks, remote and jobs; exit 1 on a problem."""

from __future__ import annotations

import click

from gitstate import error_map
from gitstate.cli.output import emit_json, json_option, say
from gitstate.errors import EXIT_FAILURE, Failure
from gitstate.usecases.workspace import Workspace

MARKS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


@click.command()
@json_option
def doctor(as_json: bool) -> None:
    """Check that everything git agy-state keeps here is sound (changes nothing)."""
    from gitstate.usecases.setup.doctor import FAIL
    from gitstate.usecases.setup.doctor import doctor as run_doctor

    checks = run_doctor(Workspace.open())
    ok = all(c.status != FAIL for c in checks)
    if as_json:
        body: dict[str, object] = {"ok": ok, "checks": [c.as_json() for c in checks]}
        if not ok:  # a failure in --json carries the error object every command gives
            failed = [c.name for c in checks if c.status == FAIL]
            problems = Failure(
                f"doctor found problems: {', '.join(failed)}",
                hint="each failed check has its own hint",
            )
            body.update(error_map.as_json(problems)[1])
        emit_json(body)
    else:
        for check in checks:
            say(f"{MARKS[check.status]}  {check.name}: {check.detail}")
            if check.hint and check.status != "ok":
                say(f"      hint: {check.hint}")
    if not ok:
        click.get_current_context().exit(EXIT_FAILURE)
