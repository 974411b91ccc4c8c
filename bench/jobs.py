"""Benchmark of the background-job runtime: queue throughput and hand-off, as ratios.

Same conventions as bench/bench.py: a wheel of the checkout installed into a fresh venv
(bench/install.py), every row compared with a baseline measured in the same run (interleaved,
the order flipping each repetition), medians and minimums, one Markdown table on stdout
(progress on stderr).

    python bench/jobs.py                     # full run: 30 jobs, 3 slots, 3 pairs
    python bench/jobs.py --quick             # smoke run: 9 jobs, 1 pair
    python bench/jobs.py --before REV        # also the per-job cost of REV, side by side

The measuring runs inside the installed venv (this script again, `--inner`): jobs are
submitted in-process with that install's `job run` use case, so its supervisors start as a
user's do. The agent is a fake that answers at once (one result line; a Python start with
-S -I). The baselines run that same agent with no runtime around it: a bare pool of 3 threads
(throughput) and a bare loop (hand-off), so the ratios show what the runtime adds per job.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from install import CHECKOUT, Install, build
from timing import alternate

import bench
from bench import Row, table

SLOTS = 3
THROUGHPUT_TARGET = 1.8  # × the ideal (issue 13)
PER_JOB_TARGET = 0.5  # × the per-job cost of --before REV, measured side by side

AGENT = """\
import json, os, sys, time
def note(kind):
    fd = os.open(os.environ["BENCH_AGENT_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, f"{kind} {time.time():.6f} {os.getpid()}\\n".encode())
    os.close(fd)
note("start")
if sys.argv[1:] == ["--version"]:
    print("bench-agent 1.0")
else:
    print(json.dumps({"type": "result", "status": "SUCCESS", "response": "ok",
        "structured_output": {"summary": "ok", "files_changed": [], "tests_passed": True},
        "conversation_id": "c", "num_turns": 1, "usage": {"input_tokens": 1, "output_tokens": 1}}),
        flush=True)
note("end")
"""


@dataclass(frozen=True)
class Plan:
    jobs: int  # jobs in the throughput row
    chain: int  # jobs in the hand-off row (one slot)
    reps: int  # interleaved pairs per row
    warmup: int


FULL = Plan(jobs=30, chain=12, reps=3, warmup=1)
QUICK = Plan(jobs=9, chain=5, reps=1, warmup=0)


def progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


# ---- inside the installed venv ---------------------------------------------------------


def sealed_env(root: Path, inst: Install) -> dict[str, str]:
    """bench.py's sealed environment for this install, plus the fake agent first on PATH (this
    process too: the in-process use cases and the supervisors they spawn)."""
    env = inst.environ(bench.sealed_env(root))
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (root / "agent.py").write_text(AGENT)
    agy = bin_dir / "agy"
    agy.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S -I "{root / "agent.py"}" "$@"\n')
    agy.chmod(0o755)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["BENCH_AGENT_LOG"] = str(root / "agent.log")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    bench.seal_this_process(env, root)
    return env


def new_repo(root: Path, name: str, slots: int) -> Any:
    from gitstate.storage.layout import discover

    path = root / name
    path.mkdir()
    for args in (
        ("init", "-q", "-b", "main"),
        ("commit", "-q", "--allow-empty", "-m", "first"),
        ("config", "agy.maxConcurrent", str(slots)),
    ):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    layout = discover(path)
    assert layout is not None
    return layout


def seed(worktree: Path, ops: Any, message: str) -> None:
    """The seeder `job run` is handed (as the CLI's): the state core's patch."""
    from gitstate.usecases.state import patch as patch_uc
    from gitstate.usecases.workspace import Workspace

    patch_uc.patch(Workspace.open(worktree), ops, message=message)


def agent_argv() -> list[str]:
    return ["agy", "-p", "ok", "--output-format", "stream-json"]


def agent_log() -> list[tuple[str, float, int]]:
    path = Path(os.environ["BENCH_AGENT_LOG"])
    rows = []
    for line in path.read_text().splitlines():
        kind, stamp, pid = line.split()
        rows.append((kind, float(stamp), int(pid)))
    path.unlink()
    return rows


def handoffs(log: list[tuple[str, float, int]]) -> list[float]:
    """Each agent's start minus the end of the agent before it (one slot: a strict chain)."""
    starts = sorted(t for kind, t, _ in log if kind == "start")
    ends = sorted(t for kind, t, _ in log if kind == "end")
    return [start - end for start, end in zip(starts[1:], ends[:-1], strict=True)]


def cpu_now() -> float:
    """CPU seconds of this process and of every child it has reaped (and theirs)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def reap_all() -> None:
    """Wait for every child still running (the detached supervisors are ours too), so their
    CPU is counted. The Popen objects they were started with take ECHILD as an exit."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


class Runs:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        self.submit_times: list[float] = []
        self.slot_handoffs: list[float] = []
        self.cpu: dict[str, list[float]] = {"runtime": [], "bare": []}  # per job

    def drop_warmup(self, start: int, warmup: int) -> None:
        """Forget the CPU of the warm-up pairs of the row whose samples begin at `start`."""
        for kind, values in self.cpu.items():
            self.cpu[kind] = values[:start] + values[start + warmup :]

    def runtime(self, jobs: int, slots: int) -> tuple[float, list[tuple[str, float, int]]]:
        """Submit `jobs` jobs (in-process `job run`), wait for all; wall from first submit."""
        from gitstate.jobs.usecases import control, submit

        self.count += 1
        layout = new_repo(self.root, f"repo-{self.count}", slots)
        cpu = cpu_now()
        began = time.perf_counter()
        ids = []
        for n in range(jobs):
            t = time.perf_counter()
            ids.append(submit.run(layout, f"job {n}", seed=seed).meta["id"])
            self.submit_times.append(time.perf_counter() - t)
        watched = control.watch(layout, ids, interval=60.0, timeout=600.0)
        wall = time.perf_counter() - began
        reap_all()
        self.cpu["runtime"].append((cpu_now() - cpu) / jobs)
        bad = [r for r in watched.rows if r["state"] != "done"]
        if watched.timed_out or bad:
            logs = [
                (layout.commondir / "agy" / "jobs" / r["job_id"] / "stderr.log").read_text()[-2000:]
                for r in bad[:2]
            ]
            raise SystemExit(f"jobs did not finish: {bad[:2]}; their stderr.log: {logs}")
        if slots == 1:
            metas = sorted((control.status(layout, i) for i in ids), key=lambda m: m["started_at"])
            for before, after in itertools.pairwise(metas):
                gap = _seconds(after["started_at"]) - _seconds(before["finished_at"])
                self.slot_handoffs.append(gap)
        return wall, agent_log()

    def bare(self, jobs: int, slots: int) -> tuple[float, list[tuple[str, float, int]]]:
        """The same agent runs with nothing around them: a pool of `slots` threads."""
        pending = list(range(jobs))
        lock = threading.Lock()
        cwd = Path(os.environ["HOME"])

        def worker() -> None:
            while True:
                with lock:
                    if not pending:
                        return
                    pending.pop()
                subprocess.run(agent_argv(), cwd=cwd, capture_output=True, check=True)

        cpu = cpu_now()
        began = time.perf_counter()
        threads = [threading.Thread(target=worker) for _ in range(slots)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
        self.cpu["bare"].append((cpu_now() - cpu) / jobs)
        return wall, agent_log()


def _seconds(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()


def cli_samples(root: Path, inst: Install, env: dict[str, str], reps: int) -> dict[str, Any]:
    """`git agy-state job run` as a user calls it vs `python -c "import pygit2"`, both from
    the installed venv."""
    from gitstate.jobs.usecases import control

    layout = new_repo(root, "repo-cli", 1)
    cwd = layout.workdir
    calls = itertools.count()

    def timed(argv: list[str]) -> float:
        t = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True)
        return time.perf_counter() - t

    ours, base = alternate(
        lambda: timed([str(inst.python), "-c", "import pygit2"]),
        lambda: timed([*inst.cli, "job", "run", "--text", f"cli {next(calls)}"]),
        reps,
    )
    ids = [m["id"] for m in control.list_jobs(layout)]
    control.watch(layout, ids, interval=60.0, timeout=600.0)
    agent_log()
    return {"cli": ours, "pygit2": base}


def inner(plan: Plan, out: Path) -> int:
    """Measure with the install this interpreter belongs to; the samples go to `out` (JSON)."""
    inst = Install(Path(sys.prefix), Path())
    with tempfile.TemporaryDirectory(prefix="agy-bench-jobs-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        env = sealed_env(root, inst)
        runs = Runs(root)
        progress(f"{sys.prefix}: warm-up, one job")
        runs.runtime(1, 1)
        runs.submit_times.clear()
        runs.cpu = {"runtime": [], "bare": []}

        progress(f"row 1: {plan.jobs} jobs, {SLOTS} slots, {plan.reps} pair(s)")
        kept = len(runs.cpu["runtime"])
        subj, base = alternate(
            lambda: runs.bare(plan.jobs, SLOTS),
            lambda: runs.runtime(plan.jobs, SLOTS),
            plan.reps,
            plan.warmup,
        )
        runs.drop_warmup(kept, plan.warmup)
        samples: dict[str, Any] = {
            "walls": [w for w, _ in subj],
            "ideal": [w for w, _ in base],
            "submit": list(runs.submit_times),
        }
        progress(f"row 2: hand-off, {plan.chain} jobs in one slot, {plan.reps} pair(s)")
        runs.slot_handoffs.clear()
        kept = len(runs.cpu["runtime"])
        subj, base = alternate(
            lambda: runs.bare(plan.chain, 1),
            lambda: runs.runtime(plan.chain, 1),
            plan.reps,
            plan.warmup,
        )
        runs.drop_warmup(kept, plan.warmup)
        samples["handoff"] = [g for _, log in subj for g in handoffs(log)]
        samples["handoff_bare"] = [g for _, log in base for g in handoffs(log)]
        samples["slot"] = list(runs.slot_handoffs)
        # Rows 1 and 2 alike: CPU per job with the runtime, and the bare agent's own.
        samples["cpu_runtime"] = runs.cpu["runtime"]
        samples["cpu_bare"] = runs.cpu["bare"]
        progress("info: `job run` as a CLI call")
        samples.update(cli_samples(root, inst, env, max(3, plan.reps * 3)))
    out.write_text(json.dumps(samples))
    return 0


# ---- the report -------------------------------------------------------------------------


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.1f} ms (min {min(values) * 1e3:.1f})"


def per_job(samples: dict[str, Any], plan: Plan) -> list[float]:
    """What the runtime adds per job and slot: (wall − ideal) / (jobs / slots), pair by pair."""
    rounds = plan.jobs / SLOTS
    return [(w - b) / rounds for w, b in zip(samples["walls"], samples["ideal"], strict=True)]


def cpu_added(samples: dict[str, Any]) -> list[float]:
    """Per run pair: the runtime's CPU per job minus the bare agent's CPU per run."""
    return [r - b for r, b in zip(samples["cpu_runtime"], samples["cpu_bare"], strict=True)]


def ratio(ours: list[float], base: list[float]) -> tuple[float, float]:
    return statistics.median(ours) / statistics.median(base), min(ours) / min(base)


def rows_of(now: dict[str, Any], before: dict[str, Any] | None, plan: Plan) -> list[Row]:
    walls, ideal = now["walls"], now["ideal"]
    med, low = ratio(walls, ideal)
    rows = [
        Row(
            f"{plan.jobs} jobs of an agent that answers at once, maxConcurrent {SLOTS}: "
            "wall from the first `run` to the last job done",
            ms(walls),
            f"ideal ({plan.jobs} agent runs / {SLOTS}, bare pool): {ms(ideal)}",
            med,
            THROUGHPUT_TARGET,
            min_ratio=low,
        )
    ]
    cost = per_job(now, plan)
    if before is not None:
        was = per_job(before, plan)
        med, low = ratio(cost, was)
        rows.append(
            Row(
                "runtime cost per job and slot, (wall − ideal) / (jobs / slots): this checkout "
                "vs --before, run by run in turn",
                ms(cost),
                f"{before['label']}: {ms(was)}",
                med,
                PER_JOB_TARGET,
                min_ratio=low,
            )
        )
    else:
        rows.append(
            Row(
                "runtime cost per job and slot: (wall − ideal) / (jobs / slots), row 1 "
                f"(target ≤ {PER_JOB_TARGET:g}× a side-by-side --before REV)",
                ms(cost),
                "—",
                None,
                info=True,
            )
        )
    added = cpu_added(now)
    if before is not None:
        was_added = cpu_added(before)
        med, low = ratio(added, was_added)
        rows.append(
            Row(
                "CPU the runtime adds per job (submission, supervisor, its git; the agent's own "
                "CPU taken out): this checkout vs --before",
                ms(added),
                f"{before['label']}: {ms(was_added)}",
                med,
                info=True,
                min_ratio=low,
            )
        )
    else:
        rows.append(
            Row(
                "CPU the runtime adds per job (submission, supervisor, its git; the agent's own "
                "CPU taken out)",
                ms(added),
                f"the bare agent's own CPU per run: {ms(now['cpu_bare'])}",
                statistics.median(added) / statistics.median(now["cpu_bare"]),
                info=True,
            )
        )
    med, low = ratio(now["handoff"], now["handoff_bare"])
    rows.append(
        Row(
            "hand-off: one job's agent exits → the next job's agent starts (median)",
            ms(now["handoff"]),
            f"bare loop, agent exit → next agent start: {ms(now['handoff_bare'])}",
            med,
            min_ratio=low,
        )
    )
    rows.append(
        Row(
            "slot hand-off: finished_at of one job → started_at of the next (meta.json)",
            ms(now["slot"]),
            "—",
            None,
            info=True,
        )
    )
    rows.append(
        Row(
            "`job run` in-process (worktree, seeded state chain, spawn), row 1",
            ms(now["submit"]),
            "—",
            None,
            info=True,
        )
    )
    med, low = ratio(now["cli"], now["pygit2"])
    rows.append(
        Row(
            "`job run` CLI call (returns before the job starts)",
            ms(now["cli"]),
            '`python -c "import pygit2"`: ' + ms(now["pygit2"]),
            med,
            info=True,
            min_ratio=low,
        )
    )
    return rows


# ---- outside: build, run inside, report ------------------------------------------------


def checkout_at(root: Path, rev: str) -> Path:
    """A copy of this repository's files at `rev` (committed code only)."""
    path = root / "before-src"
    for argv in (
        ["git", "clone", "-q", "--no-checkout", str(CHECKOUT), str(path)],
        ["git", "-C", str(path), "checkout", "-q", "--detach", rev],
    ):
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"--before {rev}: {proc.stderr.strip()}")
    return path


def run_inside(inst: Install, root: Path, quick: bool, tag: str) -> dict[str, Any]:
    out = root / f"samples-{tag}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    argv = [str(inst.python), str(Path(__file__).resolve()), "--inner", str(out)]
    subprocess.run([*argv, *(["--quick"] if quick else [])], env=env, check=True)
    samples: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return samples


def merged(parts: list[dict[str, Any]], label: str) -> dict[str, Any]:
    out: dict[str, Any] = {"label": label}
    for part in parts:
        for key, values in part.items():
            out.setdefault(key, []).extend(values)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: fewer, smaller rows")
    parser.add_argument(
        "--before",
        metavar="REV",
        help="also install REV (a commit of this repository) and compare its per-job cost, "
        "the two installs measured in turn",
    )
    parser.add_argument("--inner", metavar="OUT", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.inner is not None:
        return inner(plan, args.inner)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agy-bench-jobs-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        (root / "now").mkdir()
        now = build(root / "now")
        measure_now: Callable[[], dict[str, Any]] = lambda: run_inside(  # noqa: E731
            now, root, args.quick, "now"
        )
        before_parts: list[dict[str, Any]] = []
        if args.before:
            (root / "before").mkdir()
            was = build(root / "before", source=checkout_at(root, args.before))
            subj, base = alternate(
                lambda: run_inside(was, root, args.quick, "before"),
                measure_now,
                1 if args.quick else 2,
                0,
            )
            now_parts, before_parts = subj, base
        else:
            now_parts = [measure_now()]
    before = merged(before_parts, f"--before {args.before}") if args.before else None
    print(table(rows_of(merged(now_parts, "now"), before, plan)))
    print()
    print(machine_line(plan, "--quick" if args.quick else "full", time.perf_counter() - began))
    return 0


def machine_line(plan: Plan, mode: str, elapsed: float) -> str:
    import pygit2

    try:
        load = ", load avg " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = ""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    pidfd = "pidfds" if hasattr(os, "pidfd_open") else "no pidfds"
    return (
        f"Machine: Python {platform.python_version()}, pygit2 {getattr(pygit2, '__version__', '?')}"
        f" / libgit2 "
        f"{pygit2.LIBGIT2_VERSION}, {git_version.strip()}, {os.cpu_count()} CPUs ({usable} "
        f"usable){load}, {platform.system()} {platform.release()} ({pidfd}). Run: {mode}, "
        f"{plan.reps} interleaved pair(s) per row (+{plan.warmup} warm-up), a wheel install in "
        f"a fresh venv, {elapsed:.0f} s."
    )


if __name__ == "__main__":
    sys.exit(main())
