"""Side-by-side benchmark of git-agy-state: one Markdown table of ratios, measured in one run.

Machines are noisy, so every row compares a subject with a baseline measured in the same run,
interleaved (baseline and subject alternate, the order flips each repetition, a couple of
warm-up runs are discarded). A row reports the median and the minimum of each side (and, for
subprocesses, the median CPU time from wait4) and the ratio of the medians, which the verdict
uses; the ratios of the minimums and of the CPU times are printed beside it.

    python bench/bench.py              # full run (11-25 minutes on 2 busy cores)
    python bench/bench.py --quick      # smoke run (about 2 minutes): fewer pairs, smaller fixtures
    python bench/bench.py --only hooks # only these rows (repeatable): save hooks log githooks size sync

Every subprocess row runs the project as users install it: a wheel of this checkout in a fresh
venv (bench/install.py), its console script for commands, and for hooks the lines `install`
writes: `python -I -c 'import gitstate.__main__'` for agent hooks, `python -I -m gitstate` for
git hooks.
Standard library plus the project's own dependencies. Every fixture lives in one temporary
directory removed at the end; every subprocess runs with a sealed git environment.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2
from install import Install, add_source_option, build
from timing import WARMUP, Sample, Timing, in_process, interleaved, timed_run, timing

from gitstate.document.language import KEYS
from gitstate.document.model import Document, render
from gitstate.document.patch import Patch, SetSection
from gitstate.document.validate import check_text
from gitstate.storage.snapshots import FORMAT_VERSION, compose_message
from gitstate.usecases.state import history
from gitstate.usecases.state import patch as patch_uc
from gitstate.usecases.state import writer as state_uc
from gitstate.usecases.sync import carry
from gitstate.usecases.sync import run as sync_uc
from gitstate.usecases.workspace import Workspace

SYNC_SNAPSHOTS = 1_000  # row 4's target is defined at this size, so --quick keeps it too
SYNC_EMAIL = "bench@example.com"
SHORT_CHAIN = 20
HOOK_CHAIN_FULL, HOOK_CHAIN_QUICK, HOOK_CHAIN_SHORT = 100_000, 5_000, 10
NO_SUCH_PID = 4_194_303  # above Linux's pid_max default: never a running process
LOG_LIMIT = 20


@dataclass(frozen=True)
class Plan:
    reps: int  # interleaved pairs per subprocess row
    chain: int  # length of the long chain (row 2)
    snapshots: int  # one-section changes before gc (row 3)
    inproc_reps: int  # interleaved pairs per in-process row


FULL = Plan(reps=51, chain=20_000, snapshots=1_000, inproc_reps=300)
QUICK = Plan(reps=7, chain=2_000, snapshots=200, inproc_reps=60)


# ---- a realistic STATE.md (~1.5 KB, English) ---------------------------------------------

SECTIONS: dict[str, list[str]] = {
    "goal": [
        "Make `git agy-state log` fast on long histories and keep `save` within its start-up",
        "budget, without changing the on-disk format of snapshots.",
    ],
    "done": [
        "- [x] Profile save end to end | verified: cProfile report in issue 42",
        "- [x] Read only N commits in log -n N | verified: tests/test_history.py::test_log_limit",
        "- [x] Keep the view record next to the lock | verified: pytest -k view_record",
    ],
    "changed_files": [
        "- gitstate/usecases/state/history.py: log walks first parents lazily",
        "- gitstate/storage/snapshots.py: walk() stops after the limit",
        "- gitstate/cli/__init__.py: version option without importing the use cases",
        "- tests/test_history.py: log on a 5,000-snapshot chain",
    ],
    "open_issues": [
        "- click costs a noticeable share of start-up; consider lazy subcommands",
        "- gc --auto runs detached; doctor should report a store that never packs (run 0)",
    ],
    "key_data": [
        "- import pygit2: about 90 ms on the CI runner (2 cores, shared)",
        "- save budget: 1.5x the time of `python -c 'import pygit2'` (run 0)",
        "- git gc --prune=now packs 1,000 snapshots to well under 1 MB",
    ],
    "failed_attempts": [
        "- pygit2 Walker with SORT_TIME: sorts by reading every commit first; reverted",
        "- Shelling out to `git log`: one more process per call, and a git dependency",
    ],
    "next_steps": [
        "- [>] Measure save with -X importtime and cProfile (attempt 0)",
        "- [ ] Move the subcommand imports behind click's lazy loading",
        "- [ ] Document the targets in bench/README.md",
        "- [ ] Re-run the benchmark on the CI runner and compare",
    ],
}

# Row 3 varies one line of one section per snapshot, rotating over these sections.
VARIED = {
    "next_steps": ("(attempt 0)", "(attempt {n})"),
    "open_issues": ("(run 0)", "(run {n})"),
    "key_data": ("(run 0)", "(run {n})"),
}


def section_text(key: str, n: int = 0) -> str:
    lines = SECTIONS[key]
    if n and key in VARIED:
        old, new = VARIED[key]
        lines = [line.replace(old, new.format(n=n)) for line in lines]
    return "\n".join(lines)


def document_text(goal_counter: int) -> str:
    """The rendered document with a counter in the goal's first line (row 2's chains)."""
    bodies = []
    for key in KEYS:
        lines = list(SECTIONS[key])
        if key == "goal":
            lines[0] = f"{lines[0]} (edit {goal_counter})"
        bodies.append(tuple(lines))
    return render(Document("en", "2026-01-02 03:04", tuple(bodies)))


# ---- environment ----------------------------------------------------------------------------


def sealed_env(root: Path) -> dict[str, str]:
    """A hermetic environment: temporary HOME, no system or global git config, fixed identity."""
    home = root / "home"
    (home / ".config").mkdir(parents=True)
    empty = home / ".gitconfig"
    empty.write_text("")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(empty),
        "GIT_AUTHOR_NAME": "Bench Author",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench Author",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        # Bytecode is cached (as after `pip install`), but in the temporary tree, never next to
        # the sources; the warm-up runs fill it.
        "PYTHONPYCACHEPREFIX": str(root / "pycache"),
    }
    for name in ("SYSTEMROOT", "TMPDIR"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def seal_this_process(env: dict[str, str], root: Path) -> None:
    """The fixtures built in-process (pygit2, use cases) see the same sealed environment."""
    for name in list(os.environ):
        if name.startswith(("GIT_", "AGY_")):
            del os.environ[name]
    os.environ.update(env)
    empty = root / "home" / "empty"
    empty.mkdir()
    levels = pygit2.enums.ConfigLevel
    pygit2.settings.search_path[levels.GLOBAL] = env["HOME"]
    pygit2.settings.search_path[levels.XDG] = env["XDG_CONFIG_HOME"]
    pygit2.settings.search_path[levels.SYSTEM] = str(empty)


def git(env: dict[str, str], cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr}")
    return proc.stdout


def tool(inst: Install, env: dict[str, str], cwd: Path, *args: str) -> str:
    proc = subprocess.run([*inst.cli, *args], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"git-agy-state {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def new_repo(env: dict[str, str], path: Path) -> Path:
    path.mkdir(parents=True)
    git(env, path, "init", "-q", "-b", "main")
    git(env, path, "commit", "-q", "--allow-empty", "-m", "first")
    return path


@dataclass(frozen=True)
class Row:
    measure: str
    subject: str
    baseline: str
    ratio: float | None  # of the medians: the verdict's
    target: float | None = None
    info: bool = False
    min_ratio: float | None = None  # of the minimums
    cpu_ratio: float | None = None  # of the median CPU times (subprocess rows)
    verdict: str | None = None  # set by rows judged otherwise (counts, a skipped row)

    def cells(self) -> list[str]:
        ratio = "—" if self.ratio is None else f"{self.ratio:.2f}×"
        extra = []
        if self.min_ratio is not None:
            extra.append(f"mins {self.min_ratio:.2f}×")
        if self.cpu_ratio is not None:
            extra.append(f"CPU {self.cpu_ratio:.2f}×")
        if extra:
            ratio += f" ({', '.join(extra)})"
        target = "—" if self.target is None else f"≤ {self.target:g}×"
        if self.verdict is not None:
            verdict = self.verdict
        elif self.info:
            verdict = "info"
        elif self.target is None or self.ratio is None:
            verdict = "reported"
        else:
            verdict = "ok" if self.ratio <= self.target else "**over target**"
        measure = f"(info) {self.measure}" if self.info else self.measure
        return [measure, self.subject, self.baseline, ratio, target, verdict]


def ms(label: str, t: Timing) -> str:
    cpu = "" if t.cpu_median is None else f"; CPU {t.cpu_median * 1e3:.1f}"
    return f"{label}: {t.median * 1e3:.1f} ms (min {t.min * 1e3:.1f}{cpu})"


def us(label: str, t: Timing) -> str:
    return f"{label}: {t.median * 1e6:.0f} µs (min {t.min * 1e6:.0f})"


def timed_row(
    measure: str,
    subject: tuple[str, Timing],
    baseline: tuple[str, Timing],
    target: float | None = None,
    info: bool = False,
    unit: Callable[[str, Timing], str] = ms,
) -> Row:
    subj, base = subject[1], baseline[1]
    cpu = None
    if subj.cpu_median is not None and base.cpu_median:
        cpu = subj.cpu_median / base.cpu_median
    return Row(
        measure,
        unit(*subject),
        unit(*baseline),
        subj.median / base.median,
        target,
        info,
        subj.min / base.min,
        cpu,
    )


def progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


# ---- row 1: save --------------------------------------------------------------------------


def prepare_save_repo(inst: Install, env: dict[str, str], path: Path) -> Path:
    repo = new_repo(env, path)
    # Every section but the last step through --set (the in-progress marker included), and
    # the last step through --todo: one real `patch` makes the first snapshot.
    *steps, last = SECTIONS["next_steps"]
    args = ["patch"]
    for key in KEYS:
        text = "\n".join(steps) if key == "next_steps" else section_text(key)
        args += ["--set", f"{key}={text}"]
    args += ["--todo", last.split("] ", 1)[1], "-m", "bench: initial state"]
    tool(inst, env, repo, *args)
    return repo


def rewrite_goal(view: Path, counter: int) -> None:
    lines = view.read_text(encoding="utf-8").split("\n")
    at = lines.index("## Goal") + 1
    lines[at] = f"{SECTIONS['goal'][0]} (edit {counter})"
    view.write_text("\n".join(lines), encoding="utf-8")


def chain_length(repo: Path) -> int:
    ws = Workspace.open(repo)
    return sum(1 for _ in ws.store.walk(ws.store.tip()))


def rows_save(inst: Install, env: dict[str, str], root: Path, plan: Plan) -> list[Row]:
    repo = prepare_save_repo(inst, env, root / "save")
    view = repo / "STATE.md"
    counter = iter(range(1, 1_000_000))
    import_pygit2 = [str(inst.python), "-c", "import pygit2"]

    def save() -> Sample:
        rewrite_goal(view, next(counter))  # not timed
        return timed_run([*inst.cli, "save"], repo, env)

    def baseline() -> Sample:
        return timed_run(import_pygit2, repo, env)

    progress(f"row 1: save vs import pygit2, {plan.reps} pairs")
    before = chain_length(repo)
    saved, base = interleaved(baseline, save, plan.reps)
    made = chain_length(repo) - before
    if made != plan.reps + WARMUP:
        raise SystemExit(f"expected {plan.reps + WARMUP} new snapshots from save, found {made}")
    rows = [
        timed_row(
            "`save` of a one-line change (subprocess)",
            ("`git-agy-state save`", saved),
            ("`python -c 'import pygit2'`", base),
            target=1.5,
        )
    ]

    progress(f"info: import pygit2 vs python -c pass, {plan.reps} pairs")
    imp, bare = interleaved(
        lambda: timed_run([str(inst.python), "-c", "pass"], repo, env),
        lambda: timed_run(import_pygit2, repo, env),
        plan.reps,
    )
    rows.append(
        timed_row(
            "interpreter + `import pygit2`",
            ("`python -c 'import pygit2'`", imp),
            ("`python -c pass`", bare),
            info=True,
        )
    )

    progress(f"info: --version start-up vs import pygit2, {plan.reps} pairs")
    version, imp2 = interleaved(
        lambda: timed_run(import_pygit2, repo, env),
        lambda: timed_run([*inst.cli, "--version"], repo, env),
        plan.reps,
    )
    rows.append(
        timed_row(
            "CLI start-up, no work",
            ("`git-agy-state --version`", version),
            ("`python -c 'import pygit2'`", imp2),
            info=True,
        )
    )

    progress(f"info: save vs --version start-up, {plan.reps} pairs")
    saved2, version2 = interleaved(
        lambda: timed_run([*inst.cli, "--version"], repo, env), save, plan.reps
    )
    rows.append(
        timed_row(
            "`save` beyond start-up (cold work + what it imports late)",
            ("`git-agy-state save`", saved2),
            ("`git-agy-state --version`", version2),
            info=True,
        )
    )

    progress(f"info: save use case in-process, {plan.inproc_reps} runs")
    samples = []
    for n in range(WARMUP + plan.inproc_reps):
        rewrite_goal(view, 500_000 + n)
        sample = in_process(lambda: state_uc.save(Workspace.open(repo)))
        if n >= WARMUP:
            samples.append(sample)
    work = timing(samples)
    rows.append(
        timed_row(
            "`save` work alone (in-process, warm: open + save use case)",
            ("in-process save", work),
            ("the `save` process above", saved),
            info=True,
        )
    )
    return rows


# ---- row 2: log on a long chain -------------------------------------------------------------


def build_chain(env: dict[str, str], path: Path, length: int, pack: bool = True) -> Path:
    """`length` snapshots written with the tool's Store (blob, tree, commit with trailers), then
    one compare-and-swap of the ref, then (`pack`) packed as `gc --auto` would have done long
    before; else left loose, as fewer than `gc.auto` (6,700) new objects are."""
    repo = new_repo(env, path)
    ws = Workspace.open(repo)
    store = ws.store
    head, branch = store.head_info()
    trailers = [("Agy-Format", FORMAT_VERSION), ("Agy-Sections", "goal")]
    trailers += [("Agy-Head", head or ""), ("Agy-Branch", branch or ""), ("Agy-Phase", "IDLE")]
    trailers += [(state_uc.TASK_BASE, head or "none")]  # as the tool writes every snapshot
    message = compose_message("save: goal", trailers)
    tip: str | None = None
    for n in range(length):
        data = document_text(n).encode()
        tip = store.create_snapshot(data, [tip] if tip else [], message)
    assert tip is not None
    if not store.compare_and_swap(ws.layout.state_ref, None, tip, "bench: build chain"):
        raise SystemExit("could not set the state ref of the fixture chain")
    if pack:
        git(env, repo, "gc", "--quiet", "--prune=now")
    return repo


# ---- agent hooks: inject, stop-guard, pre-compact -----------------------------------------------

# The least any Python hook that parses its JSON payload pays: the same venv's interpreter,
# isolated as our hooks run, importing json. The hook rows are measured against it.
FLOOR = ["-I", "-c", "import json"]
HOOK_TARGET = 1.25  # inject and stop-guard on a clean view: a read, a validation, one answer
# pre-compact on a clean view reads STATE.md and the view record and answers "nothing": less
# work than inject. Gemini CLI fires it before every model call, so it should cost no more than
# the floor plus the run-to-run spread of two interpreter starts (a few percent): 1.1×.
PRE_COMPACT_TARGET = 1.1
DIRTY_TARGET = 2.5  # the stop guard that saves, vs the one that only reads


def hook_payloads(root: Path, repo: Path) -> dict[str, Path]:
    """One payload file per (event, agent) the rows use, in each agent's documented shape."""
    transcript = str(root / "transcript.jsonl")
    shapes: dict[str, dict[str, object]] = {
        "inject-agy": {"conversationId": "c", "workspacePaths": [str(repo)], "invocationNum": 1},
        "stop-guard-agy": {"conversationId": "c", "workspacePaths": [str(repo)], "executionNum": 1},
        "inject-claude": {
            "session_id": "s",
            "transcript_path": transcript,
            "cwd": str(repo),
            "hook_event_name": "SessionStart",
            "source": "startup",
        },
        "pre-compact-gemini": {
            "session_id": "s",
            "transcript_path": transcript,
            "cwd": str(repo),
            "hook_event_name": "PreCompress",
            "timestamp": "2026-01-02T03:04:05.000Z",
            "trigger": "auto",
        },
    }
    paths = {}
    for name, payload in shapes.items():
        paths[name] = root / f"{name}.json"
        paths[name].write_text(json.dumps(payload))
    return paths


