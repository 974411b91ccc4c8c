"""git's `info/exclude` in the common dir: the repository's own ignore lines, never committed.

The view, and a job's worktrees, must never be committed by a `git add -A`; `init`, `job` and
every write of the view (so a second clone that only syncs gets no `?? STATE.md`) add their
lines here when missing and never rewrite what is there. Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from gitstate.storage.layout import Layout

VIEW_LINE = "/STATE.md"  # the view, at the work tree's root only


def path(layout: Layout) -> Path:
    return layout.commondir / "info" / "exclude"


def ensure(layout: Layout, wanted: Iterable[str]) -> list[str]:
    """Append each line of `wanted` that info/exclude lacks (spaces around a line ignored), on a
    line of its own even when the file does not end in a newline; the lines added."""
    exclude = path(layout)
    text = exclude.read_text() if exclude.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in wanted if line not in present]
    if not missing:
        return []
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a") as handle:
        if text and not text.endswith("\n"):
            handle.write("\n")
        handle.write("".join(line + "\n" for line in missing))
    return missing


def ensure_view(layout: Layout) -> list[str]:
    """Exclude the view; called wherever the view is written, since `init` is optional. A
    courtesy after the write succeeded: an info/exclude we may not write (another owner, a
    read-only .git) never fails it (`init` reports that)."""
    try:
        return ensure(layout, (VIEW_LINE,))
    except OSError:
        return []


def remove(layout: Layout, line: str) -> bool:
    """Drop `line` (one we added: the caller knows) from info/exclude, every other line kept
    as it was; True if it was there."""
    exclude = path(layout)
    try:
        text = exclude.read_text()
    except FileNotFoundError:
        return False
    lines = text.splitlines(keepends=True)
    kept = [one for one in lines if one.strip() != line]
    if len(kept) == len(lines):
        return False
    exclude.write_text("".join(kept))
    return True
