"""storage/refs.py under attack: create-only and compare-and-swap across real processes and
work trees, a lock left by a writer of ours killed inside its update, a lock someone else
holds (a live git, a file of unknown origin, an mtime in the future). The rule they check:
docs/exit-codes.md, "A ref lock someone else holds"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitstate.errors import CannotWrite, WorkAtRisk
from gitstate.storage import refs
from gitstate.storage.layout import discover
from gitstate.storage.snapshots import Store
from tests.conftest import Repo
from tests.support import WAIT, wait_until

# One writer: waits for the start file, then creates (expected "-") or moves REF to a commit of
# its own and prints "won" or "lost". Every racer builds its commit first, so they collide on
# the ref alone.
RACER = """
import os, sys, time
from gitstate.storage.layout import discover
from gitstate.storage.snapshots import Store
ref, expected, start, name = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
store = Store(discover())
mine = store.commit_tree(None, [], f"{name}\\n")
open(start + "." + name, "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(start) and time.monotonic() < deadline:
    time.sleep(0.001)
won = store.compare_and_swap(ref, None if expected == "-" else expected, mine, f"race {name}")
print(("won " if won else "lost ") + mine)
"""

# A writer of ours killed inside its update: the reader it gives refs.update (the step that
# runs under the ref's lock) says so and then waits for ever, until the test kills it.
STUCK = """
import sys, time
from pathlib import Path
from gitstate.storage import refs
from gitstate.storage.layout import discover
from gitstate.storage.snapshots import Store
ref, flag = sys.argv[1], Path(sys.argv[2])
store = Store(discover())
new = store.commit_tree(None, [], "stuck\\n")

def current():
    flag.write_text("holding")
    while True:
        time.sleep(1)

refs.update(store.layout.commondir, ref, None, new, current, "x <y> 1 +0000\\tstuck")
"""


def store_of(path: Path) -> Store:
    layout = discover(path)
    assert layout is not None
    return Store(layout)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """Flag files between the test and its processes, outside the repository."""
    where = tmp_path / "scratch"
    where.mkdir()
    return where


def race(scratch: Path, cwds: list[Path], ref: str, expected: str = "-") -> list[tuple[str, str]]:
    """Start one racer per cwd, release them together; (won/lost, commit) per racer."""
    start = scratch / f"start-{time.monotonic_ns()}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, ref, expected, str(start), f"r{n}"],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, cwd in enumerate(cwds)
    ]
    for n, proc in enumerate(procs):
        wait_until(lambda n=n: Path(f"{start}.r{n}").exists(), what=f"racer {n} ready", proc=proc)
    start.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=WAIT)
        assert proc.returncode == 0, err
        verdict, commit = out.split()
        results.append((verdict, commit))
    return results


def reflog(repo: Repo, ref: str) -> list[str]:
    return repo.git("reflog", "show", "--format=%H %gs", ref).splitlines()


class TestCreateOnly:
    def test_of_processes_creating_one_ref_at_once_exactly_one_wins(
        self, repo: Repo, scratch: Path
    ) -> None:
        for round_ in range(3):
            ref = f"refs/agy/archive/race-{round_}"
            results = race(scratch, [repo.path] * 4, ref)
            winners = [commit for verdict, commit in results if verdict == "won"]
            assert len(winners) == 1, results
            assert repo.ref(ref) == winners[0]
            assert reflog(repo, ref) == [f"{winners[0]} race r{_index(results, winners[0])}"]

    def test_two_work_trees_creating_one_ref_at_once_one_wins(
        self, repo: Repo, scratch: Path
    ) -> None:
        other = scratch / "linked"
        repo.git("worktree", "add", "-q", "--detach", str(other))
        for round_ in range(3):
            ref = f"refs/tags/checkpoint-race-{round_}"
            results = race(scratch, [repo.path, other, repo.path, other], ref)
            winners = [commit for verdict, commit in results if verdict == "won"]
            assert len(winners) == 1, results
            assert repo.ref(ref) == winners[0]

    def test_a_ref_that_exists_is_not_created_again(self, repo: Repo) -> None:
        store = store_of(repo.path)
        first = store.commit_tree(None, [], "first\n")
        second = store.commit_tree(None, [], "second\n")
        assert store.create_ref("refs/agy/x", first, "one")
        assert not store.create_ref("refs/agy/x", second, "two")
        assert repo.ref("refs/agy/x") == first
        assert reflog(repo, "refs/agy/x") == [f"{first} one"]

    def test_a_ref_only_in_packed_refs_exists_too(self, repo: Repo) -> None:
        store = store_of(repo.path)
        first = store.commit_tree(None, [], "first\n")
        assert store.create_ref("refs/agy/packed", first, "one")
        repo.git("pack-refs", "--all")
        assert not (repo.path / ".git" / "refs" / "agy" / "packed").exists()
        assert not store.create_ref("refs/agy/packed", store.commit_tree(None, [], "2\n"), "two")
        assert repo.ref("refs/agy/packed") == first

    def test_a_name_under_an_existing_ref_is_git_s_clash(self, repo: Repo) -> None:
        store = store_of(repo.path)
        first = store.commit_tree(None, [], "first\n")
        assert store.create_ref("refs/agy/plain", first, "one")
        with pytest.raises(CannotWrite) as raised:
            store.create_ref("refs/agy/plain/below", first, "two")
        assert raised.value.message == (
            "cannot lock ref 'refs/agy/plain/below': 'refs/agy/plain' exists; "
            "cannot create 'refs/agy/plain/below'"
        )
        assert not list((repo.path / ".git" / "refs" / "agy").glob("*.lock"))

    @pytest.mark.parametrize(
        "name", ["refs/agy/../../escaped", "refs/agy/x.lock", "HEAD", "refs/worktree/x"]
    )
    def test_a_bad_or_per_work_tree_name_is_refused_and_nothing_written(
        self, repo: Repo, name: str
    ) -> None:
        store = store_of(repo.path)
        with pytest.raises(CannotWrite) as raised:
            store.create_ref(name, store.commit_tree(None, [], "x\n"), "x")
        assert f"refusing to update ref with bad name '{name}'" in raised.value.message
        git_dir = repo.path / ".git"
        assert not [p for p in (git_dir, git_dir / "refs") if list(p.glob("escaped*"))]
        assert not (git_dir / "refs" / "worktree").exists()


class TestCompareAndSwap:
    def test_a_moved_tip_is_refused_and_nothing_is_logged(self, repo: Repo) -> None:
        store = store_of(repo.path)
        first = store.commit_tree(None, [], "first\n")
        theirs = store.commit_tree(None, [first], "theirs\n")
        mine = store.commit_tree(None, [first], "mine\n")
        assert store.create_ref("refs/agy/cas", first, "start")
        repo.git(
            "update-ref", "-m", "update", "refs/agy/cas", theirs, first
        )  # someone else moves it
        assert not store.compare_and_swap("refs/agy/cas", first, mine, "mine")
        assert repo.ref("refs/agy/cas") == theirs
        assert [line.split()[1] for line in reflog(repo, "refs/agy/cas")] == ["update", "start"]

    def test_processes_moving_one_tip_at_once_one_wins(self, repo: Repo, scratch: Path) -> None:
        store = store_of(repo.path)
        base = store.commit_tree(None, [], "base\n")
        assert store.create_ref("refs/agy/moving", base, "start")
        results = race(scratch, [repo.path] * 4, "refs/agy/moving", base)
        winners = [commit for verdict, commit in results if verdict == "won"]
        assert len(winners) == 1, results
        assert repo.ref("refs/agy/moving") == winners[0]

    def test_the_reflog_line_is_git_s(self, repo: Repo) -> None:
        store = store_of(repo.path)
        first = store.commit_tree(None, [], "first\n")
        assert store.create_ref("refs/agy/logged", first, "agy-state: a\nline")
        shown = repo.git("reflog", "show", "--format=%H|%gs|%gn|%ge|%gd", "refs/agy/logged")
        assert shown.strip() == f"{first}|agy-state: a line|A U Thor|author@example.com|" + (
            "agy/logged@{0}"
        )
        raw = (repo.path / ".git" / "logs" / "refs" / "agy" / "logged").read_text()
        assert raw.startswith("0" * 40 + f" {first} A U Thor <author@example.com> ")

    def test_a_loop_that_keeps_losing_gives_up_naming_the_ref(self) -> None:
        with pytest.raises(WorkAtRisk) as raised:
            refs.retry("refs/agy/x", lambda: None, "nothing was saved")
        assert raised.value.message == (
            f"refs/agy/x kept moving under {refs.MAX_ATTEMPTS} attempts; nothing was saved"
        )

    def test_delete_only_what_is_expected(self, repo: Repo) -> None:
        store = store_of(repo.path)
        first = store.commit_tree(None, [], "first\n")
        other = store.commit_tree(None, [], "other\n")
        assert store.create_ref("refs/agy/gone", first, "one")
        assert not store.delete_ref("refs/agy/gone", other, "not this one")
        assert repo.ref("refs/agy/gone") == first
        repo.git("pack-refs", "--all")  # packed only: git's delete rewrites packed-refs
        assert store.delete_ref("refs/agy/gone", first, "taken back")
        assert repo.ref("refs/agy/gone") is None
        assert not store.delete_ref("refs/agy/gone", first, "again")


class TestLocks:
    def test_a_lock_left_by_a_killed_writer_of_ours_is_recovered_at_once(
        self, repo: Repo, scratch: Path
    ) -> None:
        """Outside refs/agy/ nothing but proof removes a lock: the record of our writer is it."""
        ref = "refs/notes/agy/decisions"
        lock = repo.path / ".git" / (ref + ".lock")
        flag = scratch / "holding"
        proc = subprocess.Popen([sys.executable, "-c", STUCK, ref, str(flag)], cwd=repo.path)
        try:
            wait_until(flag.exists, what="the writer inside its update", proc=proc)
            assert lock.exists()
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        assert lock.exists()  # what a kill -9 leaves
        store = store_of(repo.path)
        new = store.commit_tree(None, [], "after\n")
        assert store.create_ref(ref, new, "after the kill")
        assert repo.ref(ref) == new
        assert not lock.exists()

    def test_a_recorded_lock_replaced_by_another_is_not_taken(
        self, repo: Repo, scratch: Path
    ) -> None:
        ref = "refs/tags/replaced"
        lock = repo.path / ".git" / (ref + ".lock")
        flag = scratch / "holding"
        proc = subprocess.Popen([sys.executable, "-c", STUCK, ref, str(flag)], cwd=repo.path)
        try:
            wait_until(flag.exists, what="the writer inside its update", proc=proc)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        lock.unlink()
        lock.write_text("")  # somebody else's now, at the same path
        store = store_of(repo.path)
        with pytest.raises(WorkAtRisk):
            store.create_ref(ref, store.commit_tree(None, [], "x\n"), "x")
        assert lock.exists()
        assert repo.ref(ref) is None

    def test_a_live_git_s_lock_is_never_deleted(self, repo: Repo) -> None:
        """A `git update-ref --stdin` transaction holds refs/tags/held.lock while prepared; we
        wait (bounded), say so in git's words, and leave it to git, which then commits."""
        head = repo.git("rev-parse", "HEAD").strip()
        ref = "refs/tags/held"
        lock = repo.path / ".git" / (ref + ".lock")
        git = subprocess.Popen(
            ["git", "update-ref", "--stdin"],
            cwd=repo.path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert git.stdin is not None and git.stdout is not None
            git.stdin.write(f"start\ncreate {ref} {head}\nprepare\n")
            git.stdin.flush()
            assert git.stdout.readline() == "start: ok\n"
            assert git.stdout.readline() == "prepare: ok\n"
            assert lock.exists()
            store = store_of(repo.path)
            with pytest.raises(WorkAtRisk) as raised:
                store.create_ref(ref, store.commit_tree(None, [], "mine\n"), "mine")
            assert raised.value.message == (
                f"cannot lock ref '{ref}': Unable to create '{lock}': File exists."
            )
            assert raised.value.hint is not None and f"remove {lock}" in raised.value.hint
            assert lock.exists()
            git.stdin.write("commit\n")
            git.stdin.flush()
            assert git.stdout.readline() == "commit: ok\n"
        finally:
            git.communicate(timeout=WAIT)
        assert git.returncode == 0
        assert repo.ref(ref) == head  # git's update went through

    def test_a_lock_of_unknown_origin_outside_refs_agy_is_left_alone(self, repo: Repo) -> None:
        lock = repo.path / ".git" / "refs" / "tags" / "foreign.lock"
        lock.write_text("")
        store = store_of(repo.path)
        with pytest.raises(WorkAtRisk):
            store.create_ref("refs/tags/foreign", store.commit_tree(None, [], "x\n"), "x")
        assert lock.exists()

    @pytest.mark.parametrize("where", ["refs/agy/ahead", "refs/tags/ahead"])
    def test_a_lock_with_an_mtime_in_the_future_does_not_hang(self, repo: Repo, where: str) -> None:
        """The wait runs on our clock: a day ahead costs what a fresh lock costs. Under
        refs/agy/ the lock is then taken over, elsewhere it is reported."""
        lock = repo.path / ".git" / (where + ".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text("")
        ahead = time.time() + 86400
        os.utime(lock, (ahead, ahead))
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys\n"
                "from gitstate.storage.layout import discover\n"
                "from gitstate.storage.snapshots import Store\n"
                "from gitstate.errors import WorkAtRisk\n"
                "s = Store(discover())\n"
                "try:\n"
                "    print(s.create_ref(sys.argv[1], s.commit_tree(None, [], 'x\\n'), 'x'))\n"
                "except WorkAtRisk as e:\n"
                "    print('refused', e.message)\n",
                where,
            ],
            cwd=repo.path,
            capture_output=True,
            text=True,
            timeout=WAIT,  # a hang fails here
            check=True,
        )
        if where.startswith(refs.OWN_REFS):
            assert proc.stdout.strip() == "True"
            assert not lock.exists()
        else:
            assert proc.stdout.startswith("refused cannot lock ref 'refs/tags/ahead'")
            assert lock.exists()

    def test_a_lock_that_is_a_folder_is_one_line_not_a_hang(self, repo: Repo) -> None:
        lock = repo.path / ".git" / "refs" / "agy" / "folder.lock"
        lock.mkdir(parents=True)
        store = store_of(repo.path)
        with pytest.raises(CannotWrite) as raised:
            store.create_ref("refs/agy/folder", store.commit_tree(None, [], "x\n"), "x")
        assert str(lock) in raised.value.message
        assert lock.is_dir() and repo.ref("refs/agy/folder") is None

    def test_our_writer_flock_held_by_a_live_writer_is_waited_for(
        self, repo: Repo, scratch: Path
    ) -> None:
        """Two of our writers never update refs at the same moment: the second waits for the
        flock, then goes on (here: once the stuck one is killed, its lock recorded)."""
        ref = "refs/agy/queued"
        flag = scratch / "holding"
        stuck = subprocess.Popen([sys.executable, "-c", STUCK, ref, str(flag)], cwd=repo.path)
        try:
            wait_until(flag.exists, what="the writer inside its update", proc=stuck)
            waiting = subprocess.Popen(
                [sys.executable, "-c", RACER, ref, "-", str(flag), "next"],
                cwd=repo.path,
                stdout=subprocess.PIPE,
                text=True,
            )
            wait_until(
                lambda: Path(f"{flag}.next").exists(), what="the second writer", proc=waiting
            )
        finally:
            os.kill(stuck.pid, signal.SIGKILL)
            stuck.wait()
        out, _ = waiting.communicate(timeout=WAIT)
        verdict, commit = out.split()
        assert verdict == "won"
        assert repo.ref(ref) == commit


def _index(results: list[tuple[str, str]], commit: str) -> int:
    return [c for _, c in results].index(commit)