def check_hook(env: dict[str, str], repo: Path, argv: list[str], feed: Path) -> str:
    """Run a hook once (untimed) and return its answer; a hook fails open (exit 0, nothing said,
    the failure in hook.log), so a row would time a no-op unless this looks."""
    with open(feed, "rb") as stdin:
        proc = subprocess.run(argv, cwd=repo, env=env, stdin=stdin, capture_output=True, text=True)
    log = repo / ".git" / "agy" / "hook.log"
    if proc.returncode != 0 or log.exists():
        failed = log.read_text() if log.exists() else proc.stderr
        raise SystemExit(f"{' '.join(argv)} failed in the bench fixture:\n{failed}")
    return proc.stdout


def rows_hooks(inst: Install, env: dict[str, str], root: Path, plan: Plan) -> list[Row]:
    """The agent hooks run on every agent turn (pre-compact before every Gemini model call), as
    the settings `install` writes call them: the venv's `python -I -c 'import gitstate.__main__' hook …`
    (bench/install.py:agent_hook_argv)."""
    repo = prepare_save_repo(inst, env, root / "hooks")
    view = repo / "STATE.md"
    payloads = hook_payloads(root, repo)
    floor_argv = [str(inst.python), *FLOOR]

    def floor() -> Sample:
        return timed_run(floor_argv, repo, env)

    hook_argv = inst.agent_hook_argv()
    spelled = "python -I " + (
        "-m gitstate" if hook_argv[2:] == ["-m", "gitstate"] else "-c 'import gitstate.__main__'"
    )

    def argv(event: str, agent: str) -> list[str]:
        return [*hook_argv, "hook", event, "--agent", agent]

    goal = SECTIONS["goal"][0][:40]
    for event, agent, want in (
        ("inject", "agy", goal),
        ("inject", "claude", goal),
        ("stop-guard", "agy", "Measure save"),  # blocks on the step in progress
    ):
        said = check_hook(env, repo, argv(event, agent), payloads[f"{event}-{agent}"])
        if want not in said:
            raise SystemExit(f"hook {event} --agent {agent} did not answer as expected:\n{said}")
    check_hook(env, repo, argv("pre-compact", "gemini"), payloads["pre-compact-gemini"])

    rows = []
    before = chain_length(repo)
    for event, agent, label, target in (
        ("inject", "agy", "agy payload", HOOK_TARGET),
        ("inject", "claude", "claude payload", HOOK_TARGET),
        ("stop-guard", "agy", "clean view, agy payload", HOOK_TARGET),
        ("pre-compact", "gemini", "clean view, gemini payload", PRE_COMPACT_TARGET),
    ):
        command, feed = argv(event, agent), payloads[f"{event}-{agent}"]
        progress(f"row: hook {event} --agent {agent} vs the floor, {plan.reps} pairs")
        subject, base = interleaved(
            floor, lambda c=command, f=feed: timed_run(c, repo, env, f), plan.reps
        )
        rows.append(
            timed_row(
                f"`hook {event}` ({label}, subprocess)",
                (f"`{spelled} hook {event} --agent {agent}`", subject),
                ("`python -I -c 'import json'`", base),
                target=target,
            )
        )
    if chain_length(repo) != before:
        raise SystemExit("a hook saved on a clean view: the clean rows timed a save")

    stop, stop_feed = argv("stop-guard", "agy"), payloads["stop-guard-agy"]
    counter = iter(range(1, 1_000_000))

    def dirty() -> Sample:
        # The agent has just written STATE.md; the hook's cost starts when it is spawned, so
        # the edit is made here, untimed, and the clean side (no edit) is the same command.
        rewrite_goal(view, next(counter))
        return timed_run(stop, repo, env, stop_feed)

    progress(f"row: hook stop-guard on a dirty view vs a clean one, {plan.reps} pairs")
    saving, reading = interleaved(lambda: timed_run(stop, repo, env, stop_feed), dirty, plan.reps)
    made = chain_length(repo) - before
    if made != plan.reps + WARMUP:
        raise SystemExit(f"expected {plan.reps + WARMUP} saves from the dirty stop guard: {made}")
    check_hook(env, repo, stop, stop_feed)  # and no failure logged by any of them
    rows.insert(
        3,
        timed_row(
            "`hook stop-guard`, dirty view: saves a snapshot (subprocess, edit untimed)",
            ("dirty view, `hook stop-guard --agent agy`", saving),
            ("clean view, the same command", reading),
            target=DIRTY_TARGET,
        ),
    )

    # The dirty row's baseline is the clean hook, which now costs less than the floor; this row
    # puts the saving hook on the floor's scale too.
    progress(f"info: hook stop-guard on a dirty view vs the floor, {plan.reps} pairs")
    saving_again, base = interleaved(floor, dirty, plan.reps)
    rows.append(
        timed_row(
            "`hook stop-guard`, dirty view, against the floor (subprocess, edit untimed)",
            ("dirty view, `hook stop-guard --agent agy`", saving_again),
            ("`python -I -c 'import json'`", base),
            info=True,
        )
    )
    progress(f"info: the floor vs python -I -c pass, {plan.reps} pairs")
    base_floor, bare = interleaved(
        lambda: timed_run([str(inst.python), "-I", "-c", "pass"], repo, env), floor, plan.reps
    )
    rows.append(
        timed_row(
            "the hook floor: an isolated interpreter that imports json",
            ("`python -I -c 'import json'`", base_floor),
            ("`python -I -c pass`", bare),
            info=True,
        )
    )
    inject_feed = payloads["inject-agy"]
    progress(f"info: hook inject through the console script, {plan.reps} pairs")
    script, module = interleaved(
        lambda: timed_run(argv("inject", "agy"), repo, env, inject_feed),
        lambda: timed_run([*inst.cli, "hook", "inject", "--agent", "agy"], repo, env, inject_feed),
        plan.reps,
    )
    rows.append(
        timed_row(
            "`hook inject` through the console script instead",
            ("`git-agy-state hook inject --agent agy`", script),
            (f"`{spelled} hook inject --agent agy`", module),
            info=True,
        )
    )
    progress(f"info: a bare start of this bench's interpreter vs the wheel venv's, {plan.reps}")
    here, there = interleaved(
        lambda: timed_run([str(inst.python), "-c", "pass"], repo, env),
        lambda: timed_run([sys.executable, "-c", "pass"], repo, env),
        plan.reps,
    )
    rows.append(
        timed_row(
            "why a wheel: a bare start of the bench's own interpreter (editable finder `.pth`)",
            (f"`{sys.executable} -c pass`", here),
            ("the wheel venv's `python -c pass`", there),
            info=True,
        )
    )
    return rows


