"""storage/hooklayout.py reads the `.git` file of a work tree and a linked worktree's `commondir`
bounded and without blocking: a FIFO or a huge file there must neither hang a hook nor be read
whole (docs/security.md: everything read from the work tree is checked and bounded)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gitstate.storage import hooklayout

SCRIPT = (
    "import sys; from gitstate.storage import hooklayout; "
    "found = hooklayout.discover(sys.argv[1]); print(found.gitdir if found else 'none')"
)


def _discover_in_child(start: Path) -> str:
    """In a child with a timeout: a blocking open() of a FIFO would hang the test otherwise."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(start)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip()


def test_a_dot_git_fifo_is_no_repository_and_does_not_hang(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / ".git")
    assert _discover_in_child(work) == "none"


def test_a_commondir_fifo_leaves_the_git_dir_its_own_common_dir(tmp_path: Path) -> None:
    gitdir = tmp_path / "wt.git"
    gitdir.mkdir()
    os.mkfifo(gitdir / "commondir")
    found = hooklayout.HookLayout.from_dirs(gitdir, tmp_path)
    assert found.commondir == os.path.realpath(gitdir)
    assert found.worktree is None
