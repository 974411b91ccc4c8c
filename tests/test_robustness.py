"""Nothing lost, bad input gets one clear line (docs/format.md, docs/refs.md, docs/commands.md,
docs/exit-codes.md).

Real repositories and real processes: writers racing each other, a foreign `git update-ref`
between our read and our write, writers killed with SIGKILL at random moments, a corpus of
broken STATE.md files, and the exit codes and messages a script relies on.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import pygit2
import pytest
from conftest import Repo
from support import EN_SAMPLE, run_tool, wait_until

from gitstate.document.model import Document, parse
from gitstate.document.patch import AddLine, Patch, apply
from gitstate.document.validate import check_bytes
from gitstate.errors import WorkAtRisk
from gitstate.storage.view import TMP_PREFIX
from gitstate.usecases.state import writer as state_uc
from gitstate.usecases.workspace import Workspace

STATE_REF = "refs/agy/state"


# ---- helpers ------------------------------------------------------------------------------


def chain(repo: Repo) -> list[str]:
    """The snapshot commits of refs/agy/state, newest first."""
    out = repo.git("rev-list", STATE_REF, check=False)
    return out.split()


def blob(repo: Repo, rev: str | None) -> bytes:
    """`git show REV:STATE.md`, byte for byte."""
    assert rev is not None
    proc = subprocess.run(
        ["git", "show", f"{rev}:STATE.md"], cwd=repo.path, capture_output=True, check=True
    )
    return proc.stdout


def doc_at(repo: Repo, rev: str | None) -> Document:
    return parse(blob(repo, rev).decode("utf-8"))


def reflog(repo: Repo) -> list[str]:
    """The new value of every reflog entry of refs/agy/state, newest first."""
    return repo.git("reflog", "show", "--format=%H", STATE_REF).split()


def assert_fsck_clean(repo: Repo) -> None:
    """`git fsck --strict` finds no error (dangling objects are fine)."""
    proc = subprocess.run(
        ["git", "fsck", "--strict", "--no-progress"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    bad = [
        line
        for line in (proc.stdout + proc.stderr).splitlines()
        if line.startswith(("error", "fatal", "missing", "broken", "bad"))
    ]
    assert proc.returncode == 0 and not bad, proc.stdout + proc.stderr


def assert_linear(repo: Repo) -> None:
    """The chain only ever moved forward: no merge, every snapshot on the first-parent line."""
    assert repo.git("rev-list", "--min-parents=2", STATE_REF) == ""
    first_parent = repo.git("rev-list", "--first-parent", STATE_REF).split()
    assert first_parent == chain(repo)


def parents(repo: Repo, commit: str | None) -> list[str]:
    assert commit is not None
    return repo.git("rev-list", "--parents", "-n", "1", commit).split()[1:]


def section_text(doc: Document, key: str) -> str:
    return "\n".join(doc.section(key))


def single_value(doc: Document, key: str) -> str:
    """The one line of a section set with `--set KEY=TEXT`, without its bullet."""
    lines = doc.section(key)
    assert len(lines) == 1, lines
    return str(lines[0]).removeprefix("- ")


def seed(cli: Any, *args: str) -> str:
    result = cli("patch", "--set", "goal=Make the pool retry with backoff", *args)
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def foreign_snapshot(repo: Repo, parent: str, heading: str, line: str) -> str:
    """A snapshot written by plain git, as another checkout of the chain would: a child of
    `parent` with `line` added under `## heading`. No ref moves."""
    text = blob(repo, parent).decode("utf-8")
    marker = f"## {heading}\n"
    assert marker in text
    return foreign_commit(repo, parent, text.replace(marker, marker + line + "\n", 1))


def foreign_commit(repo: Repo, parent: str, text: str) -> str:
    """A snapshot holding `text`, child of `parent`, made with git plumbing only."""
    blob_id = repo.git("hash-object", "-w", "--stdin", input=text).strip()
    tree = repo.git("mktree", input=f"100644 blob {blob_id}\tSTATE.md\n").strip()
    message = "foreign writer\n\nAgy-Format: 1\nAgy-Sections: failed_attempts\nAgy-Phase: IDLE\n"
    return repo.git("commit-tree", tree, "-p", parent, input=message).strip()


def ref_moved(repo: Repo, since: str | None) -> bool:
    return repo.ref() != since


# ---- 1. concurrency: real processes racing -----------------------------------------------

# A driver: imports the tool once, says it is ready, waits for the starting gun, then runs the
# CLI in process for each call it was given and prints every call's exit code and JSON answer.
DRIVER = """
import contextlib, io, json, os, sys, time
from gitstate.cli import main

