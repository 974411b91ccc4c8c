"""`job run` reads HEAD and the dirty check of the work tree it is called in: in the main work
tree through the main store it opens anyway (jobs/usecases/submit.py), in a linked worktree
through that tree's own. Real repositories, a real fake agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from jobs_support import agents, finish, jobs_repo, meta, submit

__all__ = ["agents", "jobs_repo"]  # fixtures


@pytest.fixture
def linked(jobs_repo: Repo, tmp_path: Path) -> Path:
    """A linked worktree on a branch one commit ahead of the main tree's HEAD."""
    other = tmp_path / "linked"
    jobs_repo.git("worktree", "add", "-q", "-b", "side", str(other))
    (other / "side.txt").write_text("side\n")
    jobs_repo.git("-C", str(other), "add", "side.txt")
    jobs_repo.git("-C", str(other), "commit", "-q", "-m", "side")
    return other


def test_in_the_main_tree_its_own_head_and_changes(jobs_repo: Repo, cli: Any, linked: Path) -> None:
    (linked / "side.txt").write_text("changed in the linked tree only\n")
    body = submit(cli)
    assert body["warnings"] == []  # the linked tree's change is not this tree's
    assert meta(jobs_repo, body["job_id"])["base_sha"] == jobs_repo.git("rev-parse", "HEAD").strip()
    finish(cli, body["job_id"])


def test_in_a_linked_worktree_that_trees_head_and_changes(
    jobs_repo: Repo, cli: Any, linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (linked / "side.txt").write_text("changed\n")
    monkeypatch.chdir(linked)
    body = submit(cli)
    assert "uncommitted changes" in body["warnings"][0]
    side = jobs_repo.git("rev-parse", "side").strip()
    assert meta(jobs_repo, body["job_id"])["base_sha"] == side
    finish(cli, body["job_id"])
