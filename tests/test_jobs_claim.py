"""The first attempt's agent starts in the locked pass that claims the slot, and its pid goes
into the claim's own write of meta.json (jobs/usecases/supervise.py, queue.wait_for_slot's
on_claim): one write and one lock pass fewer per job. Real jobs and the fake agent."""

from __future__ import annotations

from typing import Any

from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, meta, run_json, submit
from support import wait_until

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
