"""`job_run` through `git agy-state mcp`, driven by the SDK's own client over stdio: the real
server, a real job, a fake agent CLI (tests/fakes/fake_job_agent.py) that waits at a gate until
the test has looked at its supervisor (docs/mcp.md, docs/jobs.md "Process model").

The server runs its tools in the SDK's worker threads, so its supervisors are the fresh
interpreter, never a fork; each leads a session of its own, so a client that ends the server (its
stdin closed, then the server's whole process group killed if it lingers: the SDK's shutdown)
leaves the job running to its result.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import Repo
from jobs_support import Agents, agents, jobs_repo
from mcp import ClientSession
from test_jobs_fork_fallback import gate_agents
from test_mcp_server import answer, refusal, serve

from gitstate.jobs.usecases import launch

__all__ = ["agents", "jobs_repo"]  # fixtures

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")

POLLS = 600  # job_status calls at most, 0.05 s apart: a bound, not a timing
PLAN = "Add a file"


async def poll(client: ClientSession, job: str, key: str) -> dict[str, Any]:
    """job_status until its `key` is set (truthy); that status."""
    status: dict[str, Any] = {}
    for _ in range(POLLS):
        status = answer(await client.call_tool("job_status", {"job_id": job}))
        if status.get(key):
            return status
        await anyio.sleep(0.05)
    raise AssertionError(f"no {key} after {POLLS} polls: {status}")


async def until_finished(client: ClientSession, job: str) -> dict[str, Any]:
    status: dict[str, Any] = {}
    for _ in range(POLLS):
        status = answer(await client.call_tool("job_status", {"job_id": job}))
        if status["state"] not in ("queued", "running"):
            return status
        await anyio.sleep(0.05)
    raise AssertionError(f"still {status['state']} after {POLLS} polls")


def _cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        return [word.decode() for word in handle.read().split(b"\0") if word]


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return int(handle.read().rsplit(b")", 1)[1].split()[1])


def _alive(pid: int) -> bool:
    """Running, not a zombie (a zombie has closed its files, and its lock with them)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def _is_fresh_supervisor(pid: int, job: str) -> None:
    argv = _cmdline(pid)
    assert argv[:4] == [sys.executable, "-I", "-m", launch.SUPERVISOR_MODULE], argv
    assert argv[argv.index("--job") + 1] == job
    assert os.getsid(pid) == pid and os.getpgid(pid) == pid


def _expected_files(repo: Repo, branch: str) -> list[str]:
    base = repo.git("rev-parse", "HEAD").strip()
    return repo.git("diff", "--name-only", f"{base}..{branch}").split()


def test_a_job_run_from_mcp_runs_to_its_result(
    jobs_repo: Repo, agents: Agents, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate_agents(agents, gate)

    async def session(client: ClientSession) -> Any:
        queued = answer(await client.call_tool("job_run", {"text": PLAN}))
        job = queued["job_id"]
        running = await poll(client, job, "pid_agent")
        supervisor = running["pid_supervisor"]
        _is_fresh_supervisor(supervisor, job)  # the server has threads: no fork
        early = refusal(await client.call_tool("job_result", {"job_id": job}))
        gate.touch()
        finished = await until_finished(client, job)
        result = answer(await client.call_tool("job_result", {"job_id": job}))
        pending = answer(await client.call_tool("job_pending", {}))
        return queued, running, early, finished, result, pending

    [(queued, running, early, finished, result, pending)] = serve(jobs_repo.path, session)
    assert queued["state"] in ("queued", "running") and queued["branch"].startswith("agy/")
    assert running["state"] == "running"
    assert early["code"] == 4  # still running: no result yet
    assert finished["state"] == "done"
    expected = _expected_files(jobs_repo, queued["branch"])
    assert expected and result["files_changed_git"] == expected
    assert pending == {"jobs": []}  # job_result harvested it


def test_a_job_run_from_mcp_outlives_the_server(
    jobs_repo: Repo, agents: Agents, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate_agents(agents, gate)
    seen: dict[str, int] = {}

    async def submit(client: ClientSession) -> Any:
        queued = answer(await client.call_tool("job_run", {"text": PLAN}))
        running = await poll(client, queued["job_id"], "pid_agent")
        seen["supervisor"] = running["pid_supervisor"]
        seen["agent"] = running["pid_agent"]
        seen["server"] = _parent(seen["supervisor"])  # the server spawned it
        assert _cmdline(seen["server"])[-3:] == ["mcp", "--repo", str(jobs_repo.path)]
        assert os.getpgid(seen["supervisor"]) != os.getpgid(seen["server"])
        return queued

    [queued] = serve(jobs_repo.path, submit)  # the client closes the server's stdin, ends it
    job = queued["job_id"]
    assert not _alive(seen["server"])
    assert _alive(seen["supervisor"]) and _alive(seen["agent"])
    gate.touch()

    async def harvest(client: ClientSession) -> Any:
        finished = await until_finished(client, job)
        return finished, answer(await client.call_tool("job_result", {"job_id": job}))

    [(finished, result)] = serve(jobs_repo.path, harvest)  # another server, later
    assert finished["state"] == "done"
    expected = _expected_files(jobs_repo, queued["branch"])
    assert expected and result["files_changed_git"] == expected


def test_the_server_killed_with_its_group_leaves_the_job_running(
    jobs_repo: Repo, agents: Agents, tmp_path: Path
) -> None:
    """What the SDK's client does to a server that does not leave once its stdin is closed: it
    signals the server's whole process group (SIGTERM, then SIGKILL). Here SIGKILL, at once,
    while the job's agent works."""
    gate = tmp_path / "gate"
    gate_agents(agents, gate)
    seen: dict[str, Any] = {}

    async def submit(client: ClientSession) -> Any:
        queued = answer(await client.call_tool("job_run", {"text": PLAN}))
        seen["job"] = queued["job_id"]
        running = await poll(client, seen["job"], "pid_agent")
        seen["supervisor"] = running["pid_supervisor"]
        seen["server"] = _parent(seen["supervisor"])
        # Only ever the server's own group (it leads it: the SDK starts it in a new session).
        assert _cmdline(seen["server"])[-3:] == ["mcp", "--repo", str(jobs_repo.path)]
        assert os.getpgid(seen["server"]) == seen["server"] != os.getpgid(0)
        os.killpg(seen["server"], signal.SIGKILL)

    # The client may or may not report the server's death as it leaves: that is the SDK's.
    with contextlib.suppress(Exception):
        serve(jobs_repo.path, submit)
    assert "supervisor" in seen  # the session got as far as the kill
    assert not _alive(seen["server"])
    assert _alive(seen["supervisor"])
    gate.touch()

    async def harvest(client: ClientSession) -> Any:
        finished = await until_finished(client, seen["job"])
        return finished, answer(await client.call_tool("job_result", {"job_id": seen["job"]}))

    [(finished, result)] = serve(jobs_repo.path, harvest)
    assert finished["state"] == "done" and result["files_changed_git"]