go, ready, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
results = []
for args in calls:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args + ["--json"], standalone_mode=False)
    text = out.getvalue()
    try:
        body = json.loads(text)
    except ValueError:
        body = text
    results.append({"args": args, "code": code or 0, "body": body})
print(json.dumps(results))
"""


def race(tmp_path: Path, cwd: Path, plans: list[list[list[str]]]) -> list[list[dict[str, Any]]]:
    """Run one driver process per plan, all released at the same moment; their results."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    go = tmp_path / f"go-{time.monotonic_ns()}"
    procs, ready = [], []
    for n, calls in enumerate(plans):
        flag = tmp_path / f"ready-{go.name}-{n}"
        ready.append(flag)
        procs.append(
            subprocess.Popen(
                [sys.executable, str(driver), str(go), str(flag), json.dumps(calls)],
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        for proc, flag in zip(procs, ready, strict=True):
            wait_until(flag.exists, what="the driver to be ready", proc=proc)
        go.touch()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            results.append(json.loads(out))
        return results
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


OWNED = ("goal", "open_issues", "failed_attempts", "changed_files")
CALLS_EACH = 8


def test_four_processes_patching_at_once_lose_no_snapshot(
    repo: Repo, cli: Any, tmp_path: Path
) -> None:
    seed(cli)
    start = repo.ref()
    assert start is not None
    # Each process owns one section and sets it to a counter, so the tip can hold every
    # process's last value whatever the interleaving (a section holds at most 5 lines).
    plans = [
        [["patch", "--set", f"{key}=p{k}-{i}"] for i in range(CALLS_EACH)]
        for k, key in enumerate(OWNED)
    ]
    results = race(tmp_path, repo.path, plans)

    made: dict[str, tuple[int, int]] = {}
    for k, per_process in enumerate(results):
        assert len(per_process) == CALLS_EACH
        for i, call in enumerate(per_process):
            assert call["code"] == 0, call
            assert call["body"]["outcome"] == "saved", call
            made[call["body"]["snapshot"]] = (k, i)
    assert len(made) == len(OWNED) * CALLS_EACH  # every call its own snapshot

    # Exactly one snapshot per successful call: the chain is the seed plus those, nothing else.
    snaps = chain(repo)
    assert len(snaps) == 1 + len(made)
    assert set(snaps) == {start, *made}
    assert_linear(repo)

    # Every call's value is in the snapshot it made, and each process's calls sit on the
    # chain in the order it made them.
    order = list(reversed(snaps))
    for commit, (k, i) in made.items():
        assert f"p{k}-{i}" in section_text(doc_at(repo, commit), OWNED[k])
    for k in range(len(OWNED)):
        positions = [order.index(results[k][i]["body"]["snapshot"]) for i in range(CALLS_EACH)]
        assert positions == sorted(positions)

    # The tip holds each process's last value.
    tip = repo.ref()
    assert tip == snaps[0]
    final = doc_at(repo, tip)
    for k, key in enumerate(OWNED):
        assert single_value(final, key) == f"p{k}-{CALLS_EACH - 1}"

    # The view is the tip, byte for byte; the store is sound; one reflog entry per snapshot.
    assert repo.view.read_bytes() == blob(repo, STATE_REF)
    assert_fsck_clean(repo)
    log = reflog(repo)
    assert len(log) == len(snaps)
    assert set(log) == set(snaps)


def test_two_processes_patching_different_sections_both_win(
    repo: Repo, cli: Any, tmp_path: Path
) -> None:
    seed(cli)
    for round_ in range(3):
        before = repo.ref()
        plans = [
            [["patch", "--set", f"open_issues=from A, round {round_}"]],
            [["patch", "--set", f"failed_attempts=from B, round {round_}"]],
        ]
        (a,), (b,) = race(tmp_path, repo.path, plans)
        assert a["code"] == 0 and a["body"]["outcome"] == "saved", a
        assert b["code"] == 0 and b["body"]["outcome"] == "saved", b
        tip = repo.ref()
        assert tip in (a["body"]["snapshot"], b["body"]["snapshot"])
        # One built on the other: before → first → second.
        first, second = (a, b) if tip == b["body"]["snapshot"] else (b, a)
        assert parents(repo, second["body"]["snapshot"]) == [first["body"]["snapshot"]]
        assert parents(repo, first["body"]["snapshot"]) == [before]
        final = doc_at(repo, tip)
        assert single_value(final, "open_issues") == f"from A, round {round_}"
        assert single_value(final, "failed_attempts") == f"from B, round {round_}"
        assert repo.view.read_bytes() == blob(repo, STATE_REF)
    assert len(chain(repo)) == 1 + 2 * 3
    assert len(reflog(repo)) == 1 + 2 * 3


# ---- 2. compare-and-swap against a writer that does not take our lock ---------------------


def test_a_ref_moved_by_plain_git_between_read_and_write_is_built_on(repo: Repo, cli: Any) -> None:
    """The foreign writer strikes at the exact moment: after our write loop read the tip and
    while it builds the new document (a Producer passed to the write loop runs
    `git update-ref` on its first call). Our snapshot must not overwrite theirs."""
    seed(cli)
    ours_before = repo.ref()
    assert ours_before is not None
    theirs = foreign_snapshot(repo, ours_before, "Tried and failed", "- fixed 1 s retry: stampede")
    change = Patch((AddLine("open_issues", "read the limit from the environment"),))
    seen: list[Document | None] = []

    def produce(start: Document | None) -> state_uc.Produced:
        seen.append(start)
        if len(seen) == 1:
            repo.git("update-ref", "-m", "foreign", STATE_REF, theirs, ours_before)
        applied = apply(start or parse(blob(repo, ours_before).decode()), change)
        return state_uc.Produced(applied.document, applied.notices)

    written = state_uc.write_as(
        Workspace.open(),
        state_uc.HOOK_SAVE,  # a program's own write: never archives, refuses an over-limit view
        produce,
        lambda changed, _summary: "patch: add to open_issues",
    )

    assert written.outcome == "saved"
    assert len(seen) == 2  # the swap failed once, and the patch was re-applied on their tip
    tip = repo.ref()
    assert tip == written.snapshot
    assert parents(repo, tip) == [theirs]
    final = doc_at(repo, tip)
    assert "- fixed 1 s retry: stampede" in final.section("failed_attempts")
    assert "- read the limit from the environment" in final.section("open_issues")
    assert repo.view.read_bytes() == blob(repo, tip)
    assert reflog(repo)[:2] == [tip, theirs]
    assert_fsck_clean(repo)


def test_a_writer_that_keeps_moving_the_ref_is_never_overwritten(repo: Repo, cli: Any) -> None:
    """If the ref moves under every attempt, the write gives up (exit 5), saving nothing."""
    seed(cli)
    view_before = repo.view.read_bytes()
    moved: list[str] = []

    def produce(start: Document | None) -> state_uc.Produced:
        tip = repo.ref()
        assert tip is not None
        text = re.sub(
            r"(?m)^(## Goal\n).*\n", rf"\g<1>foreign goal {len(moved)}\n", blob(repo, tip).decode()
        )
        theirs = foreign_commit(repo, tip, text)
        repo.git("update-ref", STATE_REF, theirs, tip)
        moved.append(theirs)
        assert start is not None
        applied = apply(start, Patch((AddLine("open_issues", "mine"),)))
        return state_uc.Produced(applied.document, applied.notices)

    with pytest.raises(WorkAtRisk, match="nothing was saved"):
        state_uc.write_as(
            Workspace.open(),
            state_uc.HOOK_SAVE,
            produce,
            lambda changed, _summary: "mine",
        )
    assert len(moved) == state_uc.MAX_ATTEMPTS
    assert repo.ref() == moved[-1]  # theirs, never ours
    assert chain(repo)[: len(moved)] == moved[::-1]
    assert "- mine" not in blob(repo, STATE_REF).decode()
    assert repo.view.read_bytes() == view_before


def test_patch_after_a_foreign_update_ref_builds_on_the_moved_tip(repo: Repo, cli: Any) -> None:
    """Through the CLI: a clean view written from the old tip, the ref moved by plain git."""
    seed(cli)
    old = repo.ref()
    assert old is not None
    theirs = foreign_snapshot(repo, old, "Tried and failed", "- their line")
    repo.git("update-ref", STATE_REF, theirs, old)
    result = cli("patch", "--add", "open_issues=my line")
    assert result.exit_code == 0, result.output
    tip = repo.ref()
    assert parents(repo, tip) == [theirs]
    final = doc_at(repo, tip)
    assert final.section("failed_attempts") == ("- their line",)
    assert final.section("open_issues") == ("- my line",)
    assert repo.view.read_bytes() == blob(repo, tip)


def test_unsaved_edits_and_a_foreign_update_ref_are_merged(repo: Repo, cli: Any) -> None:
    """A dirty view, the ref moved by plain git, then a patch: all three changes survive."""
    seed(cli)
    old = repo.ref()
    assert old is not None
    text = repo.view.read_text()
    repo.view.write_text(text.replace("## Key data (verbatim)\n", "## Key data (verbatim)\n- K1\n"))
    theirs = foreign_snapshot(repo, old, "Tried and failed", "- their line")
    repo.git("update-ref", STATE_REF, theirs, old)
    result = cli("patch", "--add", "open_issues=my line", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["merged"] is True
    tip = repo.ref()
    assert parents(repo, tip) == [theirs]
    final = doc_at(repo, tip)
    assert final.section("key_data") == ("- K1",)
    assert final.section("failed_attempts") == ("- their line",)
    assert final.section("open_issues") == ("- my line",)
    assert repo.view.read_bytes() == blob(repo, tip)


# ---- 3. kill -9 at random moments -----------------------------------------------------------

# Saves and patches as fast as it can, forever: a patch, then an agent-style edit of the view
# (written atomically, as an editor would) followed by a save.
WRITER = """
import os, re, sys
from gitstate.cli import main

i = 0
while True:
    i += 1
    main(["patch", "--set", f"goal=goal {os.getpid()} {i}"], standalone_mode=False)
    try:
        with open("STATE.md", encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        continue
    edited = re.sub(r"(?m)^- issue \\d+$", f"- issue {i}", text)
    tmp = f".writer-{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(edited)
    os.replace(tmp, "STATE.md")
    main(["save"], standalone_mode=False)
"""

KILL_ROUNDS = 6


def test_kill_9_at_random_moments_leaves_a_sound_chain(
    repo: Repo, cli: Any, tmp_path: Path
) -> None:
    seed(cli, "--add", "open_issues=issue 0")
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER)
    lock = repo.path / ".git" / (STATE_REF + ".lock")
    seed_value = random.randrange(1 << 30)
    rng = random.Random(seed_value)
    for round_ in range(KILL_ROUNDS):
        where = f"round {round_} (random seed {seed_value})"
        before = repo.ref()
        with open(tmp_path / f"writer-{round_}.err", "w") as err:
            proc = subprocess.Popen(
                [sys.executable, str(writer)],
                cwd=repo.path,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
            try:
                # Polled tightly: the kill is meant to land within milliseconds of it.
                first = partial(ref_moved, repo, before)
                wait_until(first, what=f"a first snapshot in {where}", proc=proc, max_delay=0.002)
                # Kill at a random moment: soon after the first snapshot or a few dozen later.
                time.sleep(rng.uniform(0, 0.02 + 0.03 * round_))
                os.kill(proc.pid, signal.SIGKILL)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL, (where, Path(err.name).read_text())

        # The store is sound and the ref sits on a valid snapshot; so does every snapshot.
        assert_fsck_clean(repo)
        assert_linear(repo)
        git = pygit2.Repository(str(repo.path))
        for commit in chain(repo):
            tree = git[commit].peel(pygit2.Tree)
            data = git[tree["STATE.md"].id].peel(pygit2.Blob).data
            report = check_bytes(data)
            assert report.valid, (where, commit, report.errors)
        tip_file = tmp_path / f"tip-{round_}.md"
        tip_file.write_bytes(blob(repo, STATE_REF))
        checked = cli("check", str(tip_file))
        assert checked.exit_code == 0, (where, checked.output)

        # A fresh process right after the kill: no stale lock or temp file stands in its way.
        # (A ref lock left by a writer killed inside libgit2's update is waited out: ~2 s; a
        # hang fails on run_tool's timeout.)
        stale_ref_lock = lock.exists()
        after = run_tool("patch", "--set", f"failed_attempts=after kill {round_}", cwd=repo.path)
        assert after.returncode == 0, (where, stale_ref_lock, after.stdout, after.stderr)
        tip = repo.ref()
        assert tip is not None
        assert parents(repo, tip)[0] in chain(repo)
        assert single_value(doc_at(repo, tip), "failed_attempts") == f"after kill {round_}"
        assert repo.view.read_bytes() == blob(repo, tip), where
        assert not list(repo.path.glob(TMP_PREFIX + "*")), where
        assert not lock.exists(), where
        assert len(reflog(repo)) == len(chain(repo)), where
    assert len(chain(repo)) > 1 + 2 * KILL_ROUNDS  # the writers did write, round after round


def test_a_ref_lock_left_by_a_killed_writer_does_not_block_the_next_patch(
    repo: Repo, cli: Any
) -> None:
    """A writer killed inside libgit2's ref update leaves `refs/agy/state.lock`; nothing
    alive holds it. The next patch waits it out (bounded: a hang fails on run_tool's timeout) and
    then succeeds."""
    seed(cli)
    tip = repo.ref()
    lock = repo.path / ".git" / (STATE_REF + ".lock")
    lock.write_text(f"{tip}\n")  # just now: as fresh as a kill can leave it
    result = run_tool("patch", "--set", "goal=after the kill", cwd=repo.path)
    assert result.returncode == 0, result.stderr
    assert not lock.exists()
    assert parents(repo, repo.ref()) == [tip]
    assert doc_at(repo, STATE_REF).section("goal") == ("after the kill",)


# ---- 4. a corpus of bad STATE.md files -----------------------------------------------------

_BLOCKS = EN_SAMPLE.rstrip("\n").split("\n\n")  # title, then the seven sections in order


def _join(blocks: list[str]) -> bytes:
    return ("\n\n".join(blocks) + "\n").encode()


def _too_big() -> bytes:
    data = EN_SAMPLE.encode()
    filler = b"- a line of filler\n"
    return data + filler * ((5 * 1024 * 1024 - len(data)) // len(filler) + 1)


_DONE = "- [x] exponential backoff | verified: pytest tests/test_retry.py passes"
_DIRECTORY = object()  # stands for: a directory named STATE.md

# name, content, how many problems (None: any number), what the problems' lines are:
# "int" (a line number each), "null" (a file-level problem), "any" (either).
CORPUS: list[Any] = [
    pytest.param(_join(_BLOCKS[:3] + _BLOCKS[4:]), None, "int", id="missing-section"),
    pytest.param(
        _join([_BLOCKS[0], _BLOCKS[2], _BLOCKS[1], *_BLOCKS[3:]]), None, "int", id="reordered"
    ),
    pytest.param(_join(_BLOCKS[:2] + _BLOCKS[1:]), None, "int", id="duplicated-section"),
    pytest.param(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4, 1, "any", id="binary"
    ),
    pytest.param(
        EN_SAMPLE.encode().replace(b"retry with", b"retry \xff\xfe with"), 1, "any", id="bad-utf8"
    ),
    pytest.param(_too_big(), 1, "null", id="5-MB"),
    pytest.param(b"\xef\xbb\xbf" + EN_SAMPLE.encode(), 1, "int", id="utf8-bom"),
    pytest.param(
        EN_SAMPLE.replace(_DONE, "- [x] exponential backoff")
        .replace("\n", "\r\n")
        .encode(),  # CRLF is fine; a Done line without its verification is not
        None,
        "int",
        id="crlf-invalid-body",
    ),
    pytest.param(b"", None, "int", id="empty"),
    pytest.param(
        _DIRECTORY,
        None,
        "null",
        id="directory",
    ),
]


def _plant(repo: Repo, content: Any) -> None:
    if repo.view.exists():
        repo.view.unlink()
    if content is _DIRECTORY:
        repo.view.mkdir()
        (repo.view / "notes.txt").write_text("not a state file\n")
    else:
        repo.view.write_bytes(content)


def _snapshot_of(repo: Repo) -> bytes | list[str]:
    return sorted(os.listdir(repo.view)) if repo.view.is_dir() else repo.view.read_bytes()


def _assert_one_clear_line(result: Any) -> None:
    """`error: …` first on stderr, no traceback, no internal error."""
    lines = result.stderr.splitlines()
    assert lines and lines[0].startswith("error: "), result.output
    assert "internal error" not in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("content", "count", "lines"), CORPUS)
def test_save_refuses_a_bad_view_and_moves_no_ref(
    repo: Repo, cli: Any, content: Any, count: int | None, lines: str
) -> None:
    seed(cli)
    before = repo.ref()
    _plant(repo, content)
    planted = _snapshot_of(repo)
    result = cli("save")
    assert result.exit_code == 1, result.output
    assert repo.ref() == before
    _assert_one_clear_line(result)
    if count is not None:
        listed = [line for line in result.stderr.splitlines() if line.startswith("  - ")]
        assert len(listed) == count, result.stderr
    assert _snapshot_of(repo) == planted  # the user's file is left as it is
    result = cli("save", "--json")
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["code"] == 1 and body["error"] and body["errors"], body
    assert repo.ref() == before
    # The same through a real process: one line, the same code, no traceback.
    proc = run_tool("save", cwd=repo.path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr + proc.stdout
    assert repo.ref() == before


@pytest.mark.parametrize(("content", "count", "lines"), CORPUS)
def test_check_json_lists_the_problems_with_their_lines(
    repo: Repo, cli: Any, content: Any, count: int | None, lines: str
) -> None:
    seed(cli)
    _plant(repo, content)
    result = cli("check", "--json")
    assert result.exit_code == 1, result.output
    body = json.loads(result.stdout)
    assert body["valid"] is False
    assert body["source"] == "view"
    errors = body["errors"]
    assert errors
    if count is not None:
        assert len(errors) == count, errors
    for error in errors:
        assert isinstance(error["message"], str) and error["message"]
        line = error["line"]
        if lines == "int":
            assert isinstance(line, int) and line >= 1, error
        elif lines == "null":
            assert line is None, error
        else:
            assert line is None or (isinstance(line, int) and line >= 1), error
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("content", "count", "lines"), CORPUS)
def test_patch_refuses_an_invalid_view_naming_its_errors(
    repo: Repo, cli: Any, content: Any, count: int | None, lines: str
) -> None:
    seed(cli)
    before = repo.ref()
    _plant(repo, content)
    planted = _snapshot_of(repo)
    result = cli("patch", "--add", "open_issues=one more")
    assert result.exit_code == 1, result.output
    assert repo.ref() == before
    _assert_one_clear_line(result)
    problems = json.loads(cli("check", "--json").stdout)["errors"]
    for problem in problems[:20]:
        assert problem["message"] in result.stderr
    assert _snapshot_of(repo) == planted


def test_a_valid_crlf_view_is_accepted_by_save(repo: Repo, cli: Any) -> None:
    seed(cli)
    before = repo.ref()
    repo.view.write_bytes(EN_SAMPLE.replace("\n", "\r\n").encode())
    assert json.loads(cli("check", "--json").stdout)["valid"] is True
    result = cli("save")
    assert result.exit_code == 0, result.output
    tip = repo.ref()
    assert tip != before and parents(repo, tip) == [before]
    stored = blob(repo, tip)
    assert b"\r" not in stored  # the snapshot holds the canonical rendering
    assert doc_at(repo, tip).section("done") == (_DONE,)


def test_the_too_big_error_gives_the_file_size(repo: Repo, cli: Any) -> None:
    seed(cli)
    data = _too_big()
    repo.view.write_bytes(data)
    (error,) = json.loads(cli("check", "--json").stdout)["errors"]
    assert str(len(data)) in error["message"], error["message"]


# ---- 5. exit codes and messages ------------------------------------------------------------

EVERY_COMMAND = [
    ("init",),
    ("save",),
    ("patch", "--set", "goal=x"),
    ("status",),
    ("log",),
    ("show",),
    ("check",),
    ("diff",),
    ("checkout",),
    ("restore", "~1"),
]


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory in no git repository; the current directory."""
    where = tmp_path / "outside"
    where.mkdir()
    probe = subprocess.run(
        ["git", "rev-parse", "--git-dir"], cwd=where, capture_output=True, check=False
    )
    assert probe.returncode != 0, "the temp dir must not be inside a repository"
    monkeypatch.chdir(where)
    return where


@pytest.mark.parametrize("args", EVERY_COMMAND, ids=lambda a: a[0])
def test_outside_a_repository_every_command_exits_6(
    outside: Path, cli: Any, args: tuple[str, ...]
) -> None:
    result = cli(*args)
    assert result.exit_code == 6, result.output
    assert result.stderr.splitlines()[0] == (
        "error: not a git repository (or any of the parent directories)"
    )
    assert result.stdout == ""
    result = cli(*args, "--json")
    assert result.exit_code == 6
    body = json.loads(result.stdout)
    assert body["code"] == 6 and body["error"].startswith("not a git repository")
    assert not list(outside.iterdir())  # nothing was written there


def test_outside_a_repository_in_a_real_process(outside: Path) -> None:
    result = run_tool("status", cwd=outside)
    assert result.returncode == 6
    assert result.stderr.startswith("error: not a git repository")
    assert "Traceback" not in result.stderr


USAGE_ERRORS = [
    pytest.param(("bogus",), None, id="unknown-command"),
    pytest.param(("save", "--bogus"), None, id="bad-option"),
    pytest.param(("log", "-n", "many"), None, id="bad-option-value"),
    pytest.param(("patch",), None, id="patch-without-ops"),
    pytest.param(("patch", "--done", "1"), None, id="done-without-verify"),
    pytest.param(("patch", "--block", "1"), None, id="block-without-reason"),
    pytest.param(("patch", "--set", "goal"), None, id="set-without-equals"),
    pytest.param(("patch", "--ops", "-"), '{"ops": [{"op": "set",', id="malformed-ops-json"),
    pytest.param(("patch", "--ops", "-"), '{"ops": [{"op": "explode"}]}', id="unknown-op"),
    pytest.param(("patch", "--ops", "-"), "[1, 2, 3]", id="ops-not-an-object"),
]


@pytest.mark.parametrize(("args", "stdin"), USAGE_ERRORS)
def test_usage_errors_exit_64(
    repo: Repo, cli: Any, args: tuple[str, ...], stdin: str | None
) -> None:
    seed(cli)
    before = repo.ref()
    result = cli(*args, input=stdin)
    assert result.exit_code == 64, result.output
    _assert_one_clear_line(result)
    result = cli(*args, "--json", input=stdin)
    assert result.exit_code == 64, result.output
    body = json.loads(result.stdout)
    assert body["code"] == 64 and isinstance(body["error"], str) and body["error"]
    assert repo.ref() == before


@pytest.mark.parametrize(
    "args", [("show", "nope"), ("restore", "nope"), ("show", "~99"), ("diff", "nope")]
)
def test_unknown_snapshots_exit_3(repo: Repo, cli: Any, args: tuple[str, ...]) -> None:
    seed(cli)
    before = repo.ref()
    view_before = repo.view.read_bytes()
    result = cli(*args)
    assert result.exit_code == 3, result.output
    _assert_one_clear_line(result)
    result = cli(*args, "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["code"] == 3
    assert repo.ref() == before
    assert repo.view.read_bytes() == view_before


@pytest.mark.parametrize(
    "args", [("checkout",), ("checkout", "~1"), ("restore", "~1")], ids=" ".join
)
def test_checkout_and_restore_keep_a_dirty_view(
    repo: Repo, cli: Any, args: tuple[str, ...]
) -> None:
    seed(cli)
    assert cli("patch", "--add", "open_issues=second snapshot").exit_code == 0
    old = repo.ref()
    assert old is not None
    dirty = repo.view.read_bytes().replace(
        b"## Tried and failed\n", b"## Tried and failed\n- unsaved: tried a fixed delay\n"
    )
    repo.view.write_bytes(dirty)

    result = cli(*args)
    assert result.exit_code == 5, result.output
    _assert_one_clear_line(result)
    assert repo.view.read_bytes() == dirty
    assert repo.ref() == old
    result = cli(*args, "--json")
    assert result.exit_code == 5
    assert json.loads(result.stdout)["code"] == 5
    assert repo.view.read_bytes() == dirty
    assert repo.ref() == old

    result = cli(*args, "--force")
    assert result.exit_code == 0, result.output
    kept = re.findall(r"kept in (.+)$", result.stderr, re.MULTILINE)
    assert len(kept) == 1, result.stderr
    assert Path(kept[0]).read_bytes() == dirty
    if args[0] == "restore":
        tip = repo.ref()
        assert parents(repo, tip) == [old]
        assert doc_at(repo, tip).same_content(doc_at(repo, f"{old}~1"))
        assert repo.view.read_bytes() == blob(repo, tip)
    else:
        assert repo.ref() == old
        assert repo.view.read_bytes() == blob(repo, old if len(args) == 1 else f"{old}~1")


TOKEN = "ghp_" + "A1b2" * 9


def test_a_credential_is_refused_naming_the_line(repo: Repo, cli: Any) -> None:
    seed(cli)
    before = repo.ref()
    text = repo.view.read_text().replace(
        "## Key data (verbatim)\n", f"## Key data (verbatim)\n- deploy token {TOKEN}\n"
    )
    repo.view.write_text(text)
    number = text.splitlines().index(f"- deploy token {TOKEN}") + 1

    result = cli("save")
    assert result.exit_code == 1, result.output
    _assert_one_clear_line(result)
    assert f"line {number}" in result.stderr.splitlines()[0]
    assert TOKEN not in result.output  # the refusal does not repeat the secret
    assert repo.ref() == before
    body = json.loads(cli("save", "--json").stdout)
    assert body["code"] == 1 and body["hits"][0]["line"] == number
    assert repo.ref() == before
    # A patch of an unrelated section carries the view's token along: refused too.
    assert cli("patch", "--add", "open_issues=x").exit_code == 1
    assert repo.ref() == before
    assert repo.view.read_text() == text

    result = cli("save", "--allow-secret")
    assert result.exit_code == 0, result.output
    assert parents(repo, repo.ref()) == [before]
    assert f"- deploy token {TOKEN}" in doc_at(repo, STATE_REF).section("key_data")


def test_the_credential_line_number_is_the_views(repo: Repo, cli: Any) -> None:
    seed(cli)
    text = repo.view.read_text().replace("## Goal\n", "\n\n\n## Goal\n")
    text = text.replace(
        "## Key data (verbatim)\n", f"## Key data (verbatim)\n- deploy token {TOKEN}\n"
    )
    repo.view.write_text(text)
    number = text.splitlines().index(f"- deploy token {TOKEN}") + 1
    result = cli("save", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["hits"][0]["line"] == number


@pytest.mark.parametrize("fixture", ["empty_repo", "repo"], ids=["unborn-head", "with-commit"])
def test_every_command_works_without_init(
    request: pytest.FixtureRequest, cli: Any, fixture: str
) -> None:
    repo: Repo = request.getfixturevalue(fixture)
    exclude = repo.path / ".git" / "info" / "exclude"
    assert not exclude.exists() or "/STATE.md" not in exclude.read_text()
    assert repo.ref() is None

    def ok(*args: str) -> Any:
        result = cli(*args)
        assert result.exit_code == 0, (args, result.output)
        assert "error" not in result.stderr, (args, result.stderr)
        return result

    ok("status")
    ok("check")
    assert ok("log").stdout == ""
    assert "nothing to save" in ok("save").stdout
    assert cli("show").exit_code == 3  # no snapshot yet: not found, said plainly
    ok("patch", "--set", "goal=first", "--todo", "step one")
    first = repo.ref()
    assert first is not None
    repo.view.write_text(repo.view.read_text().replace("## Open issues\n", "## Open issues\n- q\n"))
    ok("diff")
    ok("save")
    second = repo.ref()
    assert parents(repo, second) == [first]
    assert ok("show").stdout.encode() == blob(repo, second)
    ok("diff", "~1")
    ok("log")
    ok("restore", "~1")
    ok("checkout", "~1")
    ok("checkout")
    body = json.loads(ok("status", "--json").stdout)
    assert body["view"] == "clean" and body["tip"] == repo.ref()
    head = json.loads(ok("log", "--json").stdout)[0]["head"]
    assert head == (None if fixture == "empty_repo" else repo.git("rev-parse", "HEAD").strip())
    ok("init")
    assert "/STATE.md" in exclude.read_text()
    assert len(chain(repo)) == 3
    assert_fsck_clean(repo)