def rows_githooks(inst: Install, env: dict[str, str], root: Path, plan: Plan) -> list[Row]:
    """post-commit runs inside every `git commit`: its cost must not grow with the history."""
    long_len = HOOK_CHAIN_FULL if plan is FULL else HOOK_CHAIN_QUICK
    progress(f"row: building chains of {long_len:,} and {HOOK_CHAIN_SHORT} snapshots")
    long_repo = build_chain(env, root / "hook-long", long_len)
    short_repo = build_chain(env, root / "hook-short", HOOK_CHAIN_SHORT)
    argv = [*inst.hook_argv, "hook", "post-commit"]  # what the git hook runs
    for repo in (long_repo, short_repo):
        tool(inst, env, repo, "hook", "post-commit")  # the first run writes changed_files once
    progress(f"row: hook post-commit, {plan.reps} pairs")
    long_t, short_t = interleaved(
        lambda: timed_run(argv, short_repo, env),
        lambda: timed_run(argv, long_repo, env),
        plan.reps,
    )
    rows = [
        timed_row(
            f"`hook post-commit` on a {long_len:,}-snapshot task (subprocess)",
            (f"{long_len:,} snapshots", long_t),
            (f"{HOOK_CHAIN_SHORT} snapshots", short_t),
            target=1.1,
        )
    ]
    progress("row: pre-push set-up (agy remote, everything pushed once)")
    payloads = {}
    for repo in (long_repo, short_repo):
        remote = root / f"{repo.name}-remote.git"
        git(env, root, "init", "-q", "--bare", str(remote))
        git(env, repo, "remote", "add", "origin", str(remote))
        git(env, repo, "config", "user.email", SYNC_EMAIL)
        tool(inst, env, repo, "remote", "setup", "origin")
        tool(inst, env, repo, "sync")
        git(env, repo, "push", "-q", "--no-verify", "origin", "main")
        head = git(env, repo, "rev-parse", "HEAD").strip()
        payload = root / f"{repo.name}-pre-push.txt"
        payload.write_text(f"refs/heads/main {head} refs/heads/main {'0' * 40}\n")
        payloads[repo] = payload

    def pre_push(repo: Path) -> Callable[[], Sample]:
        # --after a pid that is not running: the step goes straight to its checks (ls-remote,
        # what is ours, a push of what is already there), as it does once the push is over.
        argv = [*inst.hook_argv, "hook", "pre-push", "--after", str(NO_SUCH_PID), "origin"]
        return lambda: timed_run(argv, repo, env, payloads[repo])

    progress(f"row: hook pre-push, {plan.reps} pairs")
    long_p, short_p = interleaved(pre_push(short_repo), pre_push(long_repo), plan.reps)
    log = (long_repo / ".git" / "agy" / "push.log").read_text()
    if "exit 0" not in log.splitlines()[-2] + log.splitlines()[-1]:
        raise SystemExit(f"pre-push did not carry in the fixture:\n{log[-2000:]}")
    rows.append(
        timed_row(
            f"`hook pre-push` step on a {long_len:,}-snapshot chain (subprocess)",
            (f"{long_len:,} snapshots", long_p),
            (f"{HOOK_CHAIN_SHORT} snapshots", short_p),
            target=1.1,
        )
    )
    return rows


