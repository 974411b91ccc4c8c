"""Bad input moves nothing (issue 12, items 1, 2, 5, 7): `--ops` reads only what it can read to
the end, a patch or save result is held to every byte rule before the commit, malformed patch
JSON is a usage error, archive writes nothing until it knows it will succeed, and status,
doctor, save and diff say what is true.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo

from gitstate.cli.patch import OPS_LIMIT
from gitstate.document.model import MAX_BYTES
from gitstate.errors import EXIT_FAILURE, EXIT_USAGE


def agy_refs(repo: Repo) -> str:
    return repo.git("for-each-ref", "--format=%(objectname) %(refname)", "refs/agy")


def one_error(result: Any, code: int) -> str:
    """The command failed with `code`, one `error:` line (and maybe a hint), no traceback."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert lines and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert all(line.startswith(("error: ", "hint: ", "  ")) for line in lines), result.stderr
    first: str = lines[0]
    return first


@pytest.fixture
def started(repo: Repo, cli: Any) -> Repo:
    result = cli("patch", "--set", "goal=ship it", "--todo", "write the test")
    assert result.exit_code == 0, result.stderr
    return repo


def ops(*items: dict[str, object]) -> str:
    return json.dumps({"ops": list(items)})


class TestOpsSource:
    """`--ops FILE|-`: a regular file or stdin, bounded; anything else is a usage error."""

    @pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "directory", "socket"])
    def test_what_is_not_a_regular_file_is_refused_unopened(
        self, started: Repo, cli: Any, tmp_path: Path, kind: str
    ) -> None:
        before = agy_refs(started)
        if kind == "fifo":
            path = tmp_path / "ops.fifo"
            os.mkfifo(path)  # nobody writes: opening it blocking would hang
        elif kind == "directory":
            path = tmp_path
        elif kind == "socket":
            import socket

            path = tmp_path / "ops.sock"
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(path))
        else:
            path = Path(kind)
        line = one_error(cli("patch", "--ops", str(path)), EXIT_USAGE)
        assert "not a regular file" in line
        assert agy_refs(started) == before

    def test_a_symlink_to_a_regular_file_is_read(
        self, started: Repo, cli: Any, tmp_path: Path
    ) -> None:
        (tmp_path / "real.json").write_text(ops({"op": "todo", "text": "from a link"}))
        (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
        result = cli("patch", "--ops", str(tmp_path / "link.json"))
        assert result.exit_code == 0, result.stderr
        assert "- [ ] from a link" in started.view.read_text()

    def test_a_file_past_the_bound_is_refused(
        self, started: Repo, cli: Any, tmp_path: Path
    ) -> None:
        big = tmp_path / "big.json"
        big.write_bytes(b" " * OPS_LIMIT + ops({"op": "todo", "text": "x"}).encode())
        before = agy_refs(started)
        line = one_error(cli("patch", "--ops", str(big)), EXIT_USAGE)
        assert "over 4 MiB" in line
        assert agy_refs(started) == before

    def test_stdin_past_the_bound_is_refused(self, started: Repo, cli: Any) -> None:
        line = one_error(cli("patch", "--ops", "-", input=b"[" * (OPS_LIMIT + 10)), EXIT_USAGE)
        assert "stdin is over 4 MiB" in line

    def test_a_nul_in_the_path_and_bytes_that_are_not_utf8(
        self, started: Repo, cli: Any, tmp_path: Path
    ) -> None:
        one_error(cli("patch", "--ops", "ops\x00.json"), EXIT_USAGE)
        bad = tmp_path / "bad.json"
        bad.write_bytes(b'{"ops": [{"op": "todo", "text": "\xff"}]}')
        assert "not UTF-8" in one_error(cli("patch", "--ops", str(bad)), EXIT_USAGE)
        assert "not UTF-8" in one_error(
            cli("patch", "--ops", "-", input=b'{"ops": [{"op": "todo", "text": "\xc3"}]}'),
            EXIT_USAGE,
        )

    @pytest.mark.parametrize("source", ["/dev/zero", "fifo", "stdin-zero"])
    def test_the_real_command_ends(self, started: Repo, tmp_path: Path, source: str) -> None:
        """As a process: `--ops /dev/zero`, a FIFO nobody writes, and stdin from /dev/zero end
        with exit 64 (they used to read or wait forever)."""
        stdin: Any = subprocess.DEVNULL
        arg = source
        if source == "fifo":
            arg = str(tmp_path / "ops.fifo")
            os.mkfifo(arg)
        elif source == "stdin-zero":
            arg = "-"
            stdin = open("/dev/zero", "rb")  # noqa: SIM115 - closed below
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "gitstate", "patch", "--ops", arg],
                cwd=started.path,
                stdin=stdin,
                capture_output=True,
                text=True,
                timeout=120,  # a bound on the wait, not a timing assertion
                check=False,
            )
        finally:
            if stdin is not subprocess.DEVNULL:
                stdin.close()
        assert proc.returncode == EXIT_USAGE, proc.stderr
        assert proc.stderr.startswith("error: ")


