"""`memory search` as the console script runs it: the click-free path (memory/search_cli.py)
says what the click command says, leaves what it does not parse to click, and with a current
index (or a cache at the tip) loads neither pygit2 nor click (memory/storage/mirror.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memory_support import ok, tip

import gitstate
from gitstate.memory.search_cli import parse, parse_index
from gitstate.memory.storage.layout import BrainLayout

SENTENCES = ["我們重構了連線池的重試機制，改用指數退避", "The connection pool retries with backoff"]


@pytest.fixture
def brain(cli: Any) -> None:
    for line in SENTENCES:
        ok(cli("memory", "add", "--layer", "knowledge", line))
    ok(cli("memory", "session", "--project", "demo", "--summary", "改用pygit2實作refs的讀寫"))
    ok(cli("memory", "index"))


def console(*args: str) -> subprocess.CompletedProcess[str]:
    """`git agy-state ARGS…` through the console script's entry (gitstate/entry.py)."""
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitstate", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


PACKAGE_ROOT = str(Path(gitstate.__file__).resolve().parent.parent)
# The console script's own work in a child with no site packages: an editable install's finder
# (site-packages' .pth) imports pathlib itself, a wheel install has none (as test_hook_fastpath).
RUNNER = (
    "import sys; sys.path.insert(0, {root!r}); sys.argv = ['git-agy-state', *{args!r}];"
    " from gitstate.entry import main; main()"
)


