"""The storage layer on real repositories: layout, view record, lock, snapshots, maintenance."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Repo
from support import wait_until

from gitstate.errors import NotFound, WorkAtRisk
from gitstate.storage import lock, maintenance, view
from gitstate.storage.layout import Layout, discover
from gitstate.storage.snapshots import Store, compose_message, parse_trailers


class TestLayout:
    def test_main_work_tree(self, repo: Repo) -> None:
        layout = discover(repo.path / ".")
        assert layout is not None
        assert layout.workdir == repo.path.resolve()
        assert layout.gitdir == layout.commondir == (repo.path / ".git").resolve()
        assert layout.worktree is None
        assert layout.state_ref == "refs/agy/state"

    def test_from_a_subdirectory(self, repo: Repo) -> None:
        (repo.path / "a" / "b").mkdir(parents=True)
        layout = discover(repo.path / "a" / "b")
        assert layout is not None and layout.workdir == repo.path.resolve()

    def test_linked_worktree(self, repo: Repo) -> None:
        repo.git("worktree", "add", "-q", str(repo.path / "wt2"), "-b", "b2")
        layout = discover(repo.path / "wt2")
        assert layout is not None
        assert layout.worktree == "wt2"
        assert layout.commondir == (repo.path / ".git").resolve()
        assert layout.gitdir == (repo.path / ".git" / "worktrees" / "wt2").resolve()
        assert layout.state_ref == "refs/agy/wt/wt2/state"
        assert layout.view_path == (repo.path / "wt2" / "STATE.md").resolve()

    def test_git_dir_environment(
        self, repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        monkeypatch.setenv("GIT_DIR", str(repo.path / ".git"))
        monkeypatch.setenv("GIT_WORK_TREE", str(repo.path))
        layout = discover(tmp_path)
        assert layout is not None and layout.workdir == repo.path.resolve()

    def test_outside_any_repository(self, tmp_path: Path) -> None:
        assert discover(tmp_path) is None


class TestView:
    def test_record_makes_clean_and_dirty(self, repo: Repo) -> None:
        layout = discover(repo.path)
        assert layout is not None
        assert view.status(layout, view.read(layout)) == "missing"
        view.write(layout, b"text\n", "0" * 40)
        assert view.status(layout, view.read(layout)) == "clean"
        (repo.path / "STATE.md").write_bytes(b"text!\n")
        assert view.status(layout, view.read(layout)) == "dirty"
        assert view.read_record(layout) == view.Record(
            "refs/agy/state", "0" * 40, view.blob_id(b"text\n")
        )

    def test_blob_id_matches_git(self, repo: Repo) -> None:
        data = "任務\r\nx\n".encode()
        expected = repo.git("hash-object", "--stdin", input=data.decode()).strip()
        assert view.blob_id(data) == expected

    def test_overwritten_text_is_kept(self, repo: Repo) -> None:
        layout = discover(repo.path)
        assert layout is not None
        path = view.keep_overwritten(layout, b"precious\n")
        assert path.read_bytes() == b"precious\n"
        assert path.parent == layout.agy_dir / "overwritten"

    def test_stale_temp_files_are_cleaned(self, repo: Repo) -> None:
        layout = discover(repo.path)
        assert layout is not None
        leftover = repo.path / f"{view.TMP_PREFIX}123-456.tmp"
        leftover.write_text("half")
        view.clean_stale_tmp(layout)
        assert not leftover.exists()


HOLD_LOCK = """
import sys, time
from pathlib import Path
from gitstate.storage import lock
with lock.held(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


class TestLock:
    def test_waits_then_refuses_with_exit_5(self, tmp_path: Path) -> None:
        path = tmp_path / "lock"
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK, str(path)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            with pytest.raises(WorkAtRisk) as info, lock.held(path, wait=0.2):
                pass
            assert f"pid {holder.pid}" in info.value.message
        finally:
            holder.kill()
            holder.wait()

    def test_released_when_the_holder_is_killed(self, tmp_path: Path) -> None:
        path = tmp_path / "lock"
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK, str(path)], stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        with lock.held(path, wait=2.0):
            pass


def store_of(repo: Repo) -> Store:
    layout = discover(repo.path)
    assert layout is not None
    return Store(layout)


def snapshot(store: Store, text: str, parents: list[str]) -> str:
    message = compose_message("test", [("Agy-Format", "1"), ("Agy-Sections", "goal")])
    return store.create_snapshot(text.encode(), parents, message)


