"""What makes a job cheap (docs/jobs.md, "Cost per job"): the supervisor's git without pygit2
(settings, branch tip, uncommitted files, the record commit) gives what the pygit2 code gives,
and the doorbell wakes the first in line, not the whole queue."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Repo

from gitstate.jobs.document.config import KEYS, load
from gitstate.jobs.storage import doorbell, record_commit, records, supervisor_git
from gitstate.jobs.storage import files as jobfiles
from gitstate.storage.layout import Layout, discover
from gitstate.storage.snapshots import parse_trailers

CONTENTS = {
    "plan.md": "# Retry\n",
    "prompt.txt": "do it\n",
    "result.json": '{"state": "done"}\n',
    "diffstat.txt": "",
}
JOB = "j-20260102-030405-abcd"


def _layout(repo: Repo) -> Layout:
    layout = discover(repo.path)
    assert layout is not None
    return layout


def _supervisor_layout(repo: Repo) -> Layout:
    """The layout the supervisor makes: the common dir only (supervise.main)."""
    common = _layout(repo).commondir
    return Layout(None, common, common, None)


# ---- the record commit ------------------------------------------------------------------


def test_the_record_is_the_commit_pygit2_writes(repo: Repo, tmp_path: Path) -> None:
    """Same files, message, identity and dates: the same commit id, byte for byte."""
    light = record_commit.commit(_supervisor_layout(repo), JOB, 1, "done", CONTENTS, "job: done")
    other = Repo(tmp_path / "other")
    other.path.mkdir()
    other.git("init", "-q")
    store = records.main_store(_layout(other))
    heavy = records.commit_record(store, JOB, 1, "done", CONTENTS, "job: done")
    assert light == heavy
    assert repo.git("fsck", "--strict", "--no-dangling").strip() == ""
    assert repo.git("ls-tree", "--name-only", light).split() == sorted(RECORD_NAMES)
    assert repo.git("show", f"{light}:plan.md") == "# Retry\n"
    message = repo.git("log", "-1", "--format=%B", light)
    assert parse_trailers(message)["Agy-Job-Round"] == "1"


RECORD_NAMES = list(CONTENTS)


def test_with_signing_configured_git_writes_the_same_commit(repo: Repo, tmp_path: Path) -> None:
    """commit.gpgsign set (here: false) hands the commit to `git commit-tree`: still Store's."""
    repo.git("config", "commit.gpgsign", "false")
    light = record_commit.commit(_supervisor_layout(repo), JOB, 1, "done", CONTENTS, "signed?")
    other = Repo(tmp_path / "other")
    other.path.mkdir()
    other.git("init", "-q")
    store = records.main_store(_layout(other))
    assert light == records.commit_record(store, JOB, 1, "done", CONTENTS, "signed?")
    assert repo.git("cat-file", "-t", light).strip() == "commit"


def test_rounds_chain_and_the_reflog_names_them(repo: Repo) -> None:
    layout = _supervisor_layout(repo)
    first = record_commit.commit(layout, JOB, 1, "done", CONTENTS, "round one")
    second = record_commit.commit(layout, JOB, 2, "error", CONTENTS, "round two")
    assert repo.ref(f"refs/agy/jobs/{JOB}") == second
    assert repo.git("rev-parse", f"{second}^").strip() == first
    assert records.recorded_round(records.main_store(layout), JOB) == 2
    log = repo.git("reflog", "show", "--format=%gs", f"refs/agy/jobs/{JOB}").splitlines()
    assert log == [f"agy-state: job {JOB} round 2", f"agy-state: job {JOB} round 1"]


def test_a_record_ref_that_moved_is_built_on(repo: Repo) -> None:
    """Compare-and-swap: the parent is the tip as it is now, whoever wrote it."""
    layout = _supervisor_layout(repo)
    elsewhere = records.commit_record(
        records.main_store(layout), JOB, 1, "done", CONTENTS, "by pygit2"
    )
    mine = record_commit.commit(layout, JOB, 2, "done", CONTENTS, "by the light writer")
    assert repo.git("rev-parse", f"{mine}^").strip() == elsewhere


