"""The view is excluded from git wherever it is written, not only by `init` (docs/format.md):
a second clone that only syncs, a first save, a checkout of a snapshot all leave `git status`
clean, and the line is added once, after whatever info/exclude held."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def tool(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "gitstate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, f"agy-state {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def exclude_lines(clone: Path) -> list[str]:
    path = Path(git(clone, "rev-parse", "--git-common-dir").strip())
    exclude = (clone / path if not path.is_absolute() else path) / "info" / "exclude"
    return exclude.read_text().splitlines() if exclude.exists() else []


@pytest.fixture
def remote(tmp_path: Path, hermetic: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", "-b", "main", str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "initial")
    git(seed, "push", "-q", str(bare), "main")
    return bare


def clone(remote: Path, name: str) -> Path:
    path = remote.parent / name
    git(remote.parent, "clone", "-q", str(remote), str(path))
    git(path, "config", "user.email", "dev@example.com")
    return path


def test_a_second_clone_that_syncs_gets_no_untracked_view(remote: Path) -> None:
    a = clone(remote, "a")
    tool(a, "patch", "--set", "goal=Make the pool retry", "--todo", "write the test")
    tool(a, "sync")
    b = clone(remote, "b")
    assert "/STATE.md" not in exclude_lines(b)
    tool(b, "sync")
    assert (b / "STATE.md").is_file()
    assert git(b, "status", "--porcelain", "--untracked-files=all") == ""
    assert exclude_lines(b).count("/STATE.md") == 1


def test_the_first_save_excludes_the_view_once_after_the_users_lines(remote: Path) -> None:
    a = clone(remote, "a")
    info = a / ".git" / "info" / "exclude"
    info.write_text("# mine\n*.log")  # no final newline: ours goes on a line of its own
    tool(a, "patch", "--set", "goal=First", "--todo", "one")
    tool(a, "patch", "--todo", "two")
    assert info.read_text() == "# mine\n*.log\n/STATE.md\n"
    assert git(a, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_checkout_of_a_snapshot_excludes_the_view(remote: Path) -> None:
    a = clone(remote, "a")
    tool(a, "patch", "--set", "goal=First", "--todo", "one")
    info = a / ".git" / "info" / "exclude"
    info.write_text("")  # as if the line had never been there
    (a / "STATE.md").unlink()
    tool(a, "checkout", "--force", "refs/agy/state")
    assert (a / "STATE.md").is_file()
    assert info.read_text() == "/STATE.md\n"
    assert git(a, "status", "--porcelain", "--untracked-files=all") == ""


def test_an_info_exclude_that_cannot_be_written_never_fails_a_save(remote: Path) -> None:
    a = clone(remote, "a")
    info = a / ".git" / "info" / "exclude"
    info.unlink()
    info.mkdir()  # no file to append to: the save still goes through
    tool(a, "patch", "--set", "goal=First", "--todo", "one")
    assert (a / "STATE.md").is_file()
    assert git(a, "rev-parse", "--verify", "-q", "refs/agy/state").strip()
