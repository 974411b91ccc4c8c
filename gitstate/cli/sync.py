"""`git agy-state sync`: fetch, merge and push the agy refs through a git remote."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from gitstate.cli.output import emit_json, json_option, note, say
from gitstate.document.language import counted
from gitstate.errors import EXIT_FAILURE
from gitstate.usecases.workspace import Workspace

if TYPE_CHECKING:
    from gitstate.usecases.sync.results import Synced

ACTIONS = {
    "up-to-date": "up to date",
    "ahead": "ahead of the remote",
    "fast-forward": "fast-forwarded",
    "adopted": "taken from the remote",
    "merged": "merged",
    "skipped": "not taken from the remote, nor pushed over it (see the warning)",
    "elsewhere": "left in the remote's copy: no work tree of that name here",
}


@click.command()
@click.argument("remote", required=False)
@click.option(
    "--from",
    "from_user",
    metavar="USER",
    help="Merge (or adopt) a teammate's chain; your own name: take what others wrote onto yours.",
)
@click.option("-f", "--force", is_flag=True, help="Overwrite a dirty STATE.md (the text is kept).")
@json_option
def sync(remote: str | None, from_user: str | None, force: bool, as_json: bool) -> None:
    """Fetch the agy refs, merge this person's chains, push fast-forward only."""
    from gitstate.usecases.sync import run as sync_uc

    result = sync_uc.sync(Workspace.open(), remote, from_user, force)
    if as_json:
        emit_json(result.as_json())
    else:
        _report(result)
    for ref, why in result.skipped:  # docs/sync.md, "Received refs": one warning per ref
        note(f"warning: skipped {ref}: {why}")
    if result.skipped:
        click.get_current_context().exit(EXIT_FAILURE)


def _report(result: Synced) -> None:
    for chain in result.chains:
        line = f"{chain.ref}: {ACTIONS.get(chain.action, chain.action)}"
        if chain.conflicts:
            line += f" with conflicts in {', '.join(chain.conflicts)} (kept both; see STATE.md)"
        say(line)
        if chain.over_limit:
            note(
                f"warning: {', '.join(chain.over_limit)} over the size limit after the merge: "
                "compress it (git agy-state check)"
            )
    if result.notes not in ("up-to-date", "none on the remote"):
        say(f"decisions: {result.notes}")
    for ref in result.received:
        say(f"received {ref}")
    for ref in result.clashes:
        note(f"warning: {ref} differs here and on {result.remote}; both left as they are")
    say(f"pushed {counted(len(result.pushed), 'ref')} to {result.remote} as {result.user}")
    if result.view == "kept":
        note(
            "warning: STATE.md has unsaved edits and was left alone; the merged state is the "
            "tip (git agy-state save merges your edits, or sync --force replaces them)"
        )
    elif result.view in ("refreshed", "removed"):
        say(f"STATE.md {result.view}")
    if result.overwritten:
        note(f"note: the replaced STATE.md was kept in {result.overwritten}")
