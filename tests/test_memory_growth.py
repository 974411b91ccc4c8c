"""A brain that stays flat as it grows (issue 13): a write rewrites only the folders on the paths
it changes, and moves the plain-text cache by the files it touched (docs/memory.md)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from memory_support import brain_git, tip
from support import wait_until

from gitstate.memory.storage import cache as memory_cache
from gitstate.memory.storage import packing
from gitstate.memory.storage.brain import Brain
from gitstate.memory.storage.layout import BrainLayout
from gitstate.memory.usecases import write


def _commit(brain: Brain, changes: dict[str, bytes | None]) -> str:
    parent = brain.tip()
    commit = brain.commit(parent, changes, [parent] if parent else [], "test")
    assert brain.compare_and_swap(parent, commit, "test")
    return commit


def _cached(cache: Path) -> dict[str, str]:
    found = {}
    for path in cache.rglob("*.md"):
        found[path.relative_to(cache).as_posix()] = path.read_text()
    return found


def _tip_files(brain: Brain) -> dict[str, str]:
    return {p: data.decode() for p, data in brain.files(brain.tip()).items()}


@pytest.fixture
def brain() -> Brain:
    return Brain.create(BrainLayout())[0]


class TestTreeByPath:
    def test_a_write_rewrites_only_the_folders_on_its_path(self, brain: Brain) -> None:
        first = _commit(
            brain,
            {
                "sessions/2026-01-01.md": b"# one\n",
                "sessions/2026-01-02.md": b"# two\n",
                "projects/app.md": b"# app\n",
            },
        )
        second = _commit(brain, {"MEMORY.md": b"# Memory\n\n## Technical Knowledge\n- x\n"})
        for folder in ("sessions", "projects"):
            assert brain.entry_id(second, folder) == brain.entry_id(first, folder)
        third = _commit(brain, {"sessions/2026-01-02.md": b"# two, longer\n"})
        assert brain.entry_id(third, "projects") == brain.entry_id(second, "projects")
        assert brain.entry_id(third, "sessions") != brain.entry_id(second, "sessions")
        assert (
            brain.folder(third, "sessions")["2026-01-01.md"]
            == (brain.folder(second, "sessions")["2026-01-01.md"])
        )
        listed = brain_git("ls-tree", "-r", "--name-only", third).split()
        assert listed == [
            "MEMORY.md",
            "USER.md",
            "projects/app.md",
            "sessions/2026-01-01.md",
            "sessions/2026-01-02.md",
        ]
        assert brain.read(third, "sessions/2026-01-02.md") == b"# two, longer\n"

    def test_a_folder_emptied_goes_and_a_missing_path_deletes_nothing(self, brain: Brain) -> None:
        _commit(brain, {"projects/a.md": b"a\n", "projects/b.md": b"b\n"})
        one = _commit(brain, {"projects/a.md": None, "projects/none.md": None})
        assert sorted(brain.listing(one)) == ["MEMORY.md", "USER.md", "projects/b.md"]
        two = _commit(brain, {"projects/b.md": None})
        assert brain.entry_id(two, "projects") is None
        assert brain_git("ls-tree", two).count("\n") == 2
        everything = _commit(brain, {"MEMORY.md": None, "USER.md": None})
        assert brain_git("rev-parse", f"{everything}^{{tree}}").strip() == (
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree
        )

    def test_a_path_that_is_no_path_inside_the_brain_is_never_written(self, brain: Brain) -> None:
        before = brain.tip()
        for bad in ("sessions//x.md", "../x.md", "projects/./a.md", "a/"):
            with pytest.raises(ValueError):
                brain.commit(before, {bad: b"x"}, [], "bad")
        assert brain.tip() == before


class TestCacheFollowsTheWrite:
    def test_a_write_touches_only_its_files_and_appends_to_the_manifest(self) -> None:
        write.add("knowledge", "first fact")
        write.session("did things", project="app", workspace="/w")
        cache = BrainLayout().cache_dir
        untouched = os.stat(cache / "USER.md").st_ino
        manifest = (cache / memory_cache.MANIFEST_FILE).read_text()
        write.add("knowledge", "second fact")
        assert os.stat(cache / "USER.md").st_ino == untouched
        grown = (cache / memory_cache.MANIFEST_FILE).read_text()
        assert grown.startswith(manifest)
        added = grown[len(manifest) :].splitlines()
        assert len(added) == 1 and added[0].endswith(" MEMORY.md")
        brain = Brain.open()
        assert _cached(cache) == _tip_files(brain)
        assert (cache / memory_cache.TIP_FILE).read_text().strip() == tip()

    def test_a_cache_not_at_the_parent_is_brought_whole_to_the_tip(self) -> None:
        write.add("knowledge", "first fact")
        cache = BrainLayout().cache_dir
        (cache / "USER.md").write_text("stale\n")
        (cache / memory_cache.TIP_FILE).write_text("0" * 40 + "\n")
        (cache / memory_cache.MANIFEST_FILE).write_text("")
        brain = Brain.open()
        write.add("identity", "likes tea")
        assert _cached(cache) == _tip_files(brain)

    def test_a_torn_manifest_line_is_never_believed(self) -> None:
        write.add("knowledge", "first fact")
        brain = Brain.open()
        cache = BrainLayout().cache_dir
        # The ref moves on (USER.md changes) and a crash tears the manifest line recording it:
        # no newline, and .tip never moved on.
        _commit(brain, {"USER.md": b"# User\n\n## Identity\n- new\n"})
        user_blob = brain.listing(brain.tip())["USER.md"]
        with open(cache / memory_cache.MANIFEST_FILE, "a") as manifest:
            manifest.write(f"{user_blob} USER.md")
        assert brain.refresh_cache() == brain.tip()
        assert _cached(cache) == _tip_files(brain)
        lines = (cache / memory_cache.MANIFEST_FILE).read_text().splitlines()
        assert sorted(line.split(" ", 1)[1] for line in lines) == sorted(_tip_files(brain))

    def test_the_manifest_is_rewritten_whole_once_it_grew(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(memory_cache, "MANIFEST_COMPACT_AT", 200)
        for n in range(6):
            write.add("knowledge", f"fact {n}")
        cache = BrainLayout().cache_dir
        lines = (cache / memory_cache.MANIFEST_FILE).read_text().splitlines()
        assert len(lines) <= 4  # MEMORY.md, USER.md and at most one line appended since
        brain = Brain.open()
        listing = brain.listing(brain.tip())
        entries = {path: blob for blob, path in (line.split(" ", 1) for line in lines)}
        assert entries == listing
        assert _cached(cache) == _tip_files(brain)


def _loose(brain_dir: Path) -> int:
    objects = brain_dir / "objects"
    return sum(len(os.listdir(d)) for d in objects.iterdir() if len(d.name) == 2)


def _packs(brain_dir: Path) -> list[str]:
    pack = brain_dir / "objects" / "pack"
    return sorted(p for p in os.listdir(pack) if p.endswith(".pack")) if pack.is_dir() else []


def _repack_done(layout: BrainLayout) -> bool:
    """Nobody holds the pack lock: no repack is running."""
    fd = os.open(layout.agy_dir / packing.LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


class TestAutoPack:
    def test_many_writes_leave_the_loose_objects_bounded(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(packing, "FLOOR", 16)
        for n in range(150):
            write.add("identity", f"fact number {n}")
        layout = BrainLayout()
        wait_until(lambda: _repack_done(layout), what="the last repack to end")
        packs = _packs(layout.path)
        assert packs, "no repack ever ran"
        # Packs are merged as they pile up (the smallest third of the bytes, each at least twice
        # the next smaller), so a few of the repacks' packs remain: 4 on a quiet machine, 9 seen
        # on a busy one (a write that finds a repack running leaves its objects to the next).
        # Without the merge step these writes leave about 25 packs, one per repack.
        assert len(packs) <= 12
        # Without packing the brain would hold 450 loose objects (a blob, the root, the commit).
        assert _loose(layout.path) <= 200
        assert _tip_files(Brain.open())["USER.md"].count("- fact number") == 150
        brain_git("fsck", "--connectivity-only", "--no-dangling", "refs/agy/memory")

    def test_gc_auto_zero_in_the_brain_turns_it_off(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(packing, "FLOOR", 16)
        write.add("identity", "first")
        brain_git("config", "gc.auto", "0")
        for n in range(60):
            write.add("identity", f"fact number {n}")
        assert not Brain.open().maintain()
        assert _packs(BrainLayout().path) == [] and _loose(BrainLayout().path) > 150

    def test_no_second_repack_while_one_holds_the_lock(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(packing, "FLOOR", 1_000_000)
        for n in range(40):
            write.add("identity", f"fact number {n}")
        monkeypatch.setattr(packing, "FLOOR", 16)
        monkeypatch.setattr(packing, "WAIT_LIMIT", 0.2)  # past the cap a write waits: bounded
        layout = BrainLayout()
        brain = Brain.open()
        held = os.open(layout.agy_dir / packing.LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(held, fcntl.LOCK_EX)
            assert packing.due(layout.path / "objects")
            assert not brain.maintain()
            assert _packs(layout.path) == []
        finally:
            os.close(held)
        assert brain.maintain()
        wait_until(lambda: _packs(layout.path), what="the pack")
        wait_until(lambda: _repack_done(layout), what="the repack to end")
        assert _loose(layout.path) == 0

    def test_past_the_cap_a_write_waits_for_the_running_repack_then_starts_the_next(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(packing, "FLOOR", 1_000_000)
        for n in range(40):
            write.add("identity", f"fact number {n}")
        monkeypatch.setattr(packing, "FLOOR", 16)
        layout = BrainLayout()
        objects = layout.path / "objects"
        assert packing.pressure(objects) * packing.CAP > 1  # no pack yet: past the cap
        # Another process holds the lock (a repack running) until its stdin closes.
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
                " fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()",
                str(layout.agy_dir / packing.LOCK_FILE),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            started: list[bool] = []
            worker = threading.Thread(target=lambda: started.append(Brain.open().maintain()))
            worker.start()
            assert holder.stdin is not None
            holder.stdin.close()  # the running "repack" ends while the write waits
            worker.join(timeout=packing.WAIT_LIMIT + 30)
            assert started == [True]
        finally:
            holder.kill()
            holder.wait(timeout=30)
        wait_until(lambda: _repack_done(layout), what="the repack the write started")
        assert _packs(layout.path) and _loose(layout.path) == 0
