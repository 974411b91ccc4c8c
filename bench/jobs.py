"""Benchmark of the background-job runtime: queue throughput and hand-off, as ratios.

Same conventions as bench/bench.py: every row compares the subject with a baseline measured in
the same run (interleaved, the order flipping each repetition), prints medians and minimums,
and one Markdown table goes to stdout (progress to stderr).

    python bench/jobs.py            # full run: 30 jobs, 3 slots, 3 pairs (about a minute)
    python bench/jobs.py --quick    # smoke run: 9 jobs, 1 pair

The agent is a fake that answers at once (one result line; a Python start with -S -I). The
baselines run that same agent with no runtime around it: a bare pool of 3 threads (throughput)
and a bare loop (hand-off), so the ratios show what the runtime adds per job.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2
from timing import alternate

import bench
from gitstate.jobs.usecases import control, submit
from gitstate.storage.layout import Layout, discover

CLI = [sys.executable, "-m", "gitstate"]
SLOTS = 3

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


# ---- environment ------------------------------------------------------------------------


def sealed_env(root: Path) -> dict[str, str]:
    """bench.py's sealed environment, plus the fake agent first on PATH (this process too)."""
    env = bench.sealed_env(root)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (root / "agent.py").write_text(AGENT)
    agy = bin_dir / "agy"
    agy.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S -I "{root / "agent.py"}" "$@"\n')
    agy.chmod(0o755)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["BENCH_AGENT_LOG"] = str(root / "agent.log")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    bench.seal_this_process(env, root)  # the in-process use cases and the supervisors they spawn
    return env


def new_repo(root: Path, name: str, slots: int) -> Layout:
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


# ---- subjects and baselines -------------------------------------------------------------