class TestResultLimits:
    """A patch or save result is held to every byte rule before the commit (item 2)."""

    @pytest.mark.parametrize(
        ("size", "code"),
        [(MAX_BYTES, EXIT_FAILURE), (MAX_BYTES + 1, EXIT_USAGE)],
        ids=["result-too-big", "text-too-big"],
    )
    def test_a_1_mib_goal_through_stdin_moves_nothing(
        self, started: Repo, cli: Any, size: int, code: int
    ) -> None:
        """It used to commit a 1,048,761-byte STATE.md, after which every save failed."""
        before = agy_refs(started)
        view = started.view.read_bytes()
        patch = ops({"op": "set", "section": "goal", "text": "x" * size})
        one_error(cli("patch", "--ops", "-", input=patch), code)
        assert agy_refs(started) == before
        assert started.view.read_bytes() == view

    def test_a_result_over_1_mib_is_refused_and_the_chain_keeps_working(
        self, started: Repo, cli: Any
    ) -> None:
        big = cli("patch", "--set", "key_data=- log " + "y" * 600_000)
        assert big.exit_code == 0, big.stderr
        before = agy_refs(started)
        patch = ops({"op": "set", "section": "goal", "text": "x" * 500_000})
        result = cli("patch", "--ops", "-", input=patch)
        one_error(result, EXIT_FAILURE)
        assert "over the 1 MiB limit" in result.stderr
        assert agy_refs(started) == before
        # Nothing is stuck: the next patch and save work, the view is clean.
        assert cli("patch", "--add", "open_issues=still fine").exit_code == 0
        status = json.loads(cli("status", "--json").stdout)
        assert status["view"] == "clean" and status["is_tip"]
        assert cli("save").exit_code == 0
        assert int(started.git("cat-file", "-s", "refs/agy/state:STATE.md")) <= MAX_BYTES

    def test_a_merge_result_over_1_mib_is_refused_by_save(self, started: Repo, cli: Any) -> None:
        """The write path's own check: a stale view merged with a tip that moved makes a
        document over the limit; it is refused, not committed (the line limits alone may be
        broken by a merge, docs/format.md)."""
        first = started.ref()
        assert first is not None
        assert cli("patch", "--set", "key_data=- log " + "k" * 600_000).exit_code == 0
        assert cli("checkout", first, "--force").exit_code == 0  # the view: stale, clean
        text = started.view.read_text()
        heading = "## Open issues\n"
        started.view.write_text(text.replace(heading, heading + "- " + "o" * 600_000 + "\n"))
        before = agy_refs(started)
        result = cli("save")
        one_error(result, EXIT_FAILURE)
        assert "over the 1 MiB limit" in result.stderr
        assert agy_refs(started) == before

    def test_a_lone_surrogate_in_a_flag_is_a_usage_error(self, started: Repo, cli: Any) -> None:
        # What Python makes of argument bytes that are not UTF-8 (surrogateescape).
        before = agy_refs(started)
        for args in (
            ["--add", "goal=a\udcff"],
            ["--todo", "\udcff"],
            ["--done", "1", "--verify", "ok\udcff"],
            ["--add", "goal=a", "-m", "subject \udcff"],
        ):
            one_error(cli("patch", *args), EXIT_USAGE)
        assert agy_refs(started) == before


