"""Where things live for one work tree: its root, git dir, common dir, and its state ref.

Standard library only: the rest of the storage layer builds on it. The walk up to the git dir
and git's `safe.directory` owner check (docs/hooks.md, "Whose repository") live in
storage/hooklayout.py, pathlib-free for the agent hooks; `discover` here returns the same place
with pathlib fields.
"""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

# Re-exported: the names the rest of storage imports from here.
from gitstate.storage.hooklayout import AGY_DIR as AGY_DIR
from gitstate.storage.hooklayout import MAIN_STATE_REF as MAIN_STATE_REF
from gitstate.storage.hooklayout import VIEW_NAME as VIEW_NAME
from gitstate.storage.hooklayout import HookLayout
from gitstate.storage.hooklayout import _sudo_uid as _sudo_uid  # tests read git's strtoul here
from gitstate.storage.hooklayout import discover as _discover
from gitstate.storage.hooklayout import owner_refusal as owner_refusal

# The decisions notes ref, named here (stdlib only) for sync and the git hooks, which may not
# load pygit2 to learn it; storage/notes.py reads and writes it.
DECISIONS_REF = "refs/notes/agy/decisions"

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

    class _Fields(NamedTuple):
        workdir: Path | None  # None in a bare repository
        gitdir: Path  # this work tree's own git dir (.git, or .git/worktrees/<name>)
        commondir: Path  # shared by all work trees: objects, refs, config, hooks
        worktree: str | None  # the linked work tree's name; None for the main one

else:
    # Importing `typing` costs an agent hook ~3 ms on every turn: at run time the fields come
    # from collections (already loaded by the interpreter); type checkers see the typed form.
    _Fields = namedtuple("_Fields", "workdir gitdir commondir worktree")


class Layout(_Fields):
    __slots__ = ()

    @property
    def state_ref(self) -> str:
        if self.worktree is None:
            return MAIN_STATE_REF
        return f"refs/agy/wt/{self.worktree}/state"

    @property
    def view_path(self) -> Path | None:
        return None if self.workdir is None else self.workdir / VIEW_NAME

    @property
    def agy_dir(self) -> Path:
        """This work tree's private files: view record, lock, overwritten views."""
        return self.gitdir / AGY_DIR

    @property
    def common_agy_dir(self) -> Path:
        """What every work tree of the repository shares: the ref writers' lock, the sync and
        decisions locks, pitfalls.md, the jobs' folders and their queue."""
        return self.commondir / AGY_DIR

    @classmethod
    def from_dirs(cls, gitdir: Path, workdir: Path | None) -> Layout:
        return HookLayout.from_dirs(gitdir, workdir).to_layout()


def discover(start: Path | str | None = None) -> Layout | None:
    """The layout of the work tree containing `start` (default: the current directory).

    Honours GIT_DIR / GIT_WORK_TREE as git does. Returns None when no work tree is found by
    walking up; callers that must also handle bare repositories fall back to pygit2.
    """
    found = _discover(start)
    return found.to_layout() if found is not None else None
