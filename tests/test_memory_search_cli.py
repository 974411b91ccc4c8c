"""`memory search` as the console script runs it: the click-free path (memory/search_cli.py)
says what the click command says, leaves what it does not parse to click, and with a current
index (or a cache at the tip) loads neither pygit2 nor click (memory/storage/mirror.py)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memory_support import ok, tip

import gitstate
from gitstate.document.controls import escape_json
from gitstate.memory.search_cli import parse, parse_index, render
from gitstate.memory.storage.fts import Hit
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
        # nor re: a query's CJK runs are found by a loop, the patterns are for indexed files
        # (functools does load: _sqlite3 imports it for its statement cache)
        never |= {"re", "enum"}
        assert not {m for m in modules if m.split(".")[0] in never}

    def test_a_search_printed_as_text_loads_no_re_either(self) -> None:
        # The hits are shown through document/controls.py's escape, whose patterns compile
        # only for a text that holds a control.
        proc = bare_console("memory", "search", "連線")
        assert proc.returncode == 0, proc.stderr
        assert "MEMORY.md" in proc.stdout
        modules = loaded(proc)
        assert "gitstate.document.controls" in modules  # the probe itself works
        assert not {m for m in modules if m.split(".")[0] in ("re", "enum")}

    def test_a_current_index_search_loads_only_what_it_uses(self) -> None:
        # A Chinese word with a hit: the hit is judged with the word list, mapped from its
        # module's source, not imported; the JSON is written without json; no error, no
        # cache, no view, no private-file helper (the index is already private).
        proc = bare_console("memory", "search", "--json", "連線")
        assert [hit["path"] for hit in json.loads(proc.stdout)] == ["MEMORY.md"]
        modules = loaded(proc)
        assert {
            "gitstate.memory.document.wordbreak",
            "gitstate.memory.storage.word_list",
        } <= modules
        unwanted = {
            "json",
            "datetime",
            "sqlite3",  # _sqlite3 alone
            "hashlib",
            "gitstate.errors",
            "gitstate.document",
            "gitstate.storage.view",
            "gitstate.storage.private",
            "gitstate.memory.storage.cache",
            "gitstate.memory.storage.mirror",  # the cache's reader: the index is current
            "gitstate.memory.document.files",
            "gitstate.memory.document.cjk_words",
        }
        assert not {m for m in modules for u in unwanted if m == u or m.startswith(u + ".")}

    def test_an_english_search_loads_no_word_list_and_no_unicode_tables(self) -> None:
        proc = bare_console("memory", "search", "--json", "backoff")
        assert [hit["path"] for hit in json.loads(proc.stdout)] == ["MEMORY.md"]
        modules = loaded(proc)
        assert "gitstate.memory.search_cli" in modules
        assert not modules & {"unicodedata", "mmap", "gitstate.memory.document.wordbreak"}

    def test_a_loose_index_and_its_folder_are_tightened_by_a_search(self) -> None:
        index = BrainLayout().index_path
        os.chmod(index.parent, 0o755)
        os.chmod(index, 0o644)
        proc = console("memory", "search", "--json", "連線")
        assert [hit["path"] for hit in json.loads(proc.stdout)] == ["MEMORY.md"]
        assert stat.S_IMODE(index.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(index.stat().st_mode) == 0o600

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


# Text as a hit can hold it: any character, controls and lone surrogates included.
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)


@given(st.lists(st.tuples(TEXT, TEXT, st.floats(allow_nan=True, allow_infinity=True)), max_size=4))
def test_json_hits_are_what_json_dumps_writes(fields: list[tuple[str, str, float]]) -> None:
    """render() writes --json hits without the json module: the same text, byte for byte, as
    json.dumps with the controls it leaves raw escaped (controls.escape_json)."""
    hits = [Hit(path, snippet, score, n) for n, (path, snippet, score) in enumerate(fields)]
    dumped = json.dumps([hit.as_json() for hit in hits], ensure_ascii=False, indent=2)
    assert render(hits, "q", as_json=True) == escape_json(dumped) + "\n"