def rows_log(inst: Install, env: dict[str, str], root: Path, plan: Plan) -> list[Row]:
    progress(f"row 2: building chains of {plan.chain:,} and {SHORT_CHAIN} snapshots")
    start = time.perf_counter()
    long_repo = build_chain(env, root / "chain-long", plan.chain)
    short_repo = build_chain(env, root / "chain-short", SHORT_CHAIN)
    progress(f"chains built and packed in {time.perf_counter() - start:.1f} s")
    argv = [*inst.cli, "log", "-n", str(LOG_LIMIT)]
    for repo, length in ((long_repo, plan.chain), (short_repo, SHORT_CHAIN)):
        shown = len(tool(inst, env, repo, "log", "-n", str(LOG_LIMIT)).splitlines())
        if shown != LOG_LIMIT or chain_length(repo) != length:
            raise SystemExit(f"{repo}: a broken fixture ({shown} lines from log -n {LOG_LIMIT})")

    progress(f"row 2: log -n {LOG_LIMIT}, {plan.reps} pairs")
    long_t, short_t = interleaved(
        lambda: timed_run(argv, short_repo, env),
        lambda: timed_run(argv, long_repo, env),
        plan.reps,
    )
    rows = [
        timed_row(
            f"`log -n {LOG_LIMIT}` on a {plan.chain:,}-snapshot chain (subprocess)",
            (f"{plan.chain:,} snapshots", long_t),
            (f"{SHORT_CHAIN} snapshots", short_t),
            target=1.3,
        )
    ]

    def read(repo: Path) -> Callable[[], Sample]:
        def run() -> Sample:
            return in_process(lambda: history.log(Workspace.open(repo), LOG_LIMIT))

        return run

    progress(f"info: log -n {LOG_LIMIT} in-process, {plan.inproc_reps} pairs")
    long_in, short_in = interleaved(read(short_repo), read(long_repo), plan.inproc_reps)
    rows.append(
        timed_row(
            f"`log -n {LOG_LIMIT}` work alone (in-process: open + history.log)",
            (f"{plan.chain:,} snapshots", long_in),
            (f"{SHORT_CHAIN} snapshots", short_in),
            info=True,
            unit=us,
        )
    )
    return rows