class TestMalformedJson:
    """Malformed patch JSON: exit 64 with one line, whatever it holds (item 5)."""

    @pytest.mark.parametrize(
        "text",
        [
            "[" * 100_000,
            '{"ops": [{"op": "add", "section": "goal", "text": "\\ud800"}]}',
            '{"ops": [{"op": "start", "step": "\\udc00x"}]}',
            '{"ops": [{"op": "add", "section": "goal", "text": "a\x00b"}]}',
            '{"ops": [{"op": "start", "step": ' + "7" * 5000 + "}]}",
            "42",
            '"ops"',
            "null",
            "[]",
            '{"ops": [["set"]]}',
            '{"ops": [{"op": {"set": 1}}]}',
            '{"ops": [{"op": "set", "section": 1, "text": "a"}]}',
            '{"ops": [{"op": "set", "section": "goal", "text": null}]}',
            '{"ops": [{"op": "start", "step": [' + "1, " * 10_000 + "1]}]}",
            '{"ops": [{"op": "start", "step": true}]}',
            '{"ops": [' + ", ".join(['{"op": "todo", "text": "a"}'] * 101) + "]}",
            '{"ops": [{"op": "set", "section": "' + "g" * 100_000 + '", "text": "a"}]}',
            "\ufeff" + '{"ops": [{"op": "todo", "text": "a"}]}',
        ],
        ids=lambda text: text[:24],
    )
    def test_a_usage_error_on_one_line(self, started: Repo, cli: Any, text: str) -> None:
        before = agy_refs(started)
        line = one_error(cli("patch", "--ops", "-", input=text), EXIT_USAGE)
        assert len(line) < 300
        assert agy_refs(started) == before

    def test_a_nul_escape_in_a_text_is_an_invalid_document(self, started: Repo, cli: Any) -> None:
        """Well-formed JSON whose text the document refuses (docs/format.md: a control in a
        patch text is exit 1, naming the line)."""
        patch = ops({"op": "add", "section": "goal", "text": "a\u0000b"})
        result = cli("patch", "--ops", "-", input=patch)
        one_error(result, EXIT_FAILURE)
        assert "NUL" in result.stderr


def closing_tip(repo: Repo) -> bool:
    return "STATE.md" not in repo.git("ls-tree", "--name-only", "refs/agy/state")


class TestArchiveWritesLast:
    def test_a_closing_snapshot_that_cannot_be_written_leaves_no_archive_ref(
        self, started: Repo, cli: Any
    ) -> None:
        """Signing fails (git commit would too): the archive used to create
        refs/agy/archive/… and then fail."""
        assert cli("save").exit_code == 0
        before = agy_refs(started)
        started.git("config", "commit.gpgsign", "true")
        started.git("config", "gpg.program", "false")
        started.git("config", "user.signingkey", "ABCDEF")
        result = cli("archive")
        assert result.exit_code != 0
        assert result.stderr.startswith("error: ")
        assert agy_refs(started) == before
        assert "refs/agy/archive/" not in before

    def test_a_lock_a_killed_writer_left_costs_the_archive_nothing(
        self, started: Repo, cli: Any
    ) -> None:
        """Writing last must not mean failing on the first refused swap: a stale ref lock is
        cleared and the swap retried, as every writer does (docs/format.md)."""
        assert cli("save").exit_code == 0
        lock = started.path / ".git" / "refs" / "agy" / "state.lock"
        lock.write_text("")
        os.utime(lock, (1, 1))  # long dead
        result = cli("archive")
        assert result.exit_code == 0, result.stderr
        assert closing_tip(started)
        assert "refs/agy/archive/" in agy_refs(started)

    def test_a_chain_at_a_tag_object_leaves_no_archive_ref(self, started: Repo, cli: Any) -> None:
        tip = started.ref()
        tag = started.git(
            "mktag",
            input=f"object {tip}\ntype commit\ntag t\ntagger T <t@e> 0 +0000\n\nm\n",
        ).strip()
        started.git("update-ref", "--no-deref", "refs/agy/state", tag)
        before = agy_refs(started)
        started.view.unlink()
        result = cli("archive")
        assert result.exit_code != 0
        assert result.stderr.startswith("error: ") and "internal error" not in result.stderr
        assert agy_refs(started) == before


