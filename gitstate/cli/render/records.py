"""How the CLI shows a decision or known-error record just written (`decide`, `error`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstate.cli.output import emit_json, say, short

if TYPE_CHECKING:  # the use cases load pygit2; commands that print them import them anyway
    from gitstate.usecases.decisions.records import Recorded


def report_recorded(done: Recorded, as_json: bool) -> None:
    """What decide/error wrote: one line (or the record as JSON)."""
    if as_json:
        emit_json(done.as_json())
        return
    record = done.record
    verb = "recorded" if done.created else "already recorded"
    line = f"{verb} {record.id} ({record.type}) on {short(done.commit)}"
    if record.supersedes:
        line += f"; supersedes {', '.join(record.supersedes)}"
    say(line)
