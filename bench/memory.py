"""Side-by-side benchmark of the brain's memory (issue 7): one Markdown table of ratios.

Same conventions as bench/bench.py (whose helpers it uses): every row compares a subject with a
baseline measured in the same run, interleaved, warm-up runs discarded; medians and minimums.

    python bench/memory.py            # full run: 10,000 session blocks
    python bench/memory.py --quick    # smoke run: 2,000 blocks, fewer repetitions

Rows: indexing the session blocks into the FTS5 index (from the ref, as `memory index` does) vs
inserting the same chunks into a plain SQLite table; a search (median query time in one process)
vs a `LIKE` scan of the same chunks table; the `memory search` CLI vs a bare interpreter start.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from timing import Sample, Timing, in_process, interleaved, timed_run

from bench import (
    CLI,
    Row,
    machine_line,
    progress,
    seal_this_process,
    sealed_env,
    table,
    timed_row,
    us,
)
from gitstate.memory.document import files, search_text, sessions
from gitstate.memory.storage.brain import Brain
from gitstate.memory.storage.fts import Index
from gitstate.memory.storage.layout import BrainLayout
from gitstate.storage.snapshots import compose_message

BLOCKS_PER_DAY = 20
HAN = "連線池重試機制資料庫遷移部署快取失效索引分詞日誌輪替建置測試版本設定環境變數權限金鑰憑證網路延遲佇列排程監控告警備份還原叢集節點容器映像套件依賴相容效能瓶頸記憶體洩漏執行緒鎖定交易回滾查詢優化前端後端介面文件規格需求審查合併衝突分支標籤發布回報議題"
LATIN = [
    "alpha",
    "bravo",
    "cache",
    "delta",
    "egress",
    "fanout",
    "gateway",
    "hashring",
    "ingest",
    "jitter",
    "kernel",
    "lease",
    "mutex",
    "nonce",
    "oauth",
    "proxy",
    "quorum",
    "replica",
    "shard",
    "tenant",
    "upsert",
    "vacuum",
    "webhook",
    "xattr",
    "yield",
    "zstd",
]


@dataclass(frozen=True)
class MemoryPlan:
    blocks: int
    reps: int  # interleaved pairs per subprocess row
    index_reps: int  # full index builds per side
    query_reps: int  # in-process query pairs


FULL = MemoryPlan(blocks=10_000, reps=31, index_reps=3, query_reps=400)
QUICK = MemoryPlan(blocks=2_000, reps=9, index_reps=2, query_reps=80)


def vocabulary(seed: int = 7) -> tuple[list[str], list[str]]:
    """About 600 Chinese words (two or three characters) and 600 English ones."""
    rng = random.Random(seed)
    han = sorted({"".join(rng.sample(HAN, rng.choice((2, 3)))) for _ in range(700)})[:600]
    latin = sorted({f"{rng.choice(LATIN)}{rng.randint(10, 99)}" for _ in range(700)})[:600]
    return han, latin


HAN_WORDS, LATIN_WORDS = vocabulary()
# Queries as a user would type them: a word, a two-character word, English, mixed.
QUERIES = [
    HAN_WORDS[17],
    HAN_WORDS[170][:2],
    HAN_WORDS[333],
    LATIN_WORDS[42],
    LATIN_WORDS[420],
    f"{HAN_WORDS[99]} {LATIN_WORDS[99]}",
    f"{LATIN_WORDS[7]}{HAN_WORDS[7]}",
    HAN_WORDS[500],
]


def session_logs(count: int, seed: int = 7) -> dict[str, str]:
    """`count` session blocks in daily logs of BLOCKS_PER_DAY, rendered as the tool writes them:
    mixed Chinese and English prose drawn from the vocabulary."""
    rng = random.Random(seed)
    logs: dict[str, str] = {}
    start = time.mktime((2024, 1, 1, 9, 0, 0, 0, 0, -1))

    def prose(han: int, latin: int) -> str:
        words = rng.sample(HAN_WORDS, han) + rng.sample(LATIN_WORDS, latin)
        rng.shuffle(words)
        return "".join(w if w[0] >= "\u3000" else f" {w} " for w in words).strip() + "。"

    for n in range(count):
        when = start + (n // BLOCKS_PER_DAY) * 86400 + (n % BLOCKS_PER_DAY) * 97
        local = time.localtime(when)
        date = time.strftime("%Y-%m-%d", local)
        clock = time.strftime("%H:%M:%S", local)
        block = sessions.render_block(
            clock,
            f"project-{n % 12}",
            time.strftime("%Y-%m-%dT%H:%M:%S+00:00", local),
            prose(6, 2),
            f"project-{n % 12}",
            f"/home/dev/src/project-{n % 12}",
            [
                ("Key Decisions", [prose(3, 1)]),
                ("Learnings", [prose(4, 2), f"ticket #{rng.randint(1000, 9999)}"]),
                ("Next Steps", [f"[ ] {prose(2, 1)}"]),
            ],
        )
        path = files.session_path(date)
        logs[path] = sessions.append(logs.get(path, ""), date, block)
    return logs


def build_brain(path: Path, count: int) -> Brain:
    """A brain whose tip holds `count` session blocks (written as one commit, not `count`)."""
    brain, _ = Brain.create(BrainLayout(path))
    tip = brain.tip()
    changes: dict[str, bytes | None] = {p: t.encode() for p, t in session_logs(count).items()}
    message = compose_message(f"bench: {count} session blocks", [("Agy-Memory-Format", "1")])
    commit = brain.commit(tip, changes, [tip] if tip else [], message)
    if not brain.compare_and_swap(tip, commit, "bench: session blocks"):
        raise SystemExit("could not move the bench brain's ref")
    brain.refresh_cache()
    return brain


def index_once(brain: Brain, path: Path) -> float:
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    index = Index(path)
    start = time.perf_counter()
    tip = brain.tip()
    done = index.catch_up(tip, lambda: brain.listing(tip), brain.blob)
    elapsed = time.perf_counter() - start
    index.close()
    if done.indexed == 0:
        raise SystemExit("the bench index read no file")
    return elapsed


def plain_once(brain: Brain, path: Path) -> float:
    """The baseline: the same chunks (same reading and chunking) into a table without FTS."""
    path.unlink(missing_ok=True)
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE chunks(id INTEGER PRIMARY KEY, path TEXT, seq INTEGER, content TEXT)")
    start = time.perf_counter()
    tip = brain.tip()
    db.execute("BEGIN")
    for file_path, blob in sorted(brain.listing(tip).items()):
        text = brain.blob(blob).decode("utf-8", "replace")
        for seq, piece in enumerate(search_text.chunks(text)):
            db.execute(
                "INSERT INTO chunks(path, seq, content) VALUES (?, ?, ?)", (file_path, seq, piece)
            )
    db.execute("COMMIT")
    elapsed = time.perf_counter() - start
    db.close()
    return elapsed


def rows_index(brain: Brain, root: Path, plan: MemoryPlan) -> list[Row]:
    progress(
        f"row 1: index {plan.blocks:,} session blocks vs plain inserts, {plan.index_reps} each"
    )
    fts: list[Sample] = []
    plain: list[Sample] = []
    for rep in range(plan.index_reps):
        order = (
            [("fts", fts), ("plain", plain)] if rep % 2 == 0 else [("plain", plain), ("fts", fts)]
        )
        for kind, into in order:
            if kind == "fts":
                into.append((index_once(brain, root / "bench-index.sqlite"), None))
            else:
                into.append((plain_once(brain, root / "bench-plain.sqlite"), None))
    subject = Timing(tuple(w for w, _ in fts))
    baseline = Timing(tuple(w for w, _ in plain))
    per_block = subject.median / plan.blocks * 1e6
    progress(f"index: {subject.median:.2f} s ({per_block:.0f} µs per block)")
    return [
        timed_row(
            f"index {plan.blocks:,} session blocks (FTS5, CJK segmented, from the ref)",
            (f"`memory index --rebuild` work, {per_block:.0f} µs/block", subject),
            ("the same chunks into a plain table", baseline),
        )
    ]


def rows_search(root: Path, plan: MemoryPlan) -> list[Row]:
    index = Index(root / "bench-index.sqlite")
    db = index.connect()
    chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    progress(f"row 2: search vs LIKE over {chunks:,} chunks, {plan.query_reps} pairs")
    # Each side rotates through the same queries in the same order (a counter of its own).
    fts_turn, like_turn = iter(range(10**9)), iter(range(10**9))
    matches = [search_text.fts_query(q) for q in QUERIES]
    likes = [[f"%{word}%" for word in q.split()] for q in QUERIES]

    def fts_query() -> Sample:
        n = next(fts_turn) % len(QUERIES)
        return in_process(lambda: index.search(matches[n], 10))

    def like_scan() -> Sample:
        n = next(like_turn) % len(QUERIES)
        where = " AND ".join("content LIKE ?" for _ in likes[n])
        sql = f"SELECT path, seq, content FROM chunks WHERE {where}"
        return in_process(lambda: db.execute(sql, likes[n]).fetchall())

    subject, baseline = interleaved(like_scan, fts_query, plan.query_reps)
    index.close()
    return [
        timed_row(
            f"search, median of {len(QUERIES)} queries rotating (in one process)",
            ("FTS5 MATCH, bm25, snippet, top 10", subject),
            (f"`LIKE '%…%'` scan of the same {chunks:,} chunks", baseline),
            target=0.5,
            unit=us,
        )
    ]


def rows_cli(env: dict[str, str], root: Path, plan: MemoryPlan) -> list[Row]:
    cwd = root
    progress(f"row 3: memory search CLI vs python -c pass, {plan.reps} pairs")
    search = [*CLI, "memory", "search", "--json", "連線池", "backoff"]
    bare = [sys.executable, "-c", "pass"]
    cli, base = interleaved(
        lambda: timed_run(bare, cwd, env), lambda: timed_run(search, cwd, env), plan.reps
    )
    progress("info: memory search CLI vs --version")
    version = [*CLI, "--version"]
    cli2, ver = interleaved(
        lambda: timed_run(version, cwd, env), lambda: timed_run(search, cwd, env), plan.reps
    )
    return [
        timed_row(
            "`memory search` (subprocess, caught-up index)",
            ("`python -m gitstate memory search`", cli),
            ("`python -c pass`", base),
            target=8.0,
        ),
        timed_row(
            "`memory search` beyond the CLI's start-up",
            ("`memory search`", cli2),
            ("`python -m gitstate --version`", ver),
            info=True,
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: fewer blocks and reps")
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agy-bench-memory-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        env = sealed_env(root)
        env["AGY_BRAIN"] = str(root / "brain.git")
        seal_this_process(env, root)
        progress(f"building a brain with {plan.blocks:,} session blocks")
        brain = build_brain(root / "brain.git", plan.blocks)
        rows = rows_index(brain, root, plan)
        rows += rows_search(root, plan)
        # The CLI row searches the brain's own index: build it once, untimed.
        tip = brain.tip()
        Index(BrainLayout(root / "brain.git").index_path).catch_up(
            tip, lambda: brain.listing(tip), brain.blob
        )
        rows += rows_cli(env, root, plan)
    print(table(rows))
    print()
    mode = "--quick" if args.quick else "full"
    elapsed = time.perf_counter() - began
    print(machine_line(plan, mode, elapsed) + f" Session blocks: {plan.blocks:,}.")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
