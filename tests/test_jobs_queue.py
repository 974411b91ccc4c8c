"""The run queue under load: the limit holds, FIFO order, hand-off, a dead holder's slot."""

from __future__ import annotations

import json
import os
import signal
from typing import Any

from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, meta, submit
from support import wait_until

from gitstate.jobs.storage import doorbell
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.usecases import queue
from gitstate.storage.layout import discover

__all__ = ["agents", "jobs_repo"]  # fixtures


def _overlap(agents: Agents) -> int:
    """The largest number of agents that ran at the same time, from their start/end log."""
    moments = sorted(
        (e["t"], 1 if e["event"] == "start" else -1, e["pid"]) for e in agents.entries()
    )
    running = most = 0
    for _t, step, _pid in moments:
        running += step
        most = max(most, running)
    return most


def test_six_jobs_under_a_limit_of_two(jobs_repo: Repo, agents: Agents, cli: Any) -> None:
    jobs_repo.git("config", "agy.maxConcurrent", "2")
    submitted = [submit(cli, f"job {n}\n@fake sleep 0.4") for n in range(6)]
    assert [s["queue_position"] for s in submitted] == [None, None, 1, 2, 3, 4]
    ids = [s["job_id"] for s in submitted]
    rows = finish(cli, *ids)
    assert [r["state"] for r in rows] == ["done"] * 6
    assert _overlap(agents) == 2
    claimed = sorted(ids, key=lambda job_id: meta(jobs_repo, job_id)["started_at"])
    # FIFO: a job may claim a slot only when the jobs queued before it get one too, so it
    # can overtake at most the others freed at the same moment (fewer than the limit)
    for place, job_id in enumerate(claimed):
        overtaken = [j for j in ids[: ids.index(job_id)] if j not in claimed[:place]]
        assert len(overtaken) < 2, (job_id, overtaken)
    for job_id in ids[2:]:
        events = jobfiles.files(_layout(jobs_repo), job_id).events.read_text().splitlines()
        queued = [json.loads(e) for e in events if '"queued"' in e]
        assert queued and queued[0]["running"] + queued[0]["queued_ahead"] >= 2


def test_a_killed_supervisor_frees_its_slot(jobs_repo: Repo, agents: Agents, cli: Any) -> None:
    jobs_repo.git("config", "agy.maxConcurrent", "1")
    first = submit(cli, "@fake sleep 30")["job_id"]
    second = submit(cli, "next")["job_id"]
    pgid = wait_until(lambda: meta(jobs_repo, first).get("pid_agent"), what="the first agent")
    assert meta(jobs_repo, second)["state"] == "queued"
    os.kill(meta(jobs_repo, first)["pid_supervisor"], signal.SIGKILL)
    # nobody reads the first job: the waiting supervisor notices the death itself (pidfd)
    rows = finish(cli, second)
    assert rows[0]["state"] == "done"
    assert meta(jobs_repo, first)["state"] == "interrupted"
    assert not os.path.exists(f"/proc/{pgid}") or _zombie(pgid)


def test_position_and_doorbell() -> None:
    standing = queue.Standing(running=2, ahead=0, pids=())
    assert queue.position(standing, 3) is None
    assert queue.position(standing, 2) == 1
    assert queue.position(queue.Standing(1, 3, ()), 3) == 2
    assert queue.position(queue.Standing(5, 0, ()), 3) == 1  # the limit was lowered


def test_a_ring_before_the_wait_is_not_lost(jobs_repo: Repo) -> None:
    layout = _layout(jobs_repo)
    with doorbell.Bell.open(layout, "test") as bell:
        assert doorbell.ring(layout) == 1
        assert bell.wait(5.0) == "rung"
        assert bell.wait(0.01) == "timeout"
    stale = jobfiles.queue_dir(layout) / "gone.bell"
    os.mkfifo(stale)
    assert doorbell.ring(layout) == 0 and not stale.exists()  # nobody listened: removed


def _layout(repo: Repo) -> Any:
    layout = discover(repo.path)
    assert layout is not None
    return layout


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[-1].split()[0] == b"Z"
    except OSError:
        return True
