"""`git agy-state decisions`: the recorded decisions and known errors."""

from __future__ import annotations

import click

from gitstate.cli.output import emit_json, json_option, note, say, short
from gitstate.document.language import counted
from gitstate.usecases.decisions import records as decisions_uc
from gitstate.usecases.workspace import Workspace

TYPE_WIDTH = len("Architecture")


@click.command()
@click.option(
    "--all", "show_all", is_flag=True, help="Also the superseded ones, and their commits."
)
@json_option
def decisions(show_all: bool, as_json: bool) -> None:
    """Active decisions and known errors, oldest first (--all: superseded ones too)."""
    ws = Workspace.open()
    ledger = decisions_uc.read_ledger(ws)
    rows = ledger.visible(show_all)
    if ledger.skipped:
        note(
            f"note: skipped {counted(ledger.skipped, 'line')} of {decisions_uc.DECISIONS_REF} "
            f"that {'is' if ledger.skipped == 1 else 'are'} "
            "not records this version reads (malformed, or written by a newer git-agy-state)"
        )
    if as_json:
        emit_json([row.as_json() for row in rows])
        return
    if not rows:
        say("no decisions recorded" if not ledger.rows else "no active decisions (--all lists all)")
        return
    for row in rows:
        record = row.record
        line = f"{record.id}  {record.type:<{TYPE_WIDTH}}  {record.at[:10]}  "
        if show_all:
            line += f"{short(row.commit)}  "
        line += decisions_uc.one_line(record.text)
        if record.type == decisions_uc.KNOWN_ISSUE and record.issue_field("scope"):
            line += f" (scope: {decisions_uc.one_line(record.issue_field('scope'))})"
        if not row.active:
            line += f"  [superseded by {', '.join(row.superseded_by)}]"
        say(line)