class TestTruths:
    """Item 7: each command says what is true."""

    def test_save_of_a_view_while_the_tip_holds_no_state(self, started: Repo, cli: Any) -> None:
        """A task closed, then one of its snapshots checked out: save writes it (it used to say
        "nothing to save: there is no STATE.md" with STATE.md right there)."""
        task = started.ref()
        assert task is not None
        assert cli("archive").exit_code == 0
        assert closing_tip(started) and not started.view.exists()
        assert cli("checkout", task).exit_code == 0
        result = cli("save")
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith("saved "), result.stdout
        assert not closing_tip(started)
        assert started.git("show", "refs/agy/state:STATE.md") == started.view.read_text()

    def test_diff_of_a_view_over_the_limit_is_refused(self, started: Repo, cli: Any) -> None:
        started.view.write_bytes(b"x" * (50 * 1024 * 1024))
        result = cli("diff")
        line = one_error(result, EXIT_FAILURE)
        assert "over 1 MiB" in line
        assert str(50 * 1024 * 1024) in result.stderr  # the real size, not what was read
        assert result.stdout == ""
        json_result = cli("diff", "--json")
        assert json_result.exit_code == EXIT_FAILURE
        assert "diff" not in json.loads(json_result.stdout)

    def test_diff_of_a_snapshot_over_the_limit_is_refused(self, started: Repo, cli: Any) -> None:
        """Built with plain git (no writer of ours makes one)."""
        tip = started.ref()
        blob = started.git("hash-object", "-w", "--stdin", input="y" * (MAX_BYTES + 5)).strip()
        tree = started.git("mktree", input=f"100644 blob {blob}\tSTATE.md\n").strip()
        big = started.git(
            "commit-tree", tree, "-p", str(tip), "-m", "big\n\nAgy-Format: 1\nAgy-Phase: IDLE"
        ).strip()
        started.git("update-ref", "refs/agy/state", big, str(tip))
        started.view.unlink()
        line = one_error(cli("diff", str(tip), big), EXIT_FAILURE)
        assert f"snapshot {big[:7]}" in line and "over 1 MiB" in line

    def test_status_and_doctor_agree_after_a_phase_change(self, started: Repo, cli: Any) -> None:
        """`phase` appends a snapshot of the same tree and leaves the view alone: the view is
        the tip's text, and both commands say so."""
        assert cli("phase", "PLANNING").exit_code == 0
        status = json.loads(cli("status", "--json").stdout)
        assert status["view"] == "clean" and status["is_tip"]
        doctor = json.loads(cli("doctor", "--json").stdout)
        checks = doctor["checks"] if isinstance(doctor, dict) else doctor
        view_check = next(c for c in checks if c["name"] == "STATE.md")
        assert view_check["status"] == "ok", view_check

    def test_status_and_doctor_agree_on_a_stale_view(self, started: Repo, cli: Any) -> None:
        first = started.ref()
        assert cli("patch", "--todo", "another").exit_code == 0
        assert cli("checkout", str(first)).exit_code == 0
        status = json.loads(cli("status", "--json").stdout)
        assert status["view"] == "clean" and not status["is_tip"]
        doctor = json.loads(cli("doctor", "--json").stdout)
        checks = doctor["checks"] if isinstance(doctor, dict) else doctor
        view_check = next(c for c in checks if c["name"] == "STATE.md")
        assert view_check["status"] == "warn", view_check