class TestSnapshots:
    def test_trailers_round_trip_through_git(self, repo: Repo) -> None:
        message = compose_message(
            "patch: finish step 1", [("Agy-Format", "1"), ("Agy-Sections", "done, next_steps")]
        )
        assert parse_trailers(message) == {"Agy-Format": "1", "Agy-Sections": "done, next_steps"}
        parsed = repo.git("interpret-trailers", "--parse", input=message)
        assert parsed == "Agy-Format: 1\nAgy-Sections: done, next_steps\n"

    def test_no_trailers_without_a_trailer_paragraph(self) -> None:
        assert parse_trailers("just a subject") == {}
        assert parse_trailers("subject\n\nbody text, not a trailer") == {}

    def test_compare_and_swap(self, repo: Repo) -> None:
        store = store_of(repo)
        first = snapshot(store, "one\n", [])
        assert store.compare_and_swap("refs/agy/state", None, first, "create")
        assert not store.compare_and_swap("refs/agy/state", None, first, "create again")
        second = snapshot(store, "two\n", [first])
        third = snapshot(store, "three\n", [first])
        assert store.compare_and_swap("refs/agy/state", first, second, "advance")
        # A writer that read `first` loses: the ref keeps `second`.
        assert not store.compare_and_swap("refs/agy/state", first, third, "stale")
        assert repo.ref() == second
        reflog = repo.git("reflog", "show", "--format=%H %gs", "refs/agy/state").splitlines()
        assert reflog == [f"{second} advance", f"{first} create"]

    def test_snapshot_objects_leave_head_and_index_alone(self, repo: Repo) -> None:
        head = repo.git("rev-parse", "HEAD")
        store = store_of(repo)
        commit = snapshot(store, "x\n", [])
        assert repo.git("rev-parse", "HEAD") == head
        assert repo.git("ls-tree", "--name-only", commit) == "STATE.md\n"

    def test_resolve(self, repo: Repo) -> None:
        store = store_of(repo)
        first = snapshot(store, "one\n", [])
        second = snapshot(store, "two\n", [first])
        store.compare_and_swap("refs/agy/state", None, second, "t")
        assert store.resolve(None) == second
        assert store.resolve("~1") == first
        assert store.resolve("~") == first
        assert store.resolve("~0") == second
        assert store.resolve(first[:10]) == first
        with pytest.raises(NotFound):
            store.resolve("~2")
        with pytest.raises(NotFound):
            store.resolve("HEAD")  # a commit, but not a snapshot
        with pytest.raises(NotFound):
            store.resolve("no-such-thing")

    def test_resolve_checkpoint_tag(self, repo: Repo) -> None:
        store = store_of(repo)
        first = snapshot(store, "one\n", [])
        repo.git(
            "tag", "-a", "checkpoint-20260102-030405", "-m", f"checkpoint\n\nAgy-State: {first}"
        )
        assert store.resolve("checkpoint-20260102-030405") == first

    def test_walk_reads_only_what_it_is_asked_for(self, repo: Repo) -> None:
        store = store_of(repo)
        parent: list[str] = []
        for i in range(5):
            parent = [snapshot(store, f"{i}\n", parent)]
        rows = list(store.walk(parent[0], 2))
        assert len(rows) == 2
        assert rows[1].commit == repo.git("rev-parse", f"{parent[0]}^").strip()


class TestMaintenance:
    def test_gc_due_from_the_sample_directory(self, repo: Repo) -> None:
        layout = discover(repo.path)
        assert layout is not None
        assert not maintenance.gc_due(layout, None)
        sample = layout.commondir / "objects" / "17"
        sample.mkdir(parents=True, exist_ok=True)
        for i in range(3):
            (sample / f"{i:038x}").write_bytes(b"")
        assert maintenance.gc_due(layout, 500)
        assert not maintenance.gc_due(layout, 0)  # gc.auto=0 turns it off, as in git

    def test_background_gc_packs_loose_objects(self, repo: Repo) -> None:
        store = store_of(repo)
        parent: list[str] = []
        for i in range(30):
            parent = [snapshot(store, f"{i}\n", parent)]
        store.compare_and_swap("refs/agy/state", None, parent[0], "t")
        # git estimates loose objects from objects/17 alone: put a few there.
        made, i = 0, 0
        while made < 3:
            oid = str(store.repo.create_blob(f"blob {i}".encode()))
            made += oid.startswith("17")
            i += 1
        repo.git("config", "gc.auto", "10")
        repo.git("config", "gc.autoDetach", "false")
        layout: Layout = store.layout
        maintenance.start_gc(layout)

        def packed() -> bool:
            return any((layout.commondir / "objects" / "pack").glob("*.pack"))

        wait_until(packed, timeout=30)
        assert repo.git("rev-parse", "refs/agy/state").strip() == parent[0]
