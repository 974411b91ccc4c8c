"""storage/rawobjects.py: the standard-library objects and ref reads, checked against git."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Repo

from gitstate.storage import rawobjects
from gitstate.storage.snapshot_text import plain_ident, signature


def test_tree_and_commit_bytes_give_the_ids_git_gives(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    objects = (repo.path / ".git") / "objects"
    one = rawobjects.write_loose(objects, "blob", b"one\n")
    two = rawobjects.write_loose(objects, "blob", "två\n".encode())
    tree = rawobjects.write_loose(objects, "tree", rawobjects.tree_bytes([("b", two), ("a", one)]))
    assert repo.git("ls-tree", tree).splitlines() == [
        f"100644 blob {one}\ta",
        f"100644 blob {two}\tb",
    ]
    who = signature("Ann", "ann@example.com", 1700000000, -90)
    body = rawobjects.commit_bytes(tree, [], who, who, "subject\n\nbody\n")
    commit = rawobjects.write_loose(objects, "commit", body)
    for kind in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{kind}_NAME", "Ann")
        monkeypatch.setenv(f"GIT_{kind}_EMAIL", "ann@example.com")
        monkeypatch.setenv(f"GIT_{kind}_DATE", "@1700000000 -0130")
    made = repo.git("commit-tree", tree, input="subject\n\nbody\n").strip()
    assert commit == made
    child = rawobjects.commit_bytes(tree, [commit], who, who, "next\n")
    second = rawobjects.write_loose(objects, "commit", child)
    assert repo.git("rev-parse", f"{second}^").strip() == commit


def test_a_ref_is_read_loose_first_then_from_packed_refs(repo: Repo) -> None:
    commondir = repo.path / ".git"
    head = repo.git("rev-parse", "HEAD").strip()
    assert rawobjects.read_ref(commondir, "refs/heads/main") == head
    repo.git("tag", "-a", "-m", "t", "v1")
    repo.git("pack-refs", "--all")
    assert not (commondir / "refs" / "heads" / "main").exists()
    assert rawobjects.read_ref(commondir, "refs/heads/main") == head
    tag = repo.git("rev-parse", "refs/tags/v1").strip()
    assert rawobjects.read_ref(commondir, "refs/tags/v1") == tag  # not its peeled `^` line
    assert rawobjects.read_ref(commondir, "refs/heads/gone") is None
    repo.git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
    assert rawobjects.read_ref(commondir, "refs/heads/alias") == "ref: refs/heads/main"


def test_a_ref_file_that_is_not_text_is_the_callers_to_judge(repo: Repo) -> None:
    commondir = repo.path / ".git"
    (commondir / "refs" / "heads" / "odd").write_bytes(b"\xff\xfe")
    with pytest.raises(UnicodeDecodeError):
        rawobjects.read_ref(commondir, "refs/heads/odd")


def test_ids_and_plain_identities() -> None:
    assert rawobjects.is_oid("a" * 40) and rawobjects.is_oid("b" * 64)
    assert not rawobjects.is_oid("b" * 64, (40,))
    assert not rawobjects.is_oid("A" * 40) and not rawobjects.is_oid("a" * 39)
    assert plain_ident("Ann Lee") and plain_ident("ann@example.com")
    for odd in ("", " Ann", "Ann ", "A<nn", "A\tnn", "A\x7fnn"):
        assert not plain_ident(odd)


def test_read_ref_reads_packed_refs_line_by_line_and_skips_an_endless_line(tmp_path: Path) -> None:
    oid = "a" * 40
    (tmp_path / "packed-refs").write_bytes(
        b"# pack-refs with: peeled\n" + b"x" * (3 * rawobjects.PACKED_LINE_LIMIT) + b"\n"
        + f"{oid} refs/agy/state\n".encode()
    )  # fmt: skip
    assert rawobjects.read_ref(tmp_path, "refs/agy/state") == oid
    assert rawobjects.read_ref(tmp_path, "refs/agy/other") is None
