"""Where things live for one work tree: its root, git dir, common dir, and its state ref.

Standard library only: the agent hooks use this on every turn, where importing pygit2 would cost
more than the whole hook. The rest of the storage layer builds on it.
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

MAIN_STATE_REF = "refs/agy/state"
VIEW_NAME = "STATE.md"

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
        return self.gitdir / "agy"

    @classmethod
    def from_dirs(cls, gitdir: Path, workdir: Path | None) -> Layout:
        gitdir = gitdir.resolve()
        common_file = gitdir / "commondir"
        if common_file.is_file():
            common = Path(common_file.read_text().strip())
            commondir = (common if common.is_absolute() else gitdir / common).resolve()
            worktree: str | None = gitdir.name
        else:
            commondir, worktree = gitdir, None
        return cls(workdir.resolve() if workdir else None, gitdir, commondir, worktree)


def _gitdir_of(dotgit: Path) -> Path | None:
    """The git dir a `.git` entry stands for: the directory itself, or a `gitdir:` file's target."""
    if dotgit.is_dir():
        return dotgit if (dotgit / "HEAD").exists() else None
    try:
        first = dotgit.read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    target = Path(first[len("gitdir:") :].strip())
    return target if target.is_absolute() else (dotgit.parent / target)


def discover(start: Path | str | None = None) -> Layout | None:
    """The layout of the work tree containing `start` (default: the current directory).

    Honours GIT_DIR / GIT_WORK_TREE as git does. Returns None when no work tree is found by
    walking up; callers that must also handle bare repositories fall back to pygit2.
    """
    env_gitdir = os.environ.get("GIT_DIR")
    if env_gitdir:
        gitdir = Path(env_gitdir)
        work = os.environ.get("GIT_WORK_TREE")
        return Layout.from_dirs(gitdir, Path(work) if work else Path.cwd())
    here = Path(start if start is not None else os.getcwd()).resolve()
    ceiling = os.environ.get("GIT_CEILING_DIRECTORIES", "")
    ceilings = {Path(p).resolve() for p in ceiling.split(os.pathsep) if p}
    for directory in (here, *here.parents):
        if directory.name == ".git":
            return None  # inside a git dir: leave it to pygit2
        dotgit = directory / ".git"
        if dotgit.exists():
            found = _gitdir_of(dotgit)
            if found is not None:
                return Layout.from_dirs(found, directory)
        if directory in ceilings:
            break
    return None
