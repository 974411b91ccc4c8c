"""How the CLI shows what a write did (`save`, `patch`, `restore`): the line on stdout, the
notes and warnings on stderr, or the result as JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstate.cli.output import emit_json, note, say, short
from gitstate.cli.render.archives import archived_line

if TYPE_CHECKING:  # the use cases load pygit2; commands that print them import them anyway
    from gitstate.usecases.state.writer import Written


def report_written(result: Written, as_json: bool, verb: str) -> None:
    """What a write did: one line on stdout, notes and warnings on stderr."""
    if as_json:
        emit_json(result.as_json())
        return
    for text in result.notices:
        note(f"note: {text}")
    if result.overwritten:
        note(f"note: the replaced STATE.md was kept in {result.overwritten}")
    if result.merged:
        note("note: merged STATE.md with snapshots written since it was checked out")
    if result.view_kept:
        note("warning: STATE.md changed while saving and was left as it is (git agy-state status)")
    if result.outcome == "saved":
        say(f"{verb} {short(result.snapshot)}: {', '.join(result.sections) or 'no section'}")
        if result.archived:
            say(archived_line(result.archived))
    elif result.outcome == "unchanged" and result.repaired:
        say(
            f"repaired STATE.md: [&gt;] written back as [>]; otherwise it equals the tip "
            f"({short(result.snapshot)}), nothing to save"
        )
    elif result.outcome == "unchanged":
        say(f"nothing to save: STATE.md equals the tip ({short(result.snapshot)})")
    elif result.outcome == "nothing":
        say("nothing to save: there is no STATE.md")
