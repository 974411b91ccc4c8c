"""Control characters: refused on input (STATE.md, patches, decision and error records, memory
texts, job plans) and escaped on output (every human printer; JSON too) — `rm -rf /` plus
backspaces must never display as "safe cmd"."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from conftest import Repo
from support import EN_SAMPLE

from gitstate.document import controls
from gitstate.document.validate import check_text

TRICK = "rm -rf /" + "\b" * 8 + "safe cmd"
ESC = "\x1b"


class TestPure:
    @pytest.mark.parametrize(
        "char",
        [*"\x00\x07\b\x0b\x0c\x1b\x7f\x85\x9b\x9d", *"\u202a\u202e\u2066\u2069"],
    )
    def test_each_control_is_found(self, char: str) -> None:
        assert controls.find(f"ok\nbad {char} here\n") == [(2, char)]
        assert "\\" in controls.escape(char) and char not in controls.escape(char)

    @pytest.mark.parametrize("text", ["tab\there", "crlf\r\nline\r\n", "中文 ✓ é", "\u200d\u200f"])
    def test_ordinary_text_is_no_control(self, text: str) -> None:
        assert controls.find(text) == []
        assert controls.escape(text) == text

    def test_a_lone_cr_is_a_control(self) -> None:
        assert controls.find("a\rb\nc\r\n") == [(1, "\r")]
        assert controls.escape("safe\rrm -rf /") == "safe\\rrm -rf /"

    def test_escape_shows_what_the_text_holds(self) -> None:
        shown = controls.escape(TRICK)
        assert shown == "rm -rf /" + "\\x08" * 8 + "safe cmd"
        assert controls.escape("\x1b]0;title\x07\u202e") == "\\x1b]0;title\\x07\\u202e"

    def test_escape_bytes_keeps_clean_text_byte_for_byte(self) -> None:
        data = EN_SAMPLE.encode()
        assert controls.escape_bytes(data) is data
        assert controls.escape_bytes(b"a\r\nb") == b"a\r\nb"
        assert controls.escape_bytes(b"x\x1b[2J\xff") == b"x\\x1b[2J\\xff"

    def test_escape_json_is_the_same_value(self) -> None:
        text = json.dumps({"t": "a\x9b\u202e\x7f\x1b"}, ensure_ascii=False)
        escaped = controls.escape_json(text)
        assert json.loads(escaped) == json.loads(text)
        assert not controls.find(escaped)

    def test_names(self) -> None:
        assert controls.name("\x1b") == "U+001B (ESC)"
        assert controls.name("\u202e") == "U+202E (RLO)"

    def test_state_md_with_esc_names_the_line(self) -> None:
        text = EN_SAMPLE.replace("## Goal\n", f"## Goal\n{ESC}[2J{TRICK}\n", 1)
        report = check_text(text)
        assert [(p.line, p.code) for p in report.errors] == [(4, "control")]
        assert "U+001B (ESC)" in report.errors[0].message

    def test_every_line_is_reported_and_crlf_is_fine(self) -> None:
        text = EN_SAMPLE.replace("\n", "\r\n").replace("backoff", "back\u202eoff")
        report = check_text(text)
        assert {p.line for p in report.errors if p.code == "control"} == {4, 7}


def _with_view(repo: Repo, cli: Any) -> None:
    repo.view.write_text(EN_SAMPLE)
    assert cli("save").exit_code == 0


class TestRefusedOnInput:
    def test_check_and_save_refuse_an_esc_with_its_line(self, repo: Repo, cli: Any) -> None:
        _with_view(repo, cli)
        tip = repo.ref()
        text = EN_SAMPLE.replace("## Open issues\n", f"## Open issues\n- {TRICK}\n", 1)
        repo.view.write_text(text)
        checked = cli("check")
        assert checked.exit_code == 1
        assert "line 13: " in checked.stdout and "U+0008 (backspace)" in checked.stdout
        assert "\b" not in checked.stdout
        body = json.loads(cli("check", "--json").stdout)
        assert [e["line"] for e in body["errors"]] == [13]
        saved = cli("save")
        assert saved.exit_code == 1 and "line 13: " in saved.stderr
        assert repo.ref() == tip

    def test_a_patch_text_with_a_control_is_refused(self, repo: Repo, cli: Any) -> None:
        _with_view(repo, cli)
        tip = repo.ref()
        result = cli("patch", "--todo", f"deploy{ESC}[8m hidden")
        assert result.exit_code == 1, result.stderr
        assert "U+001B (ESC)" in result.stderr and ESC not in result.stderr
        assert repo.ref() == tip

    def test_decision_and_error_records_refuse_controls(self, repo: Repo, cli: Any) -> None:
        decided = cli("decide", "--type", "Rule", f"always run {TRICK}")
        assert decided.exit_code == 64 and "U+0008 (backspace)" in decided.stderr
        error = ["error", "--type", "T", "--cause", "c\u202e", "--fix", "f", "--scope", "s"]
        recorded = cli(*error)
        assert recorded.exit_code == 64 and "--cause holds" in recorded.stderr
        notes = repo.git("for-each-ref", "refs/notes/agy")
        assert notes == ""

    def test_memory_texts_refuse_controls(self, cli: Any) -> None:
        assert cli("memory", "init").exit_code == 0
        before = subprocess.run(
            ["git", "--git-dir", _brain(), "rev-parse", "refs/agy/memory"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        added = cli("memory", "add", "--layer", "knowledge", f"use {TRICK}")
        assert added.exit_code == 1 and "line " in added.stderr and "U+0008" in added.stderr
        session = cli("memory", "session", "--summary", f"done{ESC}]0;pwned{ESC}\\")
        assert session.exit_code == 1
        after = subprocess.run(
            ["git", "--git-dir", _brain(), "rev-parse", "refs/agy/memory"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert after == before

    def test_a_job_plan_with_a_control_is_refused(self, repo: Repo, cli: Any) -> None:
        repo.git("config", "agy.agent", "true")  # on PATH; never started
        result = cli("job", "run", "--text", f"fix it\n{TRICK}")
        assert result.exit_code == 64, result.stderr
        assert "line 2 holds the control character U+0008" in result.stderr
        assert not (repo.path / ".git" / "agy" / "jobs").exists() or not list(
            (repo.path / ".git" / "agy" / "jobs").iterdir()
        )


def _brain() -> str:
    from gitstate.memory.storage.layout import brain_path

    return str(brain_path())


def _craft_snapshot(repo: Repo, text: str, subject: str) -> str:
    """A snapshot written with git plumbing, as a hostile chain would arrive: no validation."""
    blob = repo.git("hash-object", "-w", "--stdin", input=text).strip()
    tree = repo.git("mktree", input=f"100644 blob {blob}\tSTATE.md\n").strip()
    parent = repo.ref()
    args = ["commit-tree", tree, "-m", f"{subject}\n\nAgy-Format: 1\nAgy-Phase: IDLE\n"]
    if parent:
        args[2:2] = ["-p", parent]
    commit = repo.git(*args).strip()
    repo.git("update-ref", "refs/agy/state", commit)
    return commit


class TestEscapedOnOutput:
    def test_show_and_log_print_a_crafted_snapshot_escaped(self, repo: Repo, cli: Any) -> None:
        _with_view(repo, cli)
        text = EN_SAMPLE.replace("## Open issues\n", f"## Open issues\n- {TRICK}\n", 1)
        _craft_snapshot(repo, text, f"update {ESC}]8;;http://evil{ESC}\\ {TRICK}")
        shown = cli("show")
        assert shown.exit_code == 0
        assert "\b" not in shown.stdout and "rm -rf /\\x08" in shown.stdout
        section = cli("show", "--section", "open_issues")
        assert "\b" not in section.stdout and "\\x08" in section.stdout
        logged = cli("log")
        assert logged.exit_code == 0
        assert ESC not in logged.stdout and "\b" not in logged.stdout
        assert "\\x1b]8;;http://evil" in logged.stdout
        as_json = cli("log", "--json").stdout
        assert ESC not in as_json and "\b" not in as_json
        assert TRICK in json.loads(as_json)[0]["message"]

    def test_show_of_a_valid_snapshot_stays_byte_for_byte(self, repo: Repo, cli: Any) -> None:
        _with_view(repo, cli)
        assert cli("show").stdout == repo.git("show", "refs/agy/state:STATE.md")

    def test_decisions_print_a_crafted_record_escaped(self, repo: Repo, cli: Any) -> None:
        record = {
            "v": 1,
            "id": "d-crafted1",
            "type": "Rule",
            "at": "2026-01-02T03:04:05+00:00",
            "by": f"mallory{ESC}[2K",
            "text": f"run {TRICK} \u202eevil",
        }
        repo.git("notes", "--ref", "agy/decisions", "add", "-m", json.dumps(record), "HEAD")
        listed = cli("decisions")
        assert listed.exit_code == 0, listed.stderr
        assert "\b" not in listed.stdout and ESC not in listed.stdout
        assert "\u202e" not in listed.stdout and "\\u202e" in listed.stdout
        assert "rm -rf /\\x08" in listed.stdout
        raw = cli("decisions", "--json").stdout
        assert "\u202e" not in raw and json.loads(raw)

    def test_memory_show_prints_a_merged_control_escaped(self, cli: Any) -> None:
        assert cli("memory", "init").exit_code == 0
        git = ["git", "--git-dir", _brain()]
        tip = subprocess.run([*git, "rev-parse", "refs/agy/memory"], **_out).stdout.strip()
        memory = subprocess.run([*git, "show", f"{tip}:MEMORY.md"], **_out).stdout
        blob = subprocess.run(
            [*git, "hash-object", "-w", "--stdin"], input=memory + f"- {TRICK}\n", **_out
        ).stdout.strip()
        listing = subprocess.run([*git, "ls-tree", tip], **_out).stdout
        lines = [line for line in listing.splitlines() if not line.endswith("\tMEMORY.md")]
        lines.append(f"100644 blob {blob}\tMEMORY.md")
        tree = subprocess.run(
            [*git, "mktree"], input="\n".join(lines) + "\n", **_out
        ).stdout.strip()
        commit = subprocess.run(
            [*git, "commit-tree", tree, "-p", tip, "-m", "memory sync: merge"], **_out
        ).stdout.strip()
        subprocess.run([*git, "update-ref", "refs/agy/memory", commit, tip], **_out)
        shown = cli("memory", "show", "MEMORY.md")
        assert shown.exit_code == 0, shown.stderr
        assert "\b" not in shown.stdout and "rm -rf /\\x08" in shown.stdout


_out: dict[str, Any] = {"capture_output": True, "text": True, "check": True}
