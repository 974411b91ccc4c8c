"""The brain's repack (storage/packing.py, docs/memory.md "Packing"): which packs it keeps, that a
real repack never rewrites them, that the loose objects are packed with good deltas, and that it
counts few loose objects exactly. Real brains, real git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from memory_support import brain_git
from support import wait_until
from test_memory_growth import _loose, _packs, _repack_done

from gitstate.memory.storage import packing
from gitstate.memory.storage.layout import BrainLayout
from gitstate.memory.usecases import write


def _inode(layout: BrainLayout, name: str) -> int:
    return os.stat(layout.path / "objects" / "pack" / name).st_ino


def _pack_bytes(layout: BrainLayout) -> int:
    folder = layout.path / "objects" / "pack"
    return sum(os.stat(folder / name).st_size for name in os.listdir(folder))


def _writes(first: int, count: int) -> None:
    for n in range(first, first + count):
        write.session(
            f"session {n}: moved the retry budget to {n % 9} attempts",
            project=f"project-{n % 5}",
            learned=(f"learning {n}: backoff caps at {n % 31} s",),
            workspace=f"/home/dev/src/project-{n % 5}",
            now=1_735_722_000 + (n // 10) * 86_400 + (n % 10) * 97,
        )


def _repack(layout: BrainLayout) -> None:
    """One repack as a write starts it, waited for."""
    assert packing.start(layout.path, layout.agy_dir)
    wait_until(lambda: _repack_done(layout), what="the repack to end")


class TestKept:
    def test_all_but_the_smallest_third_are_kept(self) -> None:
        found = [("big.pack", 100), ("e.pack", 50), ("b.pack", 10), ("c.pack", 10), ("d.pack", 5)]
        # 175 bytes: d, b and c (25) fit in a third (58); e would make 75.
        assert packing.kept(found) == ["big.pack", "e.pack"]

    def test_a_lone_pack_is_kept_and_equal_packs_roll_up_to_the_third(self) -> None:
        assert packing.kept([("one.pack", 7)]) == ["one.pack"]
        assert packing.kept([("a.pack", 10), ("b.pack", 10), ("c.pack", 10)]) == [
            "b.pack",
            "c.pack",
        ]
        assert packing.kept([]) == []

    def test_a_kept_pack_rolls_up_once_it_and_the_smaller_ones_are_a_third(self) -> None:
        # The largest pack is never rewritten, but merges grow past it as the brain grows.
        assert packing.kept([("old.pack", 30), *((f"n{n}.pack", 10) for n in range(7))]) == [
            "n3.pack", "n4.pack", "n5.pack", "n6.pack", "old.pack",
        ]  # fmt: skip
        assert packing.kept([("old.pack", 30), ("merged.pack", 80), ("a.pack", 5)]) == [
            "merged.pack"
        ]


class TestRepack:
    def test_a_repack_never_rewrites_a_kept_pack(self, monkeypatch: pytest.MonkeyPatch) -> None:
        write.add("identity", "first")
        brain_git("config", "gc.auto", "0")  # the writes below leave their objects loose
        _writes(0, 40)
        brain_git("gc", "-q")
        layout = BrainLayout()
        [big] = _packs(layout.path)
        inode = _inode(layout, big)
        for first in range(40, 52, 2):  # small packs, each of two writes' objects
            _writes(first, 2)
            brain_git("repack", "-d", "-q")
        smalls = set(_packs(layout.path)) - {big}
        assert len(smalls) == 6
        _writes(52, 2)  # and some loose objects
        kept = packing.kept(packing.packs(layout.path / "objects"))
        assert big in kept and len(kept) <= 5  # at least two small packs to merge
        _repack(layout)
        after = _packs(layout.path)
        assert big in after and _inode(layout, big) == inode  # never rewritten
        for name in set(kept) - {big}:
            assert name in after
        # The small packs not kept merged into one, with the loose objects.
        assert len(after) == len(kept) + 1
        assert _loose(layout.path) == 0
        brain_git("fsck", "--connectivity-only", "--no-dangling", "refs/agy/memory")
        assert "learning 53:" in brain_git("grep", "-h", "learning 53:", "refs/agy/memory")

    def test_loose_objects_pack_with_deltas_as_good_as_a_fresh_pack(self) -> None:
        # `git repack --geometric` alone packs loose objects as an unnamed list: its deltas
        # miss the same file's other versions and the pack came out 2.6 times a fresh one.
        write.add("identity", "first")
        brain_git("config", "gc.auto", "0")
        _writes(0, 120)
        layout = BrainLayout()
        _repack(layout)
        assert _loose(layout.path) == 0
        tip = brain_git("rev-parse", "refs/agy/memory")
        out = layout.path.parent / "fresh"
        proc = subprocess.run(
            ["git", "pack-objects", "-q", "--revs", "--no-reuse-delta", str(out)],
            cwd=layout.path,
            input=tip,
            capture_output=True,
            text=True,
            check=True,
        )
        fresh = sum(
            Path(f"{out}-{proc.stdout.strip()}{suffix}").stat().st_size
            for suffix in (".pack", ".idx")
        )
        assert _pack_bytes(layout) <= 1.3 * fresh

    def test_a_bitmap_config_does_not_stop_the_repack(self) -> None:
        # git refuses bitmaps on an incremental repack: a user's repack.writeBitmaps=true
        # (global or in the brain) would leave the brain unpacked for ever.
        write.add("identity", "first")
        brain_git("config", "gc.auto", "0")
        brain_git("config", "repack.writeBitmaps", "true")
        _writes(0, 10)
        layout = BrainLayout()
        _repack(layout)
        assert _packs(layout.path) and _loose(layout.path) == 0


class TestSample:
    def test_few_loose_objects_are_counted_exactly(self) -> None:
        write.add("identity", "first")
        brain_git("config", "gc.auto", "0")
        objects = BrainLayout().path / "objects"
        before = _loose(objects.parent)
        for n in range(20):
            subprocess.run(
                ["git", "--git-dir", str(objects.parent), "hash-object", "-w", "--stdin"],
                input=f"object {n}\n",
                text=True,
                check=True,
                capture_output=True,
            )
        found, scale = packing.loose_sample(objects)
        assert scale == 1 and len(found) == before + 20

    def test_many_loose_objects_are_sampled(self) -> None:
        write.add("identity", "first")
        objects = BrainLayout().path / "objects"
        # 600 fixed contents: their ids, and so how many land in the sampled folders, are fixed.
        paths = [f"{objects.parent}/c{n}" for n in range(600)]
        for path, n in zip(paths, range(600), strict=True):
            Path(path).write_text(f"object {n}\n")
        subprocess.run(
            ["git", "--git-dir", str(objects.parent), "hash-object", "-w", "--stdin-paths"],
            input="\n".join(paths) + "\n",
            text=True,
            check=True,
            capture_output=True,
        )
        found, scale = packing.loose_sample(objects)
        assert scale == 16
        assert all(path.parent.name in packing.SAMPLE for path in found)
        assert 300 <= len(found) * scale <= 1200
