"""How a supervisor starts (jobs/usecases/launch.py): a fork of a one-thread submitter made to
look like a fresh interpreter, or the fresh `python -I -m …supervise` itself (docs/jobs.md,
"Cost per job"). Real jobs, a real fake agent, /proc read for what the supervisor holds."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, meta, run_json, submit
from support import wait_until
from test_hijack import plant

from gitstate.jobs.usecases import launch

__all__ = ["agents", "jobs_repo"]  # fixtures


def _cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        return [word.decode() for word in handle.read().split(b"\0") if word]


def _targets(pid: int) -> dict[int, str]:
    found = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
    return found


def _running_supervisor(repo: Repo, job: str) -> int:
    wait_until(lambda: meta(repo, job).get("pid_agent"), what="the agent")
    pid = meta(repo, job)["pid_supervisor"]
    assert isinstance(pid, int)
    return pid


@pytest.fixture
def second_thread() -> Iterator[threading.Thread]:
    """This process runs two threads while the test submits: no fork."""
    done = threading.Event()
    thread = threading.Thread(target=done.wait, name="a server's worker")
    thread.start()
    yield thread
    done.set()
    thread.join()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and fork")
class TestForked:
    def test_it_holds_nothing_of_the_submitters(
        self, jobs_repo: Repo, cli: Any, tmp_path: Path
    ) -> None:
        assert launch.can_fork()
        reader, writer = os.pipe()  # as `$(git agy-state job run)`: the shell reads to the end
        held = open(tmp_path / "held.txt", "w")  # noqa: SIM115 - open across the submission
        try:
            job = submit(cli, "@fake sleep 30")["job_id"]
            pid = _running_supervisor(jobs_repo, job)
            # A fork, renamed: the title is cut to the room this process's command line had
            # (launch.py:_retitle), which depends on how the suite was started.
            with open("/proc/self/cmdline", "rb") as handle:
                room = len(handle.read())
            title = f"agy-state supervisor {job} round 1".encode()[: room - 1].decode()
            assert _cmdline(pid) == [title]
            assert os.getsid(pid) == pid and os.getpgid(pid) == pid  # its own session
            assert os.readlink(f"/proc/{pid}/cwd") == str(jobs_repo.path)
            targets = _targets(pid)
            folder = jobs_repo.path / ".git" / "agy" / "jobs" / job
            assert targets[0] == targets[1] == os.devnull
            assert targets[2] == str(folder / "stderr.log")
            assert str(folder / "supervisor.lock") in targets.values()
            ours = _targets(os.getpid())
            assert ours[writer] not in targets.values()
            assert str(tmp_path / "held.txt") not in targets.values()
            os.close(writer)
            writer = -1
            readable, _, _ = select.select([reader], [], [], 5.0)
            assert readable and os.read(reader, 1) == b""  # the end of file: nobody else holds it
        finally:
            held.close()
            os.close(reader)
            if writer >= 0:
                os.close(writer)
        run_json(cli, "job", "cancel", job)
        [row] = finish(cli, job)
        assert row["state"] == "cancelled"

    def test_a_plan_given_as_text_is_not_left_in_the_process_list(
        self, jobs_repo: Repo, agents: Agents
    ) -> None:
        """`job run --text PLAN` puts the plan on the command line, which every local user can
        read in `ps`; the forked supervisor (a copy of that process) shows its own instead."""
        secret = "the-plan-text-3f9c"
        proc = subprocess.run(
            [sys.executable, "-m", "gitstate", "job", "run", "--json", "--text",
             f"@fake sleep 30\n{secret}"],
            cwd=jobs_repo.path, capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        job = json.loads(proc.stdout)["job_id"]
        pid = _running_supervisor(jobs_repo, job)
        shown = " ".join(_cmdline(pid))
        assert shown == f"agy-state supervisor {job} round 1" and secret not in shown

    def test_a_round_in_a_packed_repository_reads_its_diff(self, jobs_repo: Repo, cli: Any) -> None:
        """The submitter read HEAD from a pack; libgit2 keeps a pack open and shares it among
        the repositories of a process, so the fork keeps that descriptor (close-on-exec: the
        agent gets none) and its round reads the diff through it."""
        for n in range(3):
            jobs_repo.commit(f"f{n}.txt", f"{n}\n")
        jobs_repo.git("gc", "-q")
        assert list((jobs_repo.path / ".git" / "objects" / "pack").glob("*.pack"))
        waiting = submit(cli, "@fake sleep 30")["job_id"]
        pid = _running_supervisor(jobs_repo, waiting)
        packs = [n for n, target in _targets(pid).items() if target.endswith(".pack")]
        for number in packs:
            with open(f"/proc/{pid}/fdinfo/{number}") as info:
                flags = next(line for line in info if line.startswith("flags:")).split()[1]
            assert int(flags, 8) & os.O_CLOEXEC
        agent = meta(jobs_repo, waiting)["pid_agent"]
        assert not [t for t in _targets(agent).values() if t.endswith(".pack")]
        run_json(cli, "job", "cancel", waiting)
        body = submit(cli)
        [row] = finish(cli, body["job_id"])
        assert row["state"] == "done"
        result = run_json(cli, "job", "result", body["job_id"])
        base = jobs_repo.git("rev-parse", "HEAD").strip()
        expected = jobs_repo.git("diff", "--name-only", f"{base}..{body['branch']}").split()
        assert expected and result["files_changed_git"] == expected
        assert expected[0] in result["diff_stat"]

    def test_exited_supervisors_are_reaped_by_the_next_start(
        self, jobs_repo: Repo, cli: Any
    ) -> None:
        first = submit(cli)["job_id"]
        finish(cli, first)
        pid = meta(jobs_repo, first)["pid_supervisor"]
        assert pid in launch._forked

        def exited() -> bool:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                return handle.read().rsplit(b")", 1)[-1].split()[0] == b"Z"

        if os.path.exists(f"/proc/{pid}"):
            wait_until(exited, what="the supervisor to exit")
        second = submit(cli)["job_id"]
        assert not os.path.exists(f"/proc/{pid}")  # no zombie left behind
        finish(cli, second)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
class TestFresh:
    def test_a_submitter_with_threads_starts_the_isolated_interpreter(
        self, jobs_repo: Repo, cli: Any, second_thread: threading.Thread
    ) -> None:
        assert not launch.can_fork()
        job = submit(cli, "@fake sleep 30")["job_id"]
        pid = _running_supervisor(jobs_repo, job)
        argv = _cmdline(pid)
        assert argv[1:4] == ["-I", "-m", launch.SUPERVISOR_MODULE]
        assert os.getsid(pid) == pid
        run_json(cli, "job", "cancel", job)
        quick = submit(cli)["job_id"]
        [row] = finish(cli, quick)
        assert row["state"] == "done"

    def test_it_runs_the_installed_tool(
        self,
        jobs_repo: Repo,
        agents: Agents,
        cli: Any,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        second_thread: threading.Thread,
    ) -> None:
        marker = tmp_path / "HIJACKED"
        plant(jobs_repo.path, marker)
        jobs_repo.git("add", "gitstate")
        jobs_repo.git("commit", "-q", "-m", "a branch with a gitstate package")
        plant(tmp_path / "pythonpath", marker)
        monkeypatch.setenv("PYTHONPATH", str(tmp_path / "pythonpath"))
        [row] = finish(cli, submit(cli)["job_id"])
        assert row["state"] == "done"
        assert not marker.exists(), marker.read_text()
