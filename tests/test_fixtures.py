"""The suite's own ground: pytest-git's `git_repo` without its plugin, on a pytest that has
dropped `yield_fixture` (pytest 10) as on today's, with no deprecated pytest API in use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest_git

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
