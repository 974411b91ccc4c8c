"""A supervisor's settings and its look at the worktree (docs/jobs.md, "Cost per job"): a fork
of the submitter takes the settings that process read and asks pygit2, already loaded, for the
uncommitted files, so it starts no `git` process of its own; a fresh interpreter asks git. Both
give the same answers: `git -c` values included, a settings change after the read seen by a
waiting supervisor, the same uncommitted files."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, meta, submit

from gitstate.jobs.document.config import load
from gitstate.jobs.storage import records, supervisor_git
from gitstate.jobs.usecases import launch
from gitstate.jobs.usecases.supervise import Supervisor
from gitstate.storage.layout import Layout, discover

__all__ = ["agents", "jobs_repo"]  # fixtures
JOB = "j-20260102-030405-abcd"


@pytest.fixture
def git_log(tmp_path: Path, agents: Agents, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that notes each call's parent pid and arguments, then runs git."""
    real = shutil.which("git")
    assert real is not None
    log = tmp_path / "git.log"
    wrapper = agents.bin / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$PPID $*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return log


@pytest.fixture(autouse=True)
def plain_dates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commit dates in the form the record writer reads itself (not the fixtures' ISO form,
    which sends the record to `git commit-tree`)."""
    for kind in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{kind}_DATE", "@1767323045 +0000")


@pytest.fixture
def second_thread() -> Iterator[None]:
    """This process runs two threads while the test submits: no fork, a fresh interpreter."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait, name="a server's worker")
    thread.start()
    yield
    done.set()
    thread.join()


def _calls_by(log: Path, pid: int) -> list[str]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 1)[1] for line in lines if line.split(" ", 1)[0] == str(pid)]


def _round(jobs_repo: Repo, cli: Any, plan: str = "Add a file") -> tuple[str, int]:
    job = submit(cli, plan)["job_id"]
    [row] = finish(cli, job)
    assert row["state"] == "done"
    pid = meta(jobs_repo, job)["pid_supervisor"]
    assert isinstance(pid, int)
    return job, pid


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork")
def test_a_forked_round_starts_no_git_of_its_own(
    jobs_repo: Repo, cli: Any, git_log: Path, agents: Agents
) -> None:
    assert launch.can_fork()
    _job, pid = _round(jobs_repo, cli)
    assert _calls_by(git_log, pid) == []
    # The log does see git: the agent's commit, from the fake agent's process.
    [start] = agents.starts()
    assert any(call.startswith("commit") for call in _calls_by(git_log, start["pid"]))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_a_fresh_interpreter_asks_git(
    jobs_repo: Repo, cli: Any, git_log: Path, second_thread: None
) -> None:
    assert not launch.can_fork()
    # A round that commits nothing: one that does loads pygit2 for its diff, and then lists
    # the uncommitted files with it too.
    _job, pid = _round(jobs_repo, cli, "@fake no-commit")
    calls = _calls_by(git_log, pid)
    assert [c.split()[0] for c in calls] == ["config", "status"]


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "fresh"])
def test_git_c_values_reach_the_round(
    jobs_repo: Repo,
    cli: Any,
    agents: Agents,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    fork: bool,
) -> None:
    """`git -c agy.skipPermissions=false agy-state job run …`: git hands the value on in the
    environment, the submitter reads it (Store.config_value), and so does the round, whichever
    way its supervisor started."""
    if not fork:
        request.getfixturevalue("second_thread")
    assert launch.can_fork() is fork
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'agy.skipPermissions'='false'")
    _round(jobs_repo, cli)
    [start] = agents.starts()
    assert "--dangerously-skip-permissions" not in start["argv"]


def _supervisor_layout(repo: Repo) -> Layout:
    layout = discover(repo.path)
    assert layout is not None
    return Layout(None, layout.commondir, layout.commondir, None)


def test_a_change_after_the_submitters_read_is_seen_by_the_waiting_supervisor(
    repo: Repo,
) -> None:
    layout = _supervisor_layout(repo)
    main = discover(repo.path)
    assert main is not None
    repo.git("config", "agy.maxConcurrent", "1")
    read = supervisor_git.preset(layout, records.main_store(main).config_value)
    assert read.values["agy.maxconcurrent"] == "1"

    current = Supervisor(layout, JOB, 1, read)
    current.settings = load(supervisor_git.config_reader(layout, read.values))
    assert current._limit() == 1  # the stamp still holds: the submitter's read is used

    repo.git("config", "agy.maxConcurrent", "4")
    assert current._limit() == 4  # the config file changed since: read again
    stale = Supervisor(layout, JOB, 1, read)
    stale.settings = load(supervisor_git.config_reader(layout, read.values))
    assert stale._limit() == 4  # changed between the submitter's read and the first count


def test_the_preset_holds_what_git_config_reads(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.git("config", "agy.maxConcurrent", "7")
    repo.git("config", "user.name", "Some One")
    repo.git("config", "commit.gpgsign", "false")  # set, if false: git's commit-tree signs
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'agy.timeoutGrace'='5s'")
    main = discover(repo.path)
    assert main is not None
    layout = _supervisor_layout(repo)
    handed = supervisor_git.preset(layout, records.main_store(main).config_value).values
    asked = supervisor_git.settings(layout)
    assert handed == asked
    assert asked["agy.maxconcurrent"] == "7" and asked["agy.timeoutgrace"] == "5s"
    assert asked["user.name"] == "Some One" and "commit.gpgsign" in asked


def test_uncommitted_files_in_process_and_by_git(repo: Repo, tmp_path: Path) -> None:
    repo.commit("kept.txt", "a\n")
    repo.commit("gone.txt", "b\n")
    worktree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", str(worktree))
    (worktree / "kept.txt").write_text("changed\n")
    (worktree / "gone.txt").unlink()
    (worktree / "deep" / "er").mkdir(parents=True)
    (worktree / "deep" / "er" / "new.txt").write_text("new\n")
    (worktree / "café é.txt").write_text("x\n")
    (worktree / ".gitignore").write_text("*.log\n")
    (worktree / "noise.log").write_text("ignored\n")
    expected = sorted(["café é.txt", ".gitignore", "deep/er/new.txt", "gone.txt", "kept.txt"])
    for in_process in (True, False):
        assert supervisor_git.uncommitted(worktree, in_process) == expected
        # A worktree whose .git the agent removed is no work tree: pygit2 alone would look
        # upwards and could answer for another repository.
        nested = worktree / "deep"
        assert supervisor_git.uncommitted(nested, in_process) == []
        assert supervisor_git.uncommitted(repo.path, in_process) == []  # .git a folder: main
        assert supervisor_git.uncommitted(tmp_path / "nowhere", in_process) == []
    assert records.uncommitted(worktree) == expected  # as the record reads them with pygit2
    os.close(os.open(os.fsencode(worktree) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    assert supervisor_git.uncommitted(worktree, True) == []
    assert supervisor_git.uncommitted(worktree, False) == []
