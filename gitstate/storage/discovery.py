"""Finding the repository a command runs in, once.

Walking up for `.git` (layout.discover, standard library only) finds every work tree; only
what it cannot answer (a bare repository, a directory inside a git dir) is asked of libgit2,
and the repository it opened on the way is handed back rather than opened again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from gitstate.errors import NotARepository
from gitstate.storage.layout import Layout, discover

if TYPE_CHECKING:
    from gitstate.storage.snapshots import Store


def find(start: Path | str | None = None) -> tuple[Layout, Store | None]:
    """The layout of the repository containing `start` (default: the current directory), and
    its Store when finding it took opening the repository (else None: opened on first use).

    NotARepository when there is none, or when a `.git` file (or GIT_DIR) names a git dir that
    does not exist: git stops there too."""
    layout = discover(start)
    if layout is not None:
        if not (layout.gitdir / "HEAD").exists():
            raise NotARepository(
                f"not a git repository: {layout.gitdir}",
                hint=f"{layout.workdir or 'GIT_DIR'} names a git dir that does not exist; "
                "git worktree repair fixes a moved worktree",
            )
        return layout, None
    import pygit2  # only here: the walk up found no work tree

    from gitstate.storage.snapshots import Store

    found = pygit2.discover_repository(str(start or os.getcwd()))
    if found is None:
        raise NotARepository(
            "not a git repository (or any of the parent directories)",
            hint="run git agy-state inside a git work tree (git init creates one)",
        )
    repo = pygit2.Repository(found)
    workdir = Path(repo.workdir) if repo.workdir else None
    layout = Layout.from_dirs(Path(repo.path), workdir)
    return layout, Store(layout, repo)
