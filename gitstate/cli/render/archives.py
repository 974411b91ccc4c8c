"""How the CLI shows archived tasks: the line for one just archived (`archive`, and a write
that archived), and the list (`archives`, `log --archived`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstate.cli.output import emit_json, say, short

if TYPE_CHECKING:  # the use cases load pygit2; commands that print them import them anyway
    from gitstate.usecases.workspace import Workspace


def archived_line(ref: str) -> str:
    return (
        f"task finished: kept as {ref}; STATE.md left the work tree "
        f"(git agy-state show {ref.removeprefix('refs/agy/')} prints it)"
    )


def print_archives(ws: Workspace, as_json: bool, limit: int | None = None) -> None:
    # Here, not at the top: a write's report needs only archived_line, not the use case.
    from gitstate.usecases.state import archive as archive_uc

    found = archive_uc.archives(ws)[:limit]
    if as_json:
        emit_json([a.as_json() for a in found])
        return
    if not found:
        say("no archived tasks")
    for item in found:
        say(f"{item.ref.removeprefix('refs/agy/archive/')}  {short(item.tip)}  {item.goal}")