class Runs:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        self.submit_times: list[float] = []
        self.slot_handoffs: list[float] = []

    def runtime(self, jobs: int, slots: int) -> tuple[float, list[tuple[str, float, int]]]:
        """Submit `jobs` jobs (in-process `job run`), wait for all; wall from first submit."""
        self.count += 1
        layout = new_repo(self.root, f"repo-{self.count}", slots)
        began = time.perf_counter()
        ids = []
        for n in range(jobs):
            t = time.perf_counter()
            ids.append(submit.run(layout, f"job {n}").meta["id"])
            self.submit_times.append(time.perf_counter() - t)
        watched = control.watch(layout, ids, interval=60.0, timeout=600.0)
        wall = time.perf_counter() - began
        bad = [r for r in watched.rows if r["state"] != "done"]
        if watched.timed_out or bad:
            raise SystemExit(f"jobs did not finish: {bad[:2]}")
        if slots == 1:
            metas = sorted((control.status(layout, i) for i in ids), key=lambda m: m["started_at"])
            for before, after in itertools.pairwise(metas):
                gap = _seconds(after["started_at"]) - _seconds(before["finished_at"])
                self.slot_handoffs.append(gap)
        return wall, agent_log()

    @staticmethod
    def bare(jobs: int, slots: int) -> tuple[float, list[tuple[str, float, int]]]:
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

        began = time.perf_counter()
        threads = [threading.Thread(target=worker) for _ in range(slots)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - began, agent_log()


def _seconds(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()


# ---- report -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    measure: str
    subject: str
    baseline: str
    ratio: float | None
    min_ratio: float | None = None
    info: bool = False

    def cells(self) -> list[str]:
        ratio = "—" if self.ratio is None else f"{self.ratio:.2f}×"
        if self.min_ratio is not None:
            ratio += f" (mins {self.min_ratio:.2f}×)"
        measure = f"(info) {self.measure}" if self.info else self.measure
        return [
            measure,
            self.subject,
            self.baseline,
            ratio,
            "—",
            "info" if self.info else "reported",
        ]


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.1f} ms (min {min(values) * 1e3:.1f})"


def table(rows: list[Row]) -> str:
    header = ["measure", "subject", "baseline", "ratio", "target", "verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def cli_run_rows(root: Path, env: dict[str, str], reps: int) -> Row:
    """`git agy-state job run` as a user calls it vs `python -c "import pygit2"`."""
    layout = new_repo(root, "repo-cli", 1)
    cwd = layout.workdir
    assert cwd is not None
    calls = itertools.count()

    def timed(argv: list[str]) -> float:
        t = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True)
        return time.perf_counter() - t

    ours, base = alternate(
        lambda: timed([sys.executable, "-c", "import pygit2"]),
        lambda: timed([*CLI, "job", "run", "--text", f"cli {next(calls)}"]),
        reps,
    )
    ids = [m["id"] for m in control.list_jobs(layout)]
    control.watch(layout, ids, interval=60.0, timeout=600.0)
    agent_log()
    return Row(
        "`job run` CLI call (returns before the job starts)",
        ms(ours),
        '`python -c "import pygit2"`: ' + ms(base),
        statistics.median(ours) / statistics.median(base),
        min(ours) / min(base),
        info=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: fewer, smaller rows")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agy-bench-jobs-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        env = sealed_env(root)
        runs = Runs(root)
        progress("warm-up: one job (fills the bytecode cache)")
        runs.runtime(1, 1)
        runs.submit_times.clear()

        progress(f"row 1: {plan.jobs} jobs, {SLOTS} slots, {plan.reps} pair(s)")
        subj, base = alternate(
            lambda: Runs.bare(plan.jobs, SLOTS),
            lambda: runs.runtime(plan.jobs, SLOTS),
            plan.reps,
            plan.warmup,
        )
        walls, ideal = [w for w, _ in subj], [w for w, _ in base]
        per_job = [(w - b) / (plan.jobs / SLOTS) for w, b in zip(walls, ideal, strict=True)]
        rows = [
            Row(
                f"{plan.jobs} jobs of an agent that answers at once, maxConcurrent {SLOTS}: "
                "wall from the first `run` to the last job done",
                ms(walls),
                f"ideal ({plan.jobs} agent runs / {SLOTS}, bare pool): {ms(ideal)}",
                statistics.median(walls) / statistics.median(ideal),
                min(walls) / min(ideal),
            )
        ]

        progress(f"row 2: hand-off, {plan.chain} jobs in one slot, {plan.reps} pair(s)")
        runs.slot_handoffs.clear()
        subj, base = alternate(
            lambda: Runs.bare(plan.chain, 1),
            lambda: runs.runtime(plan.chain, 1),
            plan.reps,
            plan.warmup,
        )
        ours = [g for _, log in subj for g in handoffs(log)]
        bare = [g for _, log in base for g in handoffs(log)]
        rows.append(
            Row(
                "hand-off: one job's agent exits → the next job's agent starts (median)",
                ms(ours),
                f"bare loop, agent exit → next agent start: {ms(bare)}",
                statistics.median(ours) / statistics.median(bare),
                min(ours) / min(bare),
            )
        )
        rows.append(
            Row(
                "slot hand-off: finished_at of one job → started_at of the next (meta.json)",
                ms(runs.slot_handoffs),
                "—",
                None,
                info=True,
            )
        )
        rows.append(
            Row(
                "runtime cost per job and slot: (wall − ideal) / (jobs / slots), row 1",
                ms(per_job),
                "—",
                None,
                info=True,
            )
        )
        rows.append(
            Row(
                "`job run` in-process (worktree, seeded state chain, spawn), row 1",
                ms(runs.submit_times),
                "—",
                None,
                info=True,
            )
        )
        progress("info: `job run` as a CLI call")
        rows.append(cli_run_rows(root, env, max(3, plan.reps * 3)))
    print(table(rows))
    print()
    print(machine_line(plan, "--quick" if args.quick else "full", time.perf_counter() - began))
    return 0


def machine_line(plan: Plan, mode: str, elapsed: float) -> str:
    try:
        load = ", load avg " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = ""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    pidfd = "pidfds" if hasattr(os, "pidfd_open") else "no pidfds"
    return (
        f"Machine: Python {platform.python_version()}, pygit2 {pygit2.__version__} / libgit2 "
        f"{pygit2.LIBGIT2_VERSION}, {git_version.strip()}, {os.cpu_count()} CPUs ({usable} "
        f"usable){load}, {platform.system()} {platform.release()} ({pidfd}). Run: {mode}, "
        f"{plan.reps} interleaved pair(s) per row (+{plan.warmup} warm-up), {elapsed:.0f} s."
    )


if __name__ == "__main__":
    sys.exit(main())