def bare_console(*args: str) -> subprocess.CompletedProcess[str]:
    """`git agy-state ARGS…` through gitstate/entry.py, with `-S`: only what we import shows."""
    return subprocess.run(
        [
            sys.executable,
            "-S",
            "-X",
            "importtime",
            "-c",
            RUNNER.format(root=PACKAGE_ROOT, args=args),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def loaded(proc: subprocess.CompletedProcess[str]) -> set[str]:
    return {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }


def said(proc: subprocess.CompletedProcess[str]) -> str:
    return "".join(
        line + "\n" for line in proc.stderr.splitlines() if not line.startswith("import time:")
    )


class TestParse:
    @pytest.mark.parametrize(
        ("args", "words", "limit", "as_json"),
        [
            (["連線"], ["連線"], 10, False),
            (["--json", "a", "b"], ["a", "b"], 10, True),
            (["a", "-n", "3"], ["a"], 3, False),
            (["-n3", "a", "--json"], ["a"], 3, True),
            (["--limit", "4", "a"], ["a"], 4, False),
            (["--limit=5", "a", "-n", "2"], ["a"], 2, False),  # the last wins, as in click
            (["", "a"], ["", "a"], 10, False),
        ],
    )
    def test_the_usual_forms(
        self, args: list[str], words: list[str], limit: int, as_json: bool
    ) -> None:
        parsed = parse(args)
        assert parsed is not None
        assert (parsed.words, parsed.limit, parsed.as_json) == (words, limit, as_json)

    @pytest.mark.parametrize(
        "args",
        [
            [],
            ["--json"],
            ["-h"],
            ["a", "--help"],
            ["--", "-a"],
            ["-x", "a"],
            ["a", "-n"],
            ["a", "-n", "x"],
            ["a", "-n", "-1"],
            ["a", "-n=2"],
            ["a", "--limit=+2"],
            ["a", "-n", "２"],
            ["--json=1", "a"],
            ["--lim", "2", "a"],
        ],
    )
    def test_anything_else_is_left_to_click(self, args: list[str]) -> None:
        assert parse(args) is None

    def test_index_takes_its_two_flags_only(self) -> None:
        assert parse_index([]) == (False, False)
        assert parse_index(["--json", "--rebuild", "--json"]) == (True, True)
        for args in (["-h"], ["--rebuild", "x"], ["--rebuild=1"], ["--"]):
            assert parse_index(args) is None


@pytest.mark.usefixtures("brain")
class TestSameAsClick:
    @pytest.mark.parametrize(
        "args",
        [
            ["連線"],
            ["--json", "連線"],
            ["-n", "1", "--json", "的"],
            ["的", "-n1"],
            ["--limit=2", "pygit2實作"],
            ["backoff", "連線"],
            ["zzz"],
            ["--json", "zzz"],
            ["，。"],
            ["--json", "，。"],
            ["x", "-n", "0"],
            ["--json", "x", "--limit", "0"],
        ],
    )
    def test_output_and_exit_code(self, cli: Any, args: list[str]) -> None:
        expected = cli("memory", "search", *args)
        proc = console("memory", "search", *args)
        assert (proc.returncode, proc.stdout, said(proc)) == (
            expected.exit_code,
            expected.stdout,
            expected.stderr,
        )
        assert "click" not in loaded(proc)

    @pytest.mark.parametrize("args", [[], ["--json"], ["--rebuild", "--json"], ["--rebuild"]])
    def test_index_output_and_exit_code(self, cli: Any, args: list[str]) -> None:
        # The index is current here: both say so (a rebuild reads every file each time).
        expected = cli("memory", "index", *args)
        proc = console("memory", "index", *args)
        assert (proc.returncode, proc.stdout, said(proc)) == (
            expected.exit_code,
            expected.stdout,
            expected.stderr,
        )
        assert "click" not in loaded(proc)

    @pytest.mark.parametrize(
        ("args", "code"), [(["--help"], 0), (["-x", "a"], 64), (["a", "-n", "x"], 64)]
    )
    def test_what_it_does_not_parse_goes_to_click(self, args: list[str], code: int) -> None:
        proc = console("memory", "search", *args)
        assert proc.returncode == code
        assert "click" in loaded(proc)
        assert ("Usage: git agy-state memory search" in proc.stdout) == (code == 0)
        assert ("hint: git agy-state memory search --help" in said(proc)) == (code == 64)


@pytest.mark.usefixtures("brain")
class TestWithoutPygit2:
    def test_a_current_index_search_imports_neither_pygit2_nor_click(self) -> None:
        proc = console("memory", "search", "--json", "連線")
        assert proc.returncode == 0, proc.stderr
        assert [hit["path"] for hit in json.loads(proc.stdout)] == ["MEMORY.md"]
        modules = loaded(proc)
        assert "gitstate.memory.search_cli" in modules
        assert not {m for m in modules if m.split(".")[0] in ("click", "pygit2")}

    def test_a_current_index_search_imports_neither_pathlib_pygit2_nor_click(self) -> None:
        proc = bare_console("memory", "search", "--json", "連線")
        assert proc.returncode == 0, proc.stderr
        assert [hit["path"] for hit in json.loads(proc.stdout)] == ["MEMORY.md"]
        modules = loaded(proc)
        assert "gitstate.memory.search_cli" in modules  # the probe itself works
        never = {"pathlib", "pygit2", "click", "typing", "urllib", "contextlib", "subprocess"}
        assert not {m for m in modules if m.split(".")[0] in never}

    def test_a_behind_index_catches_up_from_the_cache_and_imports_neither_pygit2_nor_click(
        self, cli: Any
    ) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "新的量子計算筆記"))
        proc = console("memory", "search", "--json", "量子")
        assert proc.returncode == 0, proc.stderr
        assert [hit["path"] for hit in json.loads(proc.stdout)] == ["MEMORY.md"]
        assert not {m for m in loaded(proc) if m.split(".")[0] in ("click", "pygit2")}
        again = console("memory", "index", "--json")
        assert json.loads(again.stdout)["indexed"] == 0  # the catch-up recorded the tip
        assert json.loads(again.stdout)["tip"] == tip()

    def test_a_cached_file_that_is_not_its_blob_sends_the_search_to_git(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "新的量子計算筆記"))
        cached = BrainLayout().cache_dir / "MEMORY.md"
        cached.write_text(cached.read_text().replace("量子", "偽造"))
        proc = console("memory", "search", "--json", "量子")
        assert [hit["path"] for hit in json.loads(proc.stdout)] == ["MEMORY.md"]
        assert "pygit2" in loaded(proc)  # the ref's own blobs, through git
        assert json.loads(console("memory", "search", "--json", "偽造").stdout) == []

    def test_a_rebuild_from_the_cache_imports_neither_pygit2_nor_click(self) -> None:
        proc = console("memory", "index", "--rebuild", "--json")
        done = json.loads(proc.stdout)
        assert (done["rebuilt"], done["files"], done["tip"]) == (True, done["indexed"], tip())
        assert not {m for m in loaded(proc) if m.split(".")[0] in ("click", "pygit2")}

    def test_a_deleted_index_is_built_on_the_way(self) -> None:
        BrainLayout().index_path.unlink()
        proc = console("memory", "search", "--json", "連線")
        assert proc.returncode == 0 and json.loads(proc.stdout)[0]["path"] == "MEMORY.md"
        assert BrainLayout().index_path.exists()


@pytest.mark.parametrize("args", [["連線"], ["--json", "連線"]])
def test_no_brain_is_the_same_error(cli: Any, args: list[str]) -> None:
    expected = cli("memory", "search", *args)
    proc = console("memory", "search", *args)
    assert expected.exit_code != 0
    assert (proc.returncode, proc.stdout, said(proc)) == (
        expected.exit_code,
        expected.stdout,
        expected.stderr,
    )
    assert not BrainLayout().exists()