# ---- row 3: bytes per snapshot ----------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    loose: int  # apparent size of the loose object files
    loose_disk: int  # blocks they occupy
    packs: int  # every file under objects/pack (.pack, .idx, .rev, …)
    pack_data: int  # the .pack files alone

    @property
    def total(self) -> int:
        return self.loose + self.packs


def object_usage(gitdir: Path) -> Usage:
    loose = loose_disk = packs = pack_data = 0
    objects = gitdir / "objects"
    for sub in objects.iterdir():
        if len(sub.name) == 2 and sub.is_dir():
            for entry in os.scandir(sub):
                info = entry.stat()
                loose += info.st_size
                loose_disk += info.st_blocks * 512
    pack_dir = objects / "pack"
    if pack_dir.is_dir():
        for entry in os.scandir(pack_dir):
            size = entry.stat().st_size
            packs += size
            pack_data += size if entry.name.endswith(".pack") else 0
    return Usage(loose, loose_disk, packs, pack_data)


def rows_size(inst: Install, env: dict[str, str], root: Path, plan: Plan) -> list[Row]:
    count = plan.snapshots
    repo = new_repo(env, root / "size")
    # The tool would start `git gc --auto` in the background when loose objects pile up; that
    # would pack part of them mid-run, so it is switched off here and gc is run by hand.
    git(env, repo, "config", "gc.auto", "0")
    gitdir = repo / ".git"
    empty = object_usage(gitdir)
    progress(f"row 3: {count:,} one-section snapshots through state.patch (in-process)")
    start = time.perf_counter()
    varied = list(VARIED)
    for n in range(count):
        if n == 0:
            ops: tuple[SetSection, ...] = tuple(SetSection(k, section_text(k)) for k in KEYS)
        else:
            key = varied[n % len(varied)]
            ops = (SetSection(key, section_text(key, n)),)
        written = patch_uc.patch(Workspace.open(repo), Patch(ops))
        if written.outcome != "saved":
            raise SystemExit(f"snapshot {n}: expected a new snapshot, got {written.outcome}")
    made = time.perf_counter() - start
    progress(f"{count:,} snapshots in {made:.1f} s ({made / count * 1e3:.2f} ms each)")
    view_bytes = (repo / "STATE.md").stat().st_size
    before = object_usage(gitdir)
    loose = before.loose - empty.loose
    loose_disk = before.loose_disk - empty.loose_disk
    reflog = (gitdir / "logs" / "refs" / "agy" / "state").stat().st_size

    progress("row 3: git gc --prune=now")
    git(env, repo, "gc", "--quiet", "--prune=now")
    plain = object_usage(gitdir)
    progress("info: git gc --aggressive --prune=now")
    git(env, repo, "gc", "--quiet", "--aggressive", "--prune=now")
    aggressive = object_usage(gitdir)

    def per(value: int) -> str:
        return f"{value / count:,.0f} B/snapshot"

    def packed(usage: Usage) -> str:
        index = usage.packs - usage.pack_data
        return (
            f"packed: {per(usage.total)} (.pack {usage.pack_data / count:,.0f}, "
            f".idx/.rev {index / count:,.0f}, loose {usage.loose / count:,.0f})"
        )

    label = f"{count:,} changes, STATE.md {view_bytes:,} B"
    return [
        Row(
            f"bytes per snapshot after `git gc --prune=now` ({label})",
            packed(plain),
            f"loose, before gc: {per(loose)}",
            plain.total / loose,
        ),
        Row(
            "bytes per snapshot after `git gc --aggressive --prune=now`",
            packed(aggressive),
            f"loose, before gc: {per(loose)}",
            aggressive.total / loose,
            info=True,
        ),
        Row(
            "disk used by loose objects before gc (whole blocks)",
            f"on disk: {per(loose_disk)}",
            f"apparent size: {per(loose)}",
            loose_disk / loose,
            info=True,
        ),
        Row(
            "reflog of refs/agy/state (kept by gc for 90 days)",
            f"reflog: {per(reflog)}",
            f"packed objects: {per(plain.total)}",
            reflog / plain.total,
            info=True,
        ),
    ]


