"""Cost of the credential scan (gitstate/secrets.py) on the save path: one Markdown table.

Same conventions as bench/bench.py (whose helpers it uses): every row compares a subject with a
baseline measured in the same run, interleaved, warm-up runs discarded; medians and minimums.
The baseline of every row is a bare interpreter start that imports `re`, the one module the
scan needs, so each ratio reads as "this much of the cheapest Python process".

    python bench/secret_scan.py           # full run: about a minute on 2 cores
    python bench/secret_scan.py --quick   # smoke run: about 15 s

Rows: importing the module; a cold save-path check (import, then scan_changed of a 1.5 KB
STATE.md against its previous version) in a fresh process; a warm scan_changed of that STATE.md
in-process; a warm scan of a 100 KB text of notes, logs, code and CJK prose in-process.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

from install import add_source_option, build
from timing import Sample, in_process, interleaved, timed_run

from bench import (
    Row,
    document_text,
    progress,
    sealed_env,
    table,
    timed_row,
    us,
)
from gitstate import secrets

FULL_REPS, QUICK_REPS = 51, 11
BIG_BYTES = 100_000
# import and cold: a little over a bare interpreter; warm: a hundredth of one for a STATE.md,
# half of one for 100 KB (a long job record).
TARGETS = {"import": 1.3, "cold": 1.4, "state": 0.01, "big": 0.5}

LOG_LINES = [
    "2026-01-02T03:04:{s:02d}Z INFO  pool: connection {n} returned after {ms} ms",
    "2026-01-02T03:04:{s:02d}Z WARN  retry {n}/5: ECONNRESET: Socket hung up at TCP.onStreamRead",
    "commit {sha} merged into main; tests 412 passed, 3 skipped in {ms}.2s",
    "GET /api/v1/items?page={n}&per_page=50 200 {ms}ms request_id={uuid}",
    "    token = self.session.refresh(timeout={n})  # the password field is validated upstream",
    "def check_password(password: str, *, max_tokens: int = {n}) -> bool:",
    "- [x] 把連線池的重試改成指數退避，驗證：npm test tests/retry.test.mjs 全部通過 ({n})",
    "- 關鍵資料：MAX_RETRIES=5, BASE_DELAY=200ms, cache key user:{n}:profile",
    "see https://github.com/acme/web/pull/{n} and /home/dev/.ssh/id_ed25519 (not copied)",
    "image ghcr.io/acme/web@sha256:{sha}{sha_tail}",
]


def big_text(size: int) -> str:
    """Notes, logs, code and CJK prose with no credential in them, about `size` bytes."""
    rng = random.Random(7)
    parts: list[str] = []
    total = 0
    while total < size:
        line = rng.choice(LOG_LINES).format(
            s=rng.randrange(60),
            n=rng.randrange(1, 10_000),
            ms=rng.randrange(1, 900),
            sha="".join(rng.choice("0123456789abcdef") for _ in range(40)),
            sha_tail="".join(rng.choice("0123456789abcdef") for _ in range(24)),
            uuid="-".join(f"{rng.getrandbits(4 * n):0{n}x}" for n in (8, 4, 4, 4, 12)),
        )
        parts.append(line)
        total += len(line.encode()) + 1
    return "\n".join(parts) + "\n"


def report(rows: list[Row]) -> str:
    """bench.table(), with small ratios to four places: a warm scan is a tiny share."""
    lines = table(rows).split("\n")
    for n, row in enumerate(rows, start=2):
        if row.ratio is not None and row.min_ratio is not None and row.ratio < 0.1:
            cells = lines[n].split(" | ")
            cells[3] = f"{row.ratio:.4f}× (mins {row.min_ratio:.4f}×)"
            lines[n] = " | ".join(cells)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    add_source_option(parser)
    args = parser.parse_args(argv)
    reps = QUICK_REPS if args.quick else FULL_REPS
    inproc_reps = reps * 6
    started = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="agy-bench-secrets-") as tmp:
        root = Path(tmp)
        # The subprocesses import the module from the wheel venv.
        inst = build(root, args.source)
        env = inst.environ(sealed_env(root))
        new, old = document_text(1), document_text(0)
        state, previous, big = root / "STATE.md", root / "STATE.old.md", big_text(BIG_BYTES)
        state.write_text(new)
        previous.write_text(old)
        python = [str(inst.python), "-c"]

        def run(code: str) -> Sample:
            return timed_run([*python, code], root, env)

        def baseline() -> Sample:
            return run("import re")

        rows: list[Row] = []
        progress(f"import gitstate.secrets vs import re, {reps} pairs")
        subject, base = interleaved(baseline, lambda: run("import gitstate.secrets"), reps)
        rows.append(
            timed_row(
                "import `gitstate.secrets` (subprocess)",
                ("`python -c 'import gitstate.secrets'`", subject),
                ("`python -c 'import re'`", base),
                TARGETS["import"],
            )
        )

        cold = (
            "import sys; from gitstate import secrets\n"
            f"new = open({str(state)!r}).read(); old = open({str(previous)!r}).read()\n"
            "sys.exit(1 if secrets.scan_changed(new, old) else 0)"
        )
        progress(f"cold save-path check vs import re, {reps} pairs")
        subject, base = interleaved(baseline, lambda: run(cold), reps)
        rows.append(
            timed_row(
                f"save-path check, cold: import + `scan_changed` of a {len(new.encode())} B "
                "STATE.md (subprocess)",
                ("import, read, scan", subject),
                ("`python -c 'import re'`", base),
                TARGETS["cold"],
            )
        )

        progress(f"warm scans in-process vs import re, {inproc_reps} pairs each")
        assert secrets.scan_changed(new, old) == [] and secrets.scan(big) == []
        subject, base = interleaved(
            baseline, lambda: in_process(lambda: secrets.scan_changed(new, old)), inproc_reps
        )
        rows.append(
            timed_row(
                f"`scan_changed` of the {len(new.encode())} B STATE.md, warm (in-process)",
                ("scan_changed", subject),
                ("`python -c 'import re'`", base),
                TARGETS["state"],
                unit=us,
            )
        )
        subject, base = interleaved(
            baseline, lambda: in_process(lambda: secrets.scan(big)), inproc_reps
        )
        rows.append(
            timed_row(
                f"`scan` of a {len(big.encode()) // 1000} KB text of notes, logs, code and CJK, "
                "warm (in-process)",
                ("scan", subject),
                ("`python -c 'import re'`", base),
                TARGETS["big"],
                unit=us,
            )
        )
        subject, base = interleaved(
            baseline, lambda: in_process(lambda: secrets.redact(big)), inproc_reps
        )
        rows.append(
            timed_row(
                f"`redact` of the same {len(big.encode()) // 1000} KB text (in-process)",
                ("redact", subject),
                ("`python -c 'import re'`", base),
                info=True,
                unit=us,
            )
        )

    print(report(rows))
    print()
    try:
        load = ", load avg " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = ""
    print(
        f"Machine: Python {platform.python_version()}, {os.cpu_count()} CPUs{load}. "
        f"Run: {'quick' if args.quick else 'full'}, {reps} interleaved pairs per subprocess row, "
        f"{inproc_reps} per in-process row, {time.perf_counter() - started:.0f} s."
    )
    over = [row for row in rows if row.cells()[-1] == "**over target**"]
    print(
        f"Verdict: {'all rows within target' if not over else f'{len(over)} row(s) over target'}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
