"""The suite's own ground: pytest-git's `git_repo` without its plugin, on a pytest that has
dropped `yield_fixture` (pytest 10) as on today's, with no deprecated pytest API in use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest_git

from tests.conftest import Repo

ROOT = Path(__file__).resolve().parent.parent

# A pytest without `yield_fixture`, as pytest 10 will be, running the test below (and only it).
PYTEST_10 = """
import sys
import pytest
del pytest.yield_fixture
sys.exit(pytest.main(sys.argv[1:]))
"""


def test_git_repo_is_pytest_gits_repository(git_repo: Any) -> None:
    assert isinstance(git_repo, pytest_git.GitRepo)
    workspace = Path(git_repo.workspace)
    assert (workspace / ".git" / "HEAD").is_file()
    assert git_repo.uri == f"file://{workspace}"


def test_the_suite_runs_on_a_pytest_without_yield_fixture() -> None:
    this = f"{Path(__file__).relative_to(ROOT)}::test_git_repo_is_pytest_gits_repository"
    proc = subprocess.run(
        [sys.executable, "-c", PYTEST_10, "-W", "error::pytest.PytestRemovedIn10Warning", this],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_repo_holds_what_git_add_and_commit_make(repo: Repo, tmp_path: Path) -> None:
    """`repo` makes its first commit with libgit2 (tests/conftest.py, initial_commit); here git
    makes the same one in a twin, and every file git keeps for it must read alike."""
    twin = tmp_path / "twin"
    subprocess.run(["git", "init", "-q", "-b", "main", str(twin)], check=True)
    (twin / "README").write_text("readme\n")
    Repo(twin).git("add", "README")
    Repo(twin).git("commit", "-q", "-m", "initial")
    for each in (repo, Repo(twin)):
        assert each.git("status", "--porcelain", "--ignored") == ""
        assert each.git("diff-files") == ""  # plumbing: the index's stat data holds as is
        assert each.git("fsck", "--strict", "--no-dangling") == ""
    for name in ("HEAD", "COMMIT_EDITMSG", "logs/HEAD", "logs/refs/heads/main"):
        assert (repo.path / ".git" / name).read_text() == (twin / ".git" / name).read_text()
    assert repo.git("rev-parse", "HEAD") == Repo(twin).git("rev-parse", "HEAD")
    assert repo.git("ls-files", "-s") == Repo(twin).git("ls-files", "-s")
    assert repo.git("for-each-ref") == Repo(twin).git("for-each-ref")


def test_empty_repo_holds_what_git_symbolic_ref_makes(empty_repo: Repo, tmp_path: Path) -> None:
    twin = Repo(tmp_path / "twin")
    subprocess.run(["git", "init", "-q", str(twin.path)], check=True)
    twin.git("symbolic-ref", "HEAD", "refs/heads/main")
    assert empty_repo.git("symbolic-ref", "HEAD") == "refs/heads/main\n"
    for name in ("HEAD", "config"):
        assert (empty_repo.path / ".git" / name).read_bytes() == (
            twin.path / ".git" / name
        ).read_bytes()
    assert sorted(p.name for p in (empty_repo.path / ".git").iterdir()) == sorted(
        p.name for p in (twin.path / ".git").iterdir()
    )
