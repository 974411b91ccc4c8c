"""Keep the changed_files section honest: derived from git, not guessed (post-commit hook).

The task began at the HEAD recorded by its first snapshot (carried on every snapshot as the
`Agy-Task-Base` trailer, so this costs the same however long the chain is); changed_files is
`git diff --name-status` from there to HEAD, at most five lines (four and `… and N more`).
"""

from __future__ import annotations

from gitstate.document.patch import Patch, SetSection
from gitstate.document.validate import LINE_LIMIT
from gitstate.storage import gitcli, objects
from gitstate.usecases.state import patch as patch_uc
from gitstate.usecases.state.chain import task_base
from gitstate.usecases.state.writer import Origin, Written
from gitstate.usecases.workspace import Workspace


def format_lines(name_status: str, limit: int = LINE_LIMIT) -> list[str]:
    lines = []
    for row in name_status.splitlines():
        fields = row.split("\t")
        if len(fields) < 2:
            continue
        status = fields[0][:1]
        path = " → ".join(fields[1:])
        lines.append(f"- {status} {path}")
    if len(lines) > limit:
        lines = [*lines[: limit - 1], f"- … and {len(lines) - (limit - 1)} more"]
    return lines


def diff_since(ws: Workspace, base: str | None) -> str:
    start = base or objects.empty_tree(ws.store)
    return gitcli.name_status(ws.layout, start, "HEAD")


def refresh(ws: Workspace) -> Written | None:
    """Set changed_files from git when a task is under way; None when there is none."""
    tip = ws.store.tip()
    if tip is None or ws.store.state_blob(tip) is None:
        return None
    head, _ = ws.store.head_info()
    if head is None:
        return None
    text = "\n".join(format_lines(diff_since(ws, task_base(ws.store, tip))))
    change = Patch((SetSection("changed_files", text),))
    message = "post-commit: changed_files from git"
    return patch_uc.patch(ws, change, message=message, origin=Origin.HOOK)
