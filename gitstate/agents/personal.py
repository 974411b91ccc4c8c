"""A project install's files as `git status` sees them (docs/hooks.md, "Personal and shared
files"): our hook entries name this machine's interpreter, so they are personal.

A personal file install created is added to the repository's info/exclude; a file the project
already had (which the team may commit) only gets a note naming it; a new skill, the same on
every machine, gets a note too: commit it or leave it. Standard library only; used by the
agent modules' install functions, never on the hook path.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from gitstate.agents.base import Place


def settings_lines(
    place: Place, path: Path, existed: bool, who: str, ours: str = "our hooks in it name"
) -> list[str]:
    """What install says (and does) about the settings file it wrote our entries to (`ours`:
    what of ours is in it and names the interpreter, for the note)."""
    if not _inside(place, path):
        return []
    entry = place.ledger.file(path)
    if not existed or (entry is not None and entry.get("created")):
        return [f"{who}: {line}" for line in place.exclude(path)]
    return [
        f"note: {path} is the project's own file, and {ours} this machine's "
        "interpreter: keep them out of commits (git add -p), or install with --scope user"
    ]


def skill_lines(place: Place, path: Path, existed: bool) -> list[str]:
    """A new skill in the project: the same on every machine, so it is the team's to take."""
    if existed or not path.is_file() or not _inside(place, path):
        return []
    return [
        f"note: {path} is new and untracked: commit it to give the team the skill, "
        "or leave it out (it names no machine path)"
    ]


def _inside(place: Place, path: Path) -> bool:
    try:
        path.relative_to(place.project)
    except ValueError:
        return False
    return True
