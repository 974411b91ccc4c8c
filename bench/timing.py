"""How the benchmarks time things: one process or call, and two of them alternated.

Every row of bench.py, jobs.py, memory.py and secret_scan.py compares a subject with a baseline
measured in the same run: `alternate` runs the two in turn, flipping the order every repetition
(so drift and cache warmth fall on both sides alike) and discarding the first warm-up pairs.
Standard library only.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

WARMUP = 2  # pairs run first and discarded: bytecode cache, page cache, branch predictors

S = TypeVar("S")


def alternate(
    baseline: Callable[[], S], subject: Callable[[], S], reps: int, warmup: int = WARMUP
) -> tuple[list[S], list[S]]:
    """Run baseline and subject in turn, `warmup + reps` pairs, the order flipping every pair;
    returns the (subject, baseline) samples of the last `reps` pairs."""
    subj: list[S] = []
    base: list[S] = []
    for i in range(warmup + reps):
        if i % 2 == 0:
            b, s = baseline(), subject()
        else:
            s, b = subject(), baseline()
        if i >= warmup:
            subj.append(s)
            base.append(b)
    return subj, base


Sample = tuple[float, float | None]  # (wall seconds, CPU seconds of the child or None)


def timed_run(argv: list[str], cwd: Path, env: dict[str, str], stdin: Path | None = None) -> Sample:
    """Wall time of one process (stdout discarded), and the CPU time it used; a failure ends
    the benchmark with the process's stderr. `stdin` is a file fed to the process."""
    with tempfile.TemporaryFile() as err, open(stdin or os.devnull, "rb") as feed:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=feed, stdout=subprocess.DEVNULL,
            stderr=err,
        )  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if proc.returncode != 0:
            err.seek(0)
            message = err.read().decode(errors="replace")
            raise SystemExit(
                f"{' '.join(argv)} failed in {cwd} (exit {proc.returncode}):\n{message}"
            )
    return elapsed, usage.ru_utime + usage.ru_stime


def in_process(func: Callable[[], object]) -> Sample:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start, None


@dataclass(frozen=True)
class Timing:
    samples: tuple[float, ...]  # wall seconds
    cpu: tuple[float, ...] = ()  # CPU seconds of subprocesses; empty for in-process timings

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu else None


def timing(samples: list[Sample]) -> Timing:
    cpu = [c for _, c in samples if c is not None]
    return Timing(tuple(w for w, _ in samples), tuple(cpu) if len(cpu) == len(samples) else ())


def interleaved(
    baseline: Callable[[], Sample], subject: Callable[[], Sample], reps: int
) -> tuple[Timing, Timing]:
    """`alternate` the two; returns the (subject, baseline) timings."""
    subj, base = alternate(baseline, subject, reps)
    return timing(subj), timing(base)