def test_without_an_identity_the_record_is_signed_as_store_signs(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    for kind in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{kind}_NAME")
        monkeypatch.delenv(f"GIT_{kind}_EMAIL")
    made = record_commit.commit(_supervisor_layout(repo), JOB, 1, "done", CONTENTS, "who")
    assert repo.git("log", "-1", "--format=%an <%ae>|%cn <%ce>", made).strip() == (
        "git-agy-state <agy-state@localhost>|git-agy-state <agy-state@localhost>"
    )


def test_a_symbolic_record_ref_goes_to_pygit2_which_refuses_it(repo: Repo) -> None:
    repo.git("symbolic-ref", f"refs/agy/jobs/{JOB}", "refs/heads/main")
    with pytest.raises(Exception, match="symbolic"):
        record_commit.commit(_supervisor_layout(repo), JOB, 1, "done", CONTENTS, "x")
    assert repo.git("symbolic-ref", f"refs/agy/jobs/{JOB}").strip() == "refs/heads/main"


def test_loose_objects_are_written_once_and_read_only(repo: Repo) -> None:
    objects = _layout(repo).commondir / "objects"
    oid = record_commit.write_object(objects, "blob", b"hello\n")
    assert oid == repo.git("hash-object", "--stdin", input="hello\n").strip()
    path = objects / oid[:2] / oid[2:]
    assert path.stat().st_mode & 0o777 == 0o444
    assert record_commit.write_object(objects, "blob", b"hello\n") == oid
    assert sorted(p.name for p in path.parent.iterdir()) == [oid[2:]]  # no temporary left


# ---- the supervisor's reads -------------------------------------------------------------


def test_settings_are_read_as_pygit2_reads_them(repo: Repo) -> None:
    repo.git("config", "agy.maxConcurrent", "7")
    repo.git("config", "agy.timeoutGrace", "5s")
    repo.git("config", "agy.skipPermissions", "false")
    light = load(supervisor_git.config_reader(_supervisor_layout(repo)))
    heavy = load(records.main_store(_layout(repo)).config_value)
    assert light == heavy
    assert (light.max_concurrent, light.grace, light.skip_permissions) == (7, 5.0, False)
    assert "agy.maxConcurrent" in KEYS


def test_the_config_stamp_changes_with_the_settings(repo: Repo) -> None:
    """What tells a waiting supervisor to read maxConcurrent again."""
    layout = _supervisor_layout(repo)
    before = supervisor_git.config_stamp(layout)
    assert supervisor_git.config_stamp(layout) == before
    repo.git("config", "agy.maxConcurrent", "5")
    assert supervisor_git.config_stamp(layout) != before


def test_the_branch_tip_loose_and_packed(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD").strip()
    repo.git("branch", f"agy/{JOB}")
    layout = _supervisor_layout(repo)
    assert supervisor_git.branch_tip(layout, f"agy/{JOB}") == head
    repo.git("pack-refs", "--all")
    assert supervisor_git.branch_tip(layout, f"agy/{JOB}") == head
    assert supervisor_git.branch_tip(layout, "agy/gone") is None


def test_the_supervisor_loads_neither_pygit2_nor_argparse(repo: Repo) -> None:
    """Its start is paid once per job; a round that commits nothing never needs pygit2."""
    probe = (
        "import sys, gitstate.jobs.usecases.supervise\n"
        "print(' '.join(m for m in ('pygit2', 'argparse', 'click') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=os.path.realpath(os.sep),
    )
    assert proc.stdout.strip() == ""


# ---- the doorbell -----------------------------------------------------------------------


def _queued(layout: Layout, job_id: str, queued_at: str, state: str = "queued") -> None:
    folder = jobfiles.jobs_root(layout) / job_id
    folder.mkdir(parents=True)
    meta = {"id": job_id, "state": state, "queued_at": queued_at, "queue_seq": 1, "round": 1}
    jobfiles.write_json(folder / "meta.json", meta)


def test_a_ring_wakes_the_watchers_and_the_first_in_line_only(repo: Repo) -> None:
    layout = _layout(repo)
    first, second, running = (f"j-20260102-030405-000{n}" for n in range(3))
    _queued(layout, second, "2026-01-02T03:04:06")
    _queued(layout, first, "2026-01-02T03:04:05")
    _queued(layout, running, "2026-01-02T03:04:04", state="running")
    bells = {n: doorbell.Bell.open(layout, n) for n in (first, second, running, "watch-1")}
    try:
        assert doorbell.ring(layout) == 2
        assert bells["watch-1"].wait(0) == "rung"
        assert bells[first].wait(0) == "rung"
        assert bells[second].wait(0) == "timeout"
        assert bells[running].wait(0) == "timeout"
        bells.pop(first).close()  # the first in line stopped listening: the next one hears it
        os.mkfifo(jobfiles.queue_dir(layout) / f"{first}.bell", 0o600)  # left by a kill -9
        assert doorbell.ring(layout) == 2
        assert bells[second].wait(0) == "rung"
        assert not (jobfiles.queue_dir(layout) / f"{first}.bell").exists()
    finally:
        for bell in bells.values():
            bell.close()