# ---- row 4: sync to a bare remote ---------------------------------------------------------------


def rows_sync(inst: Install, env: dict[str, str], root: Path, plan: Plan) -> list[Row]:
    """`sync` of a chain of SYNC_SNAPSHOTS new snapshots to a fresh bare remote, vs a plain `git
    push` of the same ref with the same refspec to another fresh bare remote."""
    count = SYNC_SNAPSHOTS
    progress(f"row 4: two repositories with {count:,} new (loose) snapshots each")
    repos = []
    for name in ("sync-subject", "sync-baseline"):
        repo = build_chain(env, root / name, count, pack=False)
        git(env, repo, "config", "user.email", SYNC_EMAIL)  # sync's <user> (docs/sync.md)
        # 3,000 loose objects stay under gc.auto (6,700); this only rules out a background gc.
        git(env, repo, "config", "gc.auto", "0")
        git(env, repo, "remote", "add", "origin", str(root / "none.git"))
        repos.append(repo)
    subject_repo, baseline_repo = repos
    tip = git(env, subject_repo, "rev-parse", "refs/agy/state").strip()
    if git(env, baseline_repo, "rev-list", "--count", "refs/agy/state").strip() != str(count):
        raise SystemExit("a broken sync fixture: the chain has the wrong length")
    user = carry.user_slug(SYNC_EMAIL)
    on_remote = f"refs/agy/users/{user}/state"
    numbers = iter(range(1_000_000))

    def with_fresh_remote(repo: Path, argv: list[str]) -> Callable[[], Sample]:
        """Point `origin` at a new bare remote (not timed), run argv (timed), check the remote
        got the chain and remove it (not timed)."""

        def run() -> Sample:
            remote = root / "sync-remotes" / f"r{next(numbers)}.git"
            git(env, root, "init", "-q", "--bare", str(remote))
            git(env, repo, "remote", "set-url", "origin", str(remote))
            sample = timed_run(argv, repo, env)
            got = git(env, remote, "rev-parse", "--verify", "-q", on_remote).strip()
            want = git(env, repo, "rev-parse", "refs/agy/state").strip()
            if got != want:
                raise SystemExit(f"{' '.join(argv)}: the remote has {got or 'nothing'}")
            shutil.rmtree(remote)
            return sample

        return run

    sync_argv = [*inst.cli, "sync"]
    push_argv = ["git", "push", "-q", "origin", f"refs/agy/state:{on_remote}"]
    progress(f"row 4: sync vs git push of {count:,} snapshots, {plan.reps} pairs")
    synced, pushed = interleaved(
        with_fresh_remote(baseline_repo, push_argv),
        with_fresh_remote(subject_repo, sync_argv),
        plan.reps,
    )
    if git(env, subject_repo, "rev-parse", "refs/agy/state").strip() != tip:
        raise SystemExit("sync moved the local chain of the sync fixture")
    rows = [
        timed_row(
            f"`sync` of {count:,} new snapshots to a fresh bare remote (subprocess)",
            ("`git-agy-state sync`", synced),
            (f"`git push origin refs/agy/state:refs/agy/users/{user}/state`", pushed),
            target=1.5,
        )
    ]

    def sync_in_process() -> Sample:
        remote = root / "sync-remotes" / f"r{next(numbers)}.git"
        git(env, root, "init", "-q", "--bare", str(remote))
        git(env, subject_repo, "remote", "set-url", "origin", str(remote))
        sample = in_process(lambda: sync_uc.sync(Workspace.open(subject_repo)))
        shutil.rmtree(remote)
        return sample

    progress(f"info: sync use case in-process vs git push, {plan.reps} pairs")
    work, pushed2 = interleaved(
        with_fresh_remote(baseline_repo, push_argv), sync_in_process, plan.reps
    )
    rows.append(
        timed_row(
            "`sync` work alone (in-process: open + sync use case, its git fetch and push)",
            ("in-process sync", work),
            ("the `git push` process", pushed2),
            info=True,
        )
    )
    return rows


