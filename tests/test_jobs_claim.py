"""What a supervisor's claim of a slot costs (docs/jobs.md, "The queue"): the first attempt's
agent starts in the locked pass that claims the slot, its pid in the claim's own write of
meta.json (queue.wait_for_slot's on_claim), and a job the submitter saw a slot free for looks
before it makes a doorbell. Real jobs and the fake agent; real queue files and locks."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest
from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, meta, run_json, submit
from support import wait_until

from gitstate.jobs.storage import doorbell
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.usecases import lifecycle, queue
from gitstate.jobs.usecases.lifecycle import Meta
from gitstate.storage.layout import Layout, discover

__all__ = ["agents", "jobs_repo"]  # fixtures


def test_the_claim_records_the_agent_it_started(jobs_repo: Repo, agents: Agents, cli: Any) -> None:
    job = submit(cli)["job_id"]
    [row] = finish(cli, job)
    assert row["state"] == "done"
    [start] = agents.starts()
    done = meta(jobs_repo, job)
    assert done["pid_agent"] == start["pid"]  # the shell script execs the agent: same pid
    assert done["attempts"] == 1
    assert done["started_at"] <= done["agent_started_at"] <= done["finished_at"]


def test_an_agent_that_cannot_start_ends_the_round_in_error(
    jobs_repo: Repo, agents: Agents, cli: Any
) -> None:
    """The agent CLI is gone by the time the job gets its slot: the claim's start fails, and
    the round ends at once (no retry: a missing program stays missing)."""
    jobs_repo.git("config", "agy.maxConcurrent", "1")
    first = submit(cli, "@fake sleep 30")["job_id"]
    wait_until(lambda: meta(jobs_repo, first).get("pid_agent"), what="the first agent")
    second = submit(cli)["job_id"]
    wait_until(lambda: meta(jobs_repo, second).get("pid_supervisor"), what="the second to wait")
    (agents.bin / "agy").unlink()
    run_json(cli, "job", "cancel", first)
    [row] = finish(cli, second)
    assert row["state"] == "error"
    late = meta(jobs_repo, second)
    assert late["error"].startswith("cannot start the agent:")
    assert late["attempts"] == 1 and late["pid_agent"] is None


# ---- the doorbell only for a job that must wait ------------------------------------------

FREE, BUSY = "j-20260102-030405-aaaa", "j-20260102-030404-bbbb"


def _job(layout: Layout, job_id: str, state: str, queued_at: str) -> int:
    """A job folder with its meta, and its supervisor lock held by this process (as its live
    supervisor would): the fd to close."""
    folder = jobfiles.jobs_root(layout) / job_id
    folder.mkdir(parents=True)
    meta = {"id": job_id, "state": state, "queued_at": queued_at, "queue_seq": 1, "round": 1}
    jobfiles.write_json(folder / "meta.json", meta)
    return jobfiles.take_supervisor_lock(jobfiles.files(layout, job_id))


def _wait(layout: Layout, slot_likely: bool) -> Meta | None:
    return queue.wait_for_slot(
        layout, FREE, 1, lambda: 1, 30.0, lambda standing: None, slot_likely=slot_likely
    )


def test_a_job_told_a_slot_is_free_claims_it_without_a_doorbell(repo: Repo) -> None:
    layout = discover(repo.path)
    assert layout is not None
    fd = _job(layout, FREE, "queued", "2026-01-02T03:04:05.000000+00:00")
    try:
        # No bell can be made here (the queue folder is a file), so a claim that made one fails.
        jobfiles.queue_dir(layout).parent.mkdir(parents=True, exist_ok=True)
        jobfiles.queue_dir(layout).write_text("not a folder\n")
        with pytest.raises(OSError):
            _wait(layout, slot_likely=False)
        claimed = _wait(layout, slot_likely=True)
        assert claimed is not None and claimed["state"] == "running"
    finally:
        os.close(fd)


def test_a_job_told_a_slot_is_free_that_must_wait_after_all_is_woken(repo: Repo) -> None:
    """The slot was taken between the submitter's count and the supervisor's first look: it
    makes its bell then, looks again, and the slot's release wakes it."""
    layout = discover(repo.path)
    assert layout is not None
    busy = _job(layout, BUSY, "running", "2026-01-02T03:04:04.000000+00:00")
    free = _job(layout, FREE, "queued", "2026-01-02T03:04:05.000000+00:00")
    bell = jobfiles.queue_dir(layout) / f"{FREE}{doorbell.SUFFIX}"

    def release() -> None:
        wait_until(bell.exists, what="the waiting job's bell")

        def done(meta: Meta) -> Meta:
            meta["state"] = "done"
            return meta

        lifecycle.update(layout, BUSY, done, ring=True)

    helper = threading.Thread(target=release)
    helper.start()
    try:
        claimed = _wait(layout, slot_likely=True)
    finally:
        helper.join()
        os.close(busy)
        os.close(free)
    assert claimed is not None and claimed["state"] == "running"
    assert not bell.exists()  # closed: a ringer finds no bell of a job that left the queue
