"""When `job run` must not, or cannot, leave a fork of itself as the supervisor, a fresh
`python -I -m gitstate.jobs.usecases.supervise` supervises instead (jobs/usecases/launch.py;
docs/jobs.md, "Process model"): a submitter that runs more than one thread spawns it, and a fork
that cannot write its own command line over the caller's execs it. Each case is a real `job run`
process (a small driver that starts real threads, then the CLI's own entry point), a real
condition, and a real job that runs to its result.

The retitle fails for real where /proc is mounted read-only: /proc/self/mem then cannot be opened
for writing (EROFS). A user and mount namespace of the submitter's own (`unshare`) makes that
mount without privileges; the test is skipped where user namespaces are not allowed. The other
ways _retitle can fail (a command line of no length, a /proc/self/stat it cannot parse, a
read-back that differs) have no condition a test can create from outside the process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import Repo
from jobs_support import FAKE, Agents, agents, finish, jobs_repo, meta, run_json
from support import wait_until

from gitstate.jobs.usecases import launch

__all__ = ["agents", "jobs_repo"]  # fixtures

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and fork")

SECRET = "plan-text-7d2e"  # on the submitter's command line: never on the supervisor's
PLAN = f"Add a file\n{SECRET}"

# argv: number of extra threads, then the CLI's arguments. The threads wait for the end of the
# process, so they are alive while `job run` starts the supervisor.
DRIVER = textwrap.dedent(
    """
    import sys, threading
    extra = int(sys.argv.pop(1))
    hold = threading.Event()
    for n in range(extra):
        threading.Thread(target=hold.wait, name=f"worker {n}", daemon=True).start()
    assert threading.active_count() == extra + 1
    from gitstate.entry import main
    main()
    """
)

# A read-only /proc for the command behind it, in a mount namespace of its own.
READ_ONLY_PROC = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c"]
REMOUNT = 'mount -o remount,bind,ro /proc && exec "$0" "$@"'


def gate_agents(agents: Agents, gate: Path) -> None:
    """The agent CLIs wait until `gate` exists (a minute at most), so the supervisor is alive
    for as long as the test looks at it, with no sleep to guess."""
    for flavour in ("agy", "claude"):
        script = agents.bin / flavour
        script.write_text(
            "#!/bin/sh\n"
            "i=0\n"
            f'while [ ! -e "{gate}" ] && [ "$i" -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done\n'
            f'exec "{sys.executable}" "{FAKE}" {flavour} "$@"\n'
        )


def _cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        return [word.decode() for word in handle.read().split(b"\0") if word]


def _submit(repo: Repo, *prefix: str, threads: int = 0) -> str:
    """`job run --text PLAN` by the driver (behind `prefix`); the job's id once it has exited."""
    proc = subprocess.run(
        [*prefix, sys.executable, "-c", DRIVER, str(threads), "job", "run", "--json",
         "--text", PLAN],
        cwd=repo.path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    job = json.loads(proc.stdout)["job_id"]
    assert isinstance(job, str)
    return job


def _supervisor(repo: Repo, job: str) -> int:
    """The live supervisor's pid, once its agent has started (it waits at the gate)."""
    wait_until(lambda: meta(repo, job).get("pid_agent"), what="the agent")
    pid = meta(repo, job)["pid_supervisor"]
    assert isinstance(pid, int) and os.path.exists(f"/proc/{pid}")
    return pid


def _is_fresh_interpreter(pid: int, job: str) -> None:
    argv = _cmdline(pid)
    assert argv[:4] == [sys.executable, "-I", "-m", launch.SUPERVISOR_MODULE], argv
    assert argv[argv.index("--job") + 1] == job
    assert os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(sys.executable)
    assert os.getsid(pid) == pid and os.getpgid(pid) == pid  # its own session and group
    assert SECRET not in " ".join(argv)


def _runs_to_its_result(repo: Repo, cli: object, job: str, gate: Path) -> None:
    gate.touch()
    [row] = finish(cli, job)
    assert row["state"] == "done"
    result = run_json(cli, "job", "result", job)
    base = repo.git("rev-parse", "HEAD").strip()
    changed = repo.git("diff", "--name-only", f"{base}..{row['branch']}").split()
    assert changed and result["files_changed_git"] == changed


def _read_only_proc_works() -> str | None:
    """Why the read-only /proc cannot be made here, or None when it can: in it, a process of
    one thread may fork (launch.can_fork) and cannot retitle itself (launch._retitle, the real
    functions, run there), so a fresh interpreter can only come from the fork's exec."""
    if shutil.which("unshare") is None:
        return "no unshare"
    probe = (
        "from gitstate.jobs.usecases import launch; print(launch.can_fork(), launch._retitle('x'))"
    )
    proc = subprocess.run(
        [*READ_ONLY_PROC, REMOUNT, sys.executable, "-c", probe],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    if proc.returncode != 0:
        return f"no read-only /proc in a user namespace here: {proc.stderr.strip()[-200:]}"
    assert proc.stdout.split() == ["True", "False"], proc.stdout
    return None


def test_a_one_thread_submitter_leaves_a_fork(
    jobs_repo: Repo, agents: Agents, cli: object, tmp_path: Path
) -> None:
    """The control of the two below: the same driver, no extra thread, /proc as it is."""
    gate = tmp_path / "gate"
    gate_agents(agents, gate)
    job = _submit(jobs_repo)
    pid = _supervisor(jobs_repo, job)
    assert _cmdline(pid) == [f"agy-state supervisor {job} round 1"]
    _runs_to_its_result(jobs_repo, cli, job, gate)


def test_a_submitter_with_threads_spawns_the_fresh_interpreter(
    jobs_repo: Repo, agents: Agents, cli: object, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate_agents(agents, gate)
    job = _submit(jobs_repo, threads=2)
    pid = _supervisor(jobs_repo, job)
    _is_fresh_interpreter(pid, job)
    _runs_to_its_result(jobs_repo, cli, job, gate)


def test_a_fork_that_cannot_retitle_itself_execs_the_fresh_interpreter(
    jobs_repo: Repo, agents: Agents, cli: object, tmp_path: Path
) -> None:
    why = _read_only_proc_works()
    if why is not None:
        pytest.skip(why)
    gate = tmp_path / "gate"
    gate_agents(agents, gate)
    job = _submit(jobs_repo, *READ_ONLY_PROC, REMOUNT)
    pid = _supervisor(jobs_repo, job)
    _is_fresh_interpreter(pid, job)
    # The fork became it (same process, exec'd): its stderr.log holds no supervisor error.
    stderr = jobs_repo.path / ".git" / "agy" / "jobs" / job / "stderr.log"
    assert "supervisor:" not in stderr.read_text()
    _runs_to_its_result(jobs_repo, cli, job, gate)