# ---- report -----------------------------------------------------------------------------------


def table(rows: list[Row]) -> str:
    header = ["measure", "subject", "baseline", "ratio", "target", "verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def machine_line(plan: Plan, mode: str, elapsed: float) -> str:
    try:
        load = ", load avg " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = ""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    return (
        f"Machine: Python {platform.python_version()} ({platform.python_implementation()}), "
        f"pygit2 {pygit2.__version__} / libgit2 {pygit2.LIBGIT2_VERSION}, "
        f"{git_version.strip()}, {os.cpu_count()} CPUs ({usable} usable){load}, "
        f"{platform.system()} {platform.machine()}. "
        f"Run: {mode}, {plan.reps} interleaved pairs per subprocess row "
        f"(+{WARMUP} warm-up), {elapsed:.0f} s."
    )


ROWS: dict[str, Callable[[Install, dict[str, str], Path, Plan], list[Row]]] = {
    "save": rows_save,
    "hooks": rows_hooks,
    "log": rows_log,
    "githooks": rows_githooks,
    "size": rows_size,
    "sync": rows_sync,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: fewer repetitions, smaller fixtures"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=ROWS,
        help="run only these rows (repeatable): " + ", ".join(ROWS),
    )
    add_source_option(parser)
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else FULL
    mode = "--quick" if args.quick else "full"
    chosen = args.only or list(ROWS)
    if args.only:
        mode += ", only " + ", ".join(chosen)
    report = check_text(document_text(0))
    if not report.valid:
        raise SystemExit(f"the benchmark's STATE.md is invalid: {report.errors}")
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agy-bench-", ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        # Before the seal: pip needs the real HOME's config and cache.
        inst = build(root, args.source)
        env = inst.environ(sealed_env(root))
        seal_this_process(env, root)
        groups = [ROWS[name](inst, env, root, plan) for name in ROWS if name in chosen]
    # The measured rows first, then the informational ones.
    rows = [row for group in groups for row in group if not row.info]
    rows += [row for group in groups for row in group if row.info]
    print(table(rows))
    print()
    print(machine_line(plan, mode, time.perf_counter() - began))
    return 0


if __name__ == "__main__":
    sys.exit(main())
