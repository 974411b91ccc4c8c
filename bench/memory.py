"""Side-by-side benchmark of the brain's memory (issues 7 and 13): one Markdown table of ratios.

Same conventions as bench/bench.py (whose helpers it uses): the subprocesses run from a wheel in
a fresh venv (bench/install.py); every row compares a subject with a baseline measured in the
same run, interleaved, warm-up runs discarded; medians and minimums.

    python bench/memory.py --agent-brain PATH   # full run: 10,000 session blocks
    python bench/memory.py --quick              # smoke run: 2,000 blocks, fewer repetitions

Rows: indexing in-process vs plain inserts; a search vs a `LIKE` scan; the `memory search` CLI vs
a bare interpreter; a full rebuild's CPU vs Agent Brain's `index-memory.py rebuild` (PATH, not
shipped: skipped without it) and both engines' recall and false cross-word hits; `memory
import`; one add or session at 10,000 blocks vs at an empty brain; the brain on disk vs packed.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from install import Install, add_source_option, build
from timing import WARMUP, Sample, Timing, in_process, interleaved, timed_run, timing

from bench import (
    Row,
    git,
    machine_line,
    ms,
    object_usage,
    progress,
    seal_this_process,
    sealed_env,
    table,
    timed_row,
    tool,
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

    writes: int  # `memory session` writes of the size row
    rebuild_reps: int  # interleaved pairs of full rebuilds (ours vs Agent Brain's)


FULL = MemoryPlan(
    blocks=10_000, reps=31, index_reps=3, query_reps=400, writes=2_000, rebuild_reps=5
)
QUICK = MemoryPlan(blocks=2_000, reps=9, index_reps=2, query_reps=80, writes=750, rebuild_reps=2)
ADD_TARGET = 1.2  # a write at 10,000 blocks vs one at an empty brain
SIZE_TARGET = 2.0  # bytes on disk vs after `git gc`
REBUILD_TARGET = 1.0  # our rebuild's CPU vs Agent Brain's on the same files
SEARCH_TARGET = 2.0  # `memory search` vs a bare start of the same interpreter
GC_WAIT = 300  # seconds the last repack may take before the size row gives up
SAMPLE_EVERY = 0.005  # seconds between two samples of the brain on disk
CHECK_EVERY = 250  # writes between two packed references of the size row
PEAK_FROM = 250  # the size row's peak counts from this write on (a smaller brain is mostly floor)


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


CHINESE_SHARE = 0.3  # of the session blocks; the rest is English prose (issue 13's corpus)

# Recall: 2-character Chinese words written inside sentences, each in GENUINE files. Every word
# has a character the generated prose never uses, so only the planted sentences hold it.
RECALL_WORDS = ("限流", "熔断", "灰度", "幂等", "死锁", "分片", "埋点", "鉴权", "压测", "降级", "回归", "时延")  # fmt: skip
# False cross-word hits: a phrase of two other words whose seam spells a query word
# (权限+流程 holds 限流), planted in files that never hold the word itself.
TRAPS = {
    "限流": "权限流程",
    "压测": "气压测量",
    "回归": "返回归档",
    "分片": "部分片段",
    "时延": "同时延长",
}
GENUINE = 3  # blocks (each in its own daily log) per recall word, and per trap phrase


def planted(count: int) -> dict[int, str]:
    """Block number -> the sentence planted in it: each word GENUINE times, each trap GENUINE
    times, all in distinct daily logs (BLOCKS_PER_DAY blocks apart at least)."""
    days = count // BLOCKS_PER_DAY
    sentences = [f"今天在网关上加了{w}，观察一天。" for w in RECALL_WORDS for _ in range(GENUINE)]
    sentences += [f"先确认{t}再继续。" for t in TRAPS.values() for _ in range(GENUINE)]
    if len(sentences) > days:
        raise SystemExit(f"{count} blocks make {days} daily logs, fewer than {len(sentences)}")
    step = days // len(sentences)
    return {n * step * BLOCKS_PER_DAY + 3: text for n, text in enumerate(sentences)}


def session_logs(count: int, seed: int = 7) -> dict[str, str]:
    """`count` session blocks in daily logs of BLOCKS_PER_DAY, rendered as the tool writes them:
    CHINESE_SHARE of them Chinese prose (with a few English words), the rest English, drawn
    from the vocabulary; the recall and trap sentences planted in some."""
    rng = random.Random(seed)
    logs: dict[str, str] = {}
    start = time.mktime((2024, 1, 1, 9, 0, 0, 0, 0, -1))
    plants = planted(count)

    def prose(han: int, latin: int, chinese: bool) -> str:
        if not chinese:
            return " ".join(rng.sample(LATIN_WORDS, han + latin)).capitalize() + "."
        words = rng.sample(HAN_WORDS, han) + rng.sample(LATIN_WORDS, latin)
        rng.shuffle(words)
        return "".join(w if w[0] >= "\u3000" else f" {w} " for w in words).strip() + "。"

    for n in range(count):
        chinese = rng.random() < CHINESE_SHARE
        when = start + (n // BLOCKS_PER_DAY) * 86400 + (n % BLOCKS_PER_DAY) * 97
        local = time.localtime(when)
        date = time.strftime("%Y-%m-%d", local)
        clock = time.strftime("%H:%M:%S", local)
        summary = prose(6, 2, chinese) + plants.get(n, "")
        block = sessions.render_block(
            clock,
            f"project-{n % 12}",
            time.strftime("%Y-%m-%dT%H:%M:%S+00:00", local),
            summary,
            f"project-{n % 12}",
            f"/home/dev/src/project-{n % 12}",
            [
                ("Key Decisions", [prose(3, 1, chinese)]),
                ("Learnings", [prose(4, 2, chinese), f"ticket #{rng.randint(1000, 9999)}"]),
                ("Next Steps", [f"[ ] {prose(2, 1, chinese)}"]),
            ],
        )
        path = files.session_path(date)
        logs[path] = sessions.append(logs.get(path, ""), date, block)
    return logs


def build_brain(path: Path, corpus: dict[str, str]) -> Brain:
    """A brain whose tip holds the corpus (written as one commit, not one per block)."""
    brain, _ = Brain.create(BrainLayout(path))
    tip = brain.tip()
    changes: dict[str, bytes | None] = {p: t.encode() for p, t in corpus.items()}
    message = compose_message(f"bench: {len(corpus)} daily logs", [("Agy-Memory-Format", "1")])
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


def brain_env(env: dict[str, str], brain: Path) -> dict[str, str]:
    return {**env, "AGY_BRAIN": str(brain)}


def commits(env: dict[str, str], brain: Path) -> int:
    out = git(env, brain, "rev-list", "--count", "refs/agy/memory")
    return int(out.strip())


def rows_add(inst: Install, env: dict[str, str], root: Path, plan: MemoryPlan) -> list[Row]:
    """One `memory add` (and one `memory session`) at a brain of `plan.blocks` blocks vs at an
    empty one: a write must cost the same however big the brain has grown."""
    big, empty = root / "brain.git", root / "brain-empty.git"
    tool(inst, brain_env(env, empty), root, "memory", "init")
    turn = iter(range(10**6))
    rows = []
    for kind, target in (("add", ADD_TARGET), ("session", ADD_TARGET)):

        def write(brain: Path, kind: str = kind) -> Callable[[], Sample]:
            writer_env = brain_env(env, brain)

            def run() -> Sample:
                n = next(turn)
                text = f"bench entry {n}: the retry budget is {n % 7} attempts, 重試 at {n} rps"
                if kind == "add":
                    argv = ["memory", "add", "--layer", "project", "--project", "bench", text]
                else:
                    argv = ["memory", "session", "--summary", text, "--project", "bench",
                            "--workspace", "/home/dev/src/bench"]  # fmt: skip
                return timed_run([*inst.cli, *argv], root, writer_env)

            return run

        before = commits(env, big), commits(env, empty)
        progress(f"row: memory {kind} at {plan.blocks:,} blocks vs an empty brain, {plan.reps}")
        at_big, at_empty = interleaved(write(empty), write(big), plan.reps)
        after = commits(env, big), commits(env, empty)
        if after != (before[0] + plan.reps + WARMUP, before[1] + plan.reps + WARMUP):
            raise SystemExit(f"memory {kind}: expected one commit per call, {before} -> {after}")
        rows.append(
            timed_row(
                f"one `memory {kind}` at a {plan.blocks:,}-block brain (subprocess)",
                (f"{plan.blocks:,} blocks", at_big),
                ("an empty brain", at_empty),
                target=target,
            )
        )
    return rows


def loose_count(brain: Path) -> int:
    objects = brain / "objects"
    return sum(
        len(os.listdir(sub)) for sub in objects.iterdir() if len(sub.name) == 2 and sub.is_dir()
    )


def repack_done(brain: Path) -> bool:
    """No repack of the tool's holds the brain's pack lock (storage/packing.py)."""
    try:
        fd = os.open(brain / "agy" / "pack.lock", os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


# The size row's writer: one process of the installed tool running `plan.writes` sessions
# through its own use case (argv: count, blocks a day), so the objects and any packing are the
# install's. It prints each write's number once it is done, for the sampler.
SESSION_WRITER = """\
import sys, time
from gitstate.memory.usecases import write
start = time.mktime((2025, 1, 1, 9, 0, 0, 0, 0, -1))
for n in range(int(sys.argv[1])):
    write.session(
        f"session {n}: moved the retry budget to {n % 9} attempts and checked the alerts",
        project=f"project-{n % 12}",
        learned=(f"learning {n}: backoff caps at {n % 31} s",),
        workspace=f"/home/dev/src/project-{n % 12}",
        now=start + (n // int(sys.argv[2])) * 86400 + (n % int(sys.argv[2])) * 97,
    )
    print(n + 1, flush=True)
"""


@dataclass(frozen=True)
class DiskSample:
    writes: int  # writes done when the sample was taken
    loose: int  # loose objects' disk blocks
    packs: int  # bytes under objects/pack (a repack's new pack included)

    @property
    def total(self) -> int:
        return self.loose + self.packs


def sample_disk(brain: Path, writes: int) -> DiskSample:
    usage = object_usage_racy(brain)
    return DiskSample(writes, usage[0], usage[1])


def object_usage_racy(brain: Path) -> tuple[int, int]:
    """(loose objects' disk blocks, bytes under objects/pack) while writes and repacks add and
    delete files: a folder not there yet (the brain's first write creates objects/ while the
    sampler runs) or gone counts nothing, and so does a file gone between the listing and its
    stat (a sample may miss room a repack is freeing; it never counts a file twice). Any other
    error (a folder that cannot be read) stops the bench: the sample would be wrong."""
    objects = os.path.join(brain, "objects")
    packs = loose = 0
    for entry in _entries(os.path.join(objects, "pack")):
        packs += _stat_size(entry, blocks=False)
    for sub in _entries(objects):
        if len(sub.name) == 2 and sub.is_dir(follow_symlinks=False):
            for entry in _entries(sub.path):
                loose += _stat_size(entry, blocks=True)
    return loose, packs


def _entries(folder: str) -> list[os.DirEntry[str]]:
    """The entries of `folder`; none when it does not exist (yet, or any more)."""
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except FileNotFoundError:
        return []


def _stat_size(entry: os.DirEntry[str], *, blocks: bool) -> int:
    """The entry's room on disk (blocks) or its size in bytes; 0 for a file deleted since it was
    listed."""
    try:
        status = entry.stat(follow_symlinks=False)
    except FileNotFoundError:
        return 0
    return status.st_blocks * 512 if blocks else status.st_size


def packed_size(env: dict[str, str], brain: Path, commit: str, out: Path) -> int:
    """The brain at `commit` packed afresh: a pack (and its index) of the objects reachable from
    it, every delta searched anew, as `git gc` makes of loose objects. (gc of a packed brain
    reuses the deltas it finds, so it would hide a badly packed brain.)"""
    proc = subprocess.run(
        ["git", "pack-objects", "-q", "--revs", "--no-reuse-delta", str(out / "pack")],
        cwd=brain,
        env=env,
        input=f"{commit}\n",
        capture_output=True,
        text=True,
        check=True,
    )
    name = proc.stdout.strip()
    size = 0
    for suffix in (".pack", ".idx"):
        path = out / f"pack-{name}{suffix}"
        size += path.stat().st_size
        path.unlink()
    return size


def rows_size(inst: Install, env: dict[str, str], root: Path, plan: MemoryPlan) -> list[Row]:
    """`plan.writes` sessions into a fresh brain, its objects on disk sampled every SAMPLE_EVERY
    seconds (several times a write) while the writes and the last repack run, against the brain
    packed afresh at that point (at every CHECK_EVERY writes, interpolated): the peak from write
    PEAK_FROM on, and the end."""
    brain = root / "brain-growth.git"
    progress(f"row: {plan.writes:,} `memory session` writes in one process of the install")
    writer = [str(inst.python), "-I", "-c", SESSION_WRITER, str(plan.writes), str(BLOCKS_PER_DAY)]
    done = [0]
    samples: list[DiskSample] = []
    started = time.perf_counter()
    proc = subprocess.Popen(
        writer, cwd=root, env=brain_env(env, brain), stdout=subprocess.PIPE, text=True
    )

    def follow() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            done[0] = int(line)

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    deadline = None
    while True:
        running = proc.poll() is None
        if brain.is_dir():
            samples.append(sample_disk(brain, done[0]))
        if not running:
            reader.join()
            if deadline is None:
                elapsed = time.perf_counter() - started
                deadline = time.monotonic() + GC_WAIT
            if repack_done(brain) and brain.is_dir():
                samples.append(sample_disk(brain, done[0]))
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"a repack of {brain} still runs after {GC_WAIT} s")
        time.sleep(SAMPLE_EVERY)
    if proc.returncode != 0 or commits(env, brain) < plan.writes:
        raise SystemExit(f"the size row's writer failed ({proc.returncode})")
    end = samples[-1]
    packs = len([n for n in os.listdir(brain / "objects" / "pack") if n.endswith(".pack")])
    loose = loose_count(brain)

    # The packed reference at checkpoints: commit k of the chain is write k - first + 1.
    chain = git(env, brain, "rev-list", "--reverse", "--first-parent", "refs/agy/memory").split()
    first = len(chain) - plan.writes  # commits before the first write (the brain's creation)
    scratch = root / "brain-growth-packed"
    scratch.mkdir()
    points = sorted({*range(CHECK_EVERY, plan.writes, CHECK_EVERY), plan.writes})
    reference = {k: packed_size(env, brain, chain[first + k - 1], scratch) for k in points}

    def packed_at(writes: int) -> float:
        below = max([k for k in points if k <= writes] or points[:1])
        above = min(k for k in points if k >= writes)
        if above == below:
            return float(reference[below])
        share = (writes - below) / (above - below)
        return reference[below] + share * (reference[above] - reference[below])

    judged = [s for s in samples if s.writes >= PEAK_FROM]
    peak = max(judged, key=lambda s: s.total / packed_at(s.writes))
    peak_ratio = peak.total / packed_at(peak.writes)
    # gc reuses the deltas it finds in the packs: a brain badly packed stays so, which is why
    # the reference is a fresh pack; gc's size is shown beside it.
    git(env, brain, "gc", "--quiet", "--prune=now")
    after_gc = object_usage(brain).total
    return [
        Row(
            f"brain on disk, peak over {plan.writes:,} `memory session` writes "
            f"({elapsed / plan.writes * 1e3:.1f} ms each, in one process), sampled every "
            f"{SAMPLE_EVERY * 1e3:.0f} ms ({len(samples):,} samples), from write {PEAK_FROM:,} on",
            f"peak on disk: {peak.total / 1e6:.2f} MB at write {peak.writes:,} (loose "
            f"{peak.loose / 1e6:.2f} MB, packs {peak.packs / 1e6:.2f} MB)",
            f"packed afresh at that point (every {CHECK_EVERY:,} writes, interpolated): "
            f"{packed_at(peak.writes) / 1e6:.2f} MB",
            peak_ratio,
            target=SIZE_TARGET,
        ),
        Row(
            f"brain on disk at the end of the {plan.writes:,} writes, once the last repack is over",
            f"on disk: {end.total / 1e6:.2f} MB ({loose:,} loose objects, {packs} packs "
            f"{end.packs / 1e6:.2f} MB)",
            f"packed afresh: {reference[plan.writes] / 1e6:.2f} MB (`git gc --prune=now`, "
            f"which reuses the packs' deltas: {after_gc / 1e6:.2f} MB)",
            end.total / reference[plan.writes],
            info=True,
        ),
    ]


def write_peer_brain(home: Path, corpus: dict[str, str]) -> Path:
    """The same files where Agent Brain keeps them (~/.agent-brain/sessions/DATE.md)."""
    folder = home / ".agent-brain"
    for path, text in corpus.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return folder


def skipped(measure: str, why: str) -> Row:
    return Row(measure, why, "—", None, verdict="skipped")


def rows_rebuild(
    inst: Install, env: dict[str, str], root: Path, plan: MemoryPlan, peer: Path | None
) -> list[Row]:
    """A full rebuild of the index from the same files: ours from the ref, Agent Brain's
    `index-memory.py rebuild` from ~/.agent-brain; CPU from wait4 (verdict on CPU)."""
    measure = (
        f"full index rebuild, {plan.blocks:,} blocks ({CHINESE_SHARE:.0%} Chinese), CPU "
        "(subprocess)"
    )
    if peer is None:
        return [skipped(measure, "no `--agent-brain PATH` (bench/README.md says where to get it)")]
    ours = [*inst.cli, "memory", "index", "--rebuild"]
    theirs = [str(inst.python), "-I", str(peer), "rebuild"]
    big = brain_env(env, root / "brain.git")
    progress(f"row: memory index --rebuild vs index-memory.py rebuild, {plan.rebuild_reps} pairs")
    subject, base = interleaved(
        lambda: timed_run(theirs, root, env), lambda: timed_run(ours, root, big), plan.rebuild_reps
    )
    row = timed_row(
        measure, ("`memory index --rebuild`", subject), ("`index-memory.py rebuild`", base)
    )
    wall = f"{measure}; wall-clock ratio {row.ratio:.2f}×"
    return [replace(row, measure=wall, ratio=row.cpu_ratio, min_ratio=None, cpu_ratio=None,
                    target=REBUILD_TARGET)]  # fmt: skip


def ground_truth(corpus: dict[str, str]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """For each recall word, the files that hold it as a word, and those that hold only its trap."""
    genuine = {w: {p for p, t in corpus.items() if f"加了{w}" in t} for w in RECALL_WORDS}
    traps = {
        w: {p for p, t in corpus.items() if trap in t} - genuine[w] for w, trap in TRAPS.items()
    }
    return genuine, traps


def rows_recall(
    inst: Install, env: dict[str, str], root: Path, corpus: dict[str, str], peer: Path | None
) -> list[Row]:
    """Each engine's top 10 for the recall words: words found, and trap files returned."""
    genuine, traps = ground_truth(corpus)
    ours_env = brain_env(env, root / "brain.git")

    def ours(word: str) -> set[str]:
        out = tool(inst, ours_env, root, "memory", "search", "--json", "-n", "10", word)
        return {hit["path"] for hit in json.loads(out)}

    def theirs(word: str) -> set[str]:
        assert peer is not None
        proc = subprocess.run(
            [str(inst.python), "-I", str(peer), "search", word], cwd=root, env=env,
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return {line.split()[1] for line in proc.stdout.splitlines() if line.startswith("📄 ")}

    engines = [("ours", ours)] + ([("Agent Brain", theirs)] if peer else [])
    found: dict[str, tuple[int, int, int]] = {}
    for name, search in engines:
        words = files_found = false = 0
        for word in RECALL_WORDS:
            got = search(word)
            words += bool(got & genuine[word])
            files_found += len(got & genuine[word])
            false += len(got & traps.get(word, set()))
        found[name] = (words, files_found, false)
    total_files = sum(len(g) for g in genuine.values())
    trap_files = sum(len(t) for t in traps.values())

    def recall(name: str) -> str:
        words, files_found, _ = found[name]
        return f"{name}: {words}/{len(RECALL_WORDS)} words ({files_found}/{total_files} files)"

    def false(name: str) -> str:
        return f"{name}: {found[name][2]} of {trap_files} trap files returned"

    absent = "Agent Brain: skipped (no `--agent-brain PATH`)"
    peer_recall = recall("Agent Brain") if peer else absent
    peer_false = false("Agent Brain") if peer else absent
    all_found = found["ours"][0] == len(RECALL_WORDS)
    examples = ", ".join(f"{w} in {t}" for w, t in list(TRAPS.items())[:2])
    return [
        Row(
            f"recall: {len(RECALL_WORDS)} two-character Chinese words inside sentences "
            f"({GENUINE} files each), top 10",
            recall("ours"),
            peer_recall,
            None,
            verdict="ok" if all_found else "**over target**",
        ),
        Row(
            f"false cross-word hits: {len(TRAPS)} words whose characters also meet across a "
            f"word seam ({examples}, …), top 10",
            false("ours"),
            peer_false,
            None,
        ),
    ]


def rows_cli(inst: Install, env: dict[str, str], root: Path, plan: MemoryPlan) -> list[Row]:
    cwd = root
    big = brain_env(env, root / "brain.git")
    query = QUERIES[5].split()
    search = [*inst.cli, "memory", "search", "--json", *query]
    if not json.loads(tool(inst, big, cwd, "memory", "search", "--json", *query)):
        raise SystemExit(f"memory search {QUERIES[5]!r} found nothing in the bench brain")
    bare = [str(inst.python), "-c", "pass"]
    progress(f"row: memory search CLI vs python -c pass, {plan.reps} pairs")
    cli, base = interleaved(
        lambda: timed_run(bare, cwd, env), lambda: timed_run(search, cwd, big), plan.reps
    )
    progress("info: memory search CLI vs python -c 'import sqlite3'")
    with_sqlite = [str(inst.python), "-c", "import sqlite3"]
    cli2, lite = interleaved(
        lambda: timed_run(with_sqlite, cwd, env), lambda: timed_run(search, cwd, big), plan.reps
    )
    return [
        timed_row(
            "`memory search` (subprocess, index current)",
            (f"`git-agy-state memory search {QUERIES[5]}`", cli),
            ("the venv's `python -c pass`", base),
            target=SEARCH_TARGET,
        ),
        timed_row(
            "`memory search` vs an interpreter that imports sqlite3",
            ("`memory search`", cli2),
            ("`python -c 'import sqlite3'`", lite),
            info=True,
        ),
    ]


def rows_import(inst: Install, env: dict[str, str], root: Path, folder: Path) -> list[Row]:
    """`memory import PATH` of an Agent Brain folder into a fresh brain, once: time, one commit."""
    measure = (
        f"`memory import` of an Agent Brain folder ({len(list(folder.rglob('*.md'))):,} files)"
    )
    brain = root / "brain-import.git"
    target_env = brain_env(env, brain)
    probe = subprocess.run(
        [*inst.cli, "memory", "import", "--help"], cwd=root, env=target_env,
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        return [skipped(measure, "this install has no `memory import`")]
    tool(inst, target_env, root, "memory", "init")
    before = commits(env, brain)
    progress("info: memory import of the Agent Brain folder, once")
    took = timing([timed_run([*inst.cli, "memory", "import", str(folder)], root, target_env)])
    made = commits(env, brain) - before
    return [
        Row(measure, ms("`memory import PATH`", took), f"{made} commit(s) made", None, info=True)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: fewer blocks and reps")
    parser.add_argument(
        "--agent-brain",
        metavar="PATH",
        type=Path,
        default=os.environ.get("AGENT_BRAIN_INDEXER") or None,
        help="Agent Brain's index-memory.py, for the rebuild and recall rows "
        "(default: $AGENT_BRAIN_INDEXER; skipped when absent)",
    )
    add_source_option(parser)
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    peer: Path | None = args.agent_brain
    if peer is not None and not peer.is_file():
        raise SystemExit(f"--agent-brain {peer}: no such file")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agy-bench-memory-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        # Before the seal: pip needs the real HOME's config and cache.
        inst = build(root, args.source)
        env = inst.environ(sealed_env(root))
        seal_this_process(env, root)
        progress(f"building a brain with {plan.blocks:,} session blocks")
        corpus = session_logs(plan.blocks)
        brain = build_brain(root / "brain.git", corpus)
        rows = rows_index(brain, root, plan)
        rows += rows_search(root, plan)
        # The CLI rows search the brain's own index: build it once, untimed.
        tool(inst, brain_env(env, root / "brain.git"), root, "memory", "index")
        rows += rows_cli(inst, env, root, plan)
        folder = write_peer_brain(Path(env["HOME"]), corpus)
        rows += rows_rebuild(inst, env, root, plan, peer)
        # After the rebuilds, before any write: both indexes hold exactly the corpus.
        rows += rows_recall(inst, env, root, corpus, peer)
        rows += rows_import(inst, env, root, folder)
        rows += rows_add(inst, env, root, plan)
        rows += rows_size(inst, env, root, plan)
    rows = [row for row in rows if not row.info] + [row for row in rows if row.info]
    print(table(rows))
    print()
    mode = "--quick" if args.quick else "full"
    elapsed = time.perf_counter() - began
    print(machine_line(plan, mode, elapsed) + f" Session blocks: {plan.blocks:,}.")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
