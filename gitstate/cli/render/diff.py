"""How the CLI shows a unified diff of STATE.md (`diff`, `log -p`): git's colour slots, headers
bold, hunk lines cyan, removed lines red, added lines green."""

from __future__ import annotations

from collections.abc import Iterator

from gitstate.cli.colour import Paint


def diff_lines(text: str, paint: Paint) -> Iterator[str]:
    """Each line of `text` (no newline), escaped and coloured by `paint`."""
    for line in text.splitlines():
        if line.startswith(("--- ", "+++ ")):
            yield paint("meta", line)
        elif line.startswith("@@"):
            yield paint("frag", line)
        elif line.startswith("-"):
            yield paint("old", line)
        elif line.startswith("+"):
            yield paint("new", line)
        else:
            yield paint.plain(line)
