"""The file system refuses (issue 12, item 4): a read-only repository, a full disk. Each write
is one line, `error: cannot write PATH: read-only file system` style, exit 1, with a hint, and
no ref moves; the agent hooks fail open.

We run as root, whom chmod does not stop, so the repository lives on a small tmpfs that is
remounted read-only, or filled up. Where mounting is not permitted, the tests skip.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitstate.errors import from_os_error, os_failure
from tests.conftest import Repo

STATE = "refs/agy/state"


def _mount(*args: str) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0:
        return False
    proc = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    return proc.returncode == 0


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of our own, unmounted afterwards."""
    where = tmp_path / "fs"
    where.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)):
        pytest.skip("mounting a tmpfs is not permitted here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


@pytest.fixture
def fs_repo(small_fs: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A repository on the small file system with two snapshots, a decision and an unsaved
    edit of the view; the current directory is its work tree."""
    repo = Repo(small_fs / "repo")
    repo.path.mkdir()
    repo.git("init", "-q", "-b", "main")
    repo.commit("README", "readme\n", "initial")
    monkeypatch.chdir(repo.path)
    for args in (("--set", "goal=ship it", "--todo", "write it"), ("--start", "1")):
        assert cli("patch", *args).exit_code == 0
    assert cli("decide", "--type", "Rule", "keep it small").exit_code == 0
    repo.view.write_text(repo.view.read_text().replace("ship it", "ship it soon"))
    return repo


def refs_of(repo: Repo) -> str:
    return repo.git("for-each-ref", "--format=%(refname) %(objectname)")


def read_only(repo: Repo, small_fs: Path) -> None:
    if not _mount("-o", "remount,ro", str(small_fs)):
        pytest.skip("remounting read-only is not permitted here")
    with pytest.raises(OSError):
        (repo.path / ".probe").write_text("x")


def fill(small_fs: Path) -> None:
    chunk = b"\0" * 65536
    with open(small_fs / "filler", "wb") as out:
        try:
            for _ in range(1000):  # 64 MiB at most: far past the 2 MiB file system
                out.write(chunk)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
            return
    raise AssertionError("the file system never filled up")


WRITERS: list[tuple[str, ...]] = [
    ("save", "-m", "x"),
    ("patch", "--todo", "another"),
    ("phase", "PLANNING"),
    ("checkout", "--force"),
    ("restore", "~1", "--force"),
    ("archive",),
    ("checkpoint", "-m", "c"),
    ("decide", "--type", "Rule", "another"),
    ("error", "--type", "t", "--cause", "c", "--fix", "f", "--scope", "s"),
    ("init",),
    ("install", "--git"),
]


def assert_refused(cli: Any, repo: Repo, args: tuple[str, ...], words: str) -> None:
    before = refs_of(repo)
    result = cli(*args)
    shown = (args, result.exit_code, result.stdout, result.stderr)
    assert result.exit_code == 1, shown
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: cannot "), shown
    assert first.endswith(f": {words}"), shown
    assert "internal error" not in result.stderr and "kept moving" not in result.stderr, shown
    assert "\nhint: " in result.stderr, shown
    assert refs_of(repo) == before, shown


def test_a_read_only_repository(fs_repo: Repo, small_fs: Path, cli: Any) -> None:
    exclude = fs_repo.path / ".git" / "info" / "exclude"  # the first save excluded the view:
    exclude.write_text(exclude.read_text().replace("/STATE.md\n", ""))  # init has it to do
    read_only(fs_repo, small_fs)
    before = refs_of(fs_repo)
    for args in WRITERS:
        assert_refused(cli, fs_repo, args, "read-only file system")
    result = cli("save", "--json")
    body = json.loads(result.stdout)
    assert body["code"] == 1 and body["error"].endswith(": read-only file system")
    assert str(fs_repo.path) in body["error"]  # the path it could not write
    # Reading still works.
    for args in (("status",), ("show",), ("log",), ("decisions",), ("doctor",)):
        assert cli(*args).exit_code == 0, args
    assert refs_of(fs_repo) == before


def test_a_full_disk(fs_repo: Repo, small_fs: Path, cli: Any) -> None:
    fill(small_fs)
    before = refs_of(fs_repo)
    for args in WRITERS:
        if args != ("init",):  # appending a line to info/exclude may still fit
            assert_refused(cli, fs_repo, args, "no space left on device")
    assert refs_of(fs_repo) == before
    (small_fs / "filler").unlink()  # room again: the same save goes through
    assert cli("save", "-m", "x").exit_code == 0
    assert refs_of(fs_repo) != before


@pytest.mark.parametrize("how", ["read-only", "full"])
def test_the_agent_hooks_fail_open(fs_repo: Repo, small_fs: Path, how: str) -> None:
    if how == "read-only":
        read_only(fs_repo, small_fs)
    else:
        fill(small_fs)
    before = refs_of(fs_repo)
    payload = json.dumps({"session_id": "s1", "cwd": str(fs_repo.path)})
    for event in ("inject", "stop-guard", "pre-compact"):
        proc = subprocess.run(
            [sys.executable, "-m", "gitstate", "hook", event],
            cwd=fs_repo.path,
            input=payload,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, (event, proc.stderr)
        assert "Traceback" not in proc.stderr, event
    assert refs_of(fs_repo) == before


# ---- the mapping itself (no mount needed) -------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (
            OSError(errno.EROFS, "x", "/r/.git/agy/lock"),
            "cannot write /r/.git/agy/lock: read-only file system",
        ),
        (OSError(errno.ENOSPC, "x"), "cannot write to the repository: no space left on device"),
        (
            PermissionError(errno.EACCES, "x", "/r/STATE.md"),
            "cannot access /r/STATE.md: permission denied",
        ),
        (OSError(errno.EDQUOT, "x", "/r/f"), "cannot write /r/f: disk quota exceeded"),
        (
            OSError("failed to write out file: No space left on device"),
            "cannot write to the repository: no space left on device",
        ),
        (
            OSError("could not open '/r/.git/objects/ab/cd' for writing: Read-only file system"),
            "cannot write /r/.git/objects/ab/cd: read-only file system",
        ),
    ],
)
def test_an_os_error_is_one_line(exc: OSError, line: str) -> None:
    said = from_os_error(exc)
    assert said.message == line and said.exit_code == 1 and said.hint


def test_a_libgit2_error_in_the_os_words_is_mapped_too() -> None:
    class GitError(Exception):  # pygit2.GitError carries the OS's words in its text only
        pass

    said = os_failure(GitError("failed to write out file: No space left on device"))
    assert said is not None and said.message.endswith(": no space left on device")
    assert os_failure(GitError("something else")) is None
