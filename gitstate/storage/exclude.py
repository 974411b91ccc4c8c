"""git's `info/exclude` in the common dir: the repository's own ignore lines, never committed.

The view, and a job's worktrees, must never be committed by a `git add -A`; `init`, `job` and
every write of the view (so a second clone that only syncs gets no `?? STATE.md`) add their
lines here when missing and never rewrite what is there. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

# Type checkers take this as typing.TYPE_CHECKING (True); at run time neither pathlib nor the
# pathlib Layout is loaded: an agent hook's save excludes the view (docs/hooks.md, "Start-up
# cost"), so this module works on either layout with os.path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from gitstate.storage.hooklayout import AnyLayout

VIEW_LINE = "/STATE.md"  # the view, at the work tree's root only


def path(layout: AnyLayout) -> Path:
    """info/exclude, as a Path, for the commands that report or record it."""
    from pathlib import Path

    return Path(_file(layout))


def _file(layout: AnyLayout) -> str:
    return os.path.join(layout.commondir, "info", "exclude")


def _read(exclude: str) -> str | None:
    # surrogateescape: a line in another encoding is kept byte for byte by `remove`, and never
    # fails the save that excludes the view.
    try:
        with open(exclude, encoding="utf-8", errors="surrogateescape") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def ensure(layout: AnyLayout, wanted: Iterable[str]) -> list[str]:
    """Append each line of `wanted` that info/exclude lacks (spaces around a line ignored), on a
    line of its own even when the file does not end in a newline; the lines added."""
    exclude = _file(layout)
    text = _read(exclude) or ""
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in wanted if line not in present]
    if not missing:
        return []
    os.makedirs(os.path.dirname(exclude), exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as handle:
        if text and not text.endswith("\n"):
            handle.write("\n")
        handle.write("".join(line + "\n" for line in missing))
    return missing


def ensure_view(layout: AnyLayout) -> list[str]:
    """Exclude the view; called wherever the view is written, since `init` is optional. A
    courtesy after the write succeeded: an info/exclude we may not write (another owner, a
    read-only .git) never fails it (`init` reports that)."""
    try:
        return ensure(layout, (VIEW_LINE,))
    except OSError:
        return []


def remove(layout: AnyLayout, line: str) -> bool:
    """Drop `line` (one we added: the caller knows) from info/exclude, every other line kept
    as it was; True if it was there."""
    exclude = _file(layout)
    text = _read(exclude)
    if text is None:
        return False
    lines = text.splitlines(keepends=True)
    kept = [one for one in lines if one.strip() != line]
    if len(kept) == len(lines):
        return False
    with open(exclude, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write("".join(kept))
    return True
