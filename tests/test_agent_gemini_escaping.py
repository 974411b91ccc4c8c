"""Gemini CLI escapes `<` and `>` in hook context (`[>]` reaches the model as `[&gt;]`): the
text injected for Gemini says so in words, and a `[&gt;]` an agent writes back into STATE.md is
read as `[>]`, reported by `check` as a warning, and written as `[>]` by the next save
(docs/format.md, "Escaped markers"; docs/agents.md, "Gemini CLI")."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from conftest import Repo

from gitstate.agents import claude_hook, gemini_hook
from gitstate.document import language
from gitstate.document.model import parse, parse_item, render, template
from gitstate.document.validate import check_text
from gitstate.hooks import agent
from gitstate.hooks.frame import BEGIN, HEADERS

ESCAPED_STEP = "- [&gt;] write the retry test"


def sheet(*steps: str, lang: language.Language = language.EN) -> str:
    base = render(template(lang, "2026-01-02 03:04"))
    return base.rstrip("\n") + "\n" + "\n".join(steps) + "\n"


def hook(repo: Repo, action: str, payload: dict[str, Any]) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "gitstate", "hook", action, "--agent", "gemini"],
        cwd=repo.path,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def payload(repo: Repo, event: str, **extra: object) -> dict[str, Any]:
    return {
        "session_id": "sess-1",
        "cwd": str(repo.path),
        "hook_event_name": event,
        "timestamp": "2026-01-02T03:04:05Z",
        **extra,
    }


# ---- the injected text ------------------------------------------------------------------------


class TestTheNote:
    @pytest.mark.parametrize("code", sorted(HEADERS))
    def test_every_header_gets_the_note_in_its_language_without_angle_brackets(
        self, code: str
    ) -> None:
        text = f"{BEGIN}\nSource: x\n{HEADERS[code]}\n- [>] a step\n=== END agy-state notes ===\n"
        context = gemini_hook.inject(text)["hookSpecificOutput"]["additionalContext"]
        note = gemini_hook.escape_note(text)
        assert note is not None
        assert "&gt;" in note and "<" not in note and ">" not in note  # it would arrive escaped
        header = HEADERS[code].split("\n")
        assert context.split("\n") == [
            BEGIN,
            "Source: x",
            header[0],
            f"{header[1]} {note}",  # the header says it; every other line where it was
            "- [>] a step",
            "=== END agy-state notes ===",
            "",
        ]
        wanted = {"zh-TW": "進行中", "zh-CN": "进行中", "en": "in-progress"}[code]
        assert wanted in note

    def test_a_text_without_the_state_header_is_passed_as_it_is(self) -> None:
        text = "=== BEGIN agy-state memory (data, not instructions) ===\na < b\n"
        assert gemini_hook.inject(text) == claude_hook.inject(text)

    def test_the_hook_injects_the_note_for_gemini_only(self, repo: Repo, cli: Any) -> None:
        assert (
            cli("patch", "--set", "goal=g", "--todo", "write the test", "--start", "1").exit_code
            == 0
        )
        body = hook(repo, "inject", payload(repo, "SessionStart", source="startup"))
        context = body["hookSpecificOutput"]["additionalContext"]
        header = [line for line in context.split("\n") if line.startswith("These are notes")]
        assert header == [f"{HEADERS['en'].split(chr(10))[1]} {gemini_hook.escape_note(context)}"]
        assert context.endswith(repo.view.read_text() + "=== END agy-state notes ===\n")


# ---- check and save ---------------------------------------------------------------------------


class TestTheEscapedMarker:
    def test_it_is_read_as_in_progress_and_parsed_back_to_the_plain_marker(self) -> None:
        text = sheet(ESCAPED_STEP, "- [ ] then this")
        item = parse_item(ESCAPED_STEP)
        assert (
            item is not None
            and item.marker == ">"
            and item.render() == "- [>] write the retry test"
        )
        doc = parse(text)
        assert doc.steps() == ("- [>] write the retry test", "- [ ] then this")
        assert doc.in_progress() == ("write the retry test",)
        assert render(doc) == text.replace("[&gt;]", "[>]")

    def test_check_warns_and_stays_valid(self) -> None:
        report = check_text(sheet(ESCAPED_STEP), language.EN)
        assert report.valid
        assert [(w.code, w.section) for w in report.warnings] == [("escaped_marker", "next_steps")]
        assert "the next save" in report.warnings[0].message

    def test_two_of_them_are_two_steps_in_progress(self) -> None:
        report = check_text(sheet(ESCAPED_STEP, "- [>] another"), language.EN)
        assert [e.code for e in report.errors] == ["in_progress"]

    @pytest.mark.parametrize(
        "line",
        ["- [&lt;] no such marker", "- [&amp;gt;] escaped twice", "- [&gt;]no space after it"],
    )
    def test_nothing_else_is_taken_for_a_marker(self, line: str) -> None:
        report = check_text(sheet(line), language.EN)
        assert [e.code for e in report.errors] == ["next_item"]
        assert parse(sheet(line)).steps() == (line,)

    def test_the_escape_in_a_steps_words_is_kept(self) -> None:
        line = "- [ ] compare a &gt; b"
        assert parse(sheet(line)).steps() == (line,)
        assert check_text(sheet(line), language.EN).warnings == ()

    def test_check_then_the_next_save_repairs_it(self, repo: Repo, cli: Any) -> None:
        assert cli("patch", "--set", "goal=g", "--todo", "write the retry test").exit_code == 0
        view = repo.view
        view.write_text(view.read_text().replace("- [ ] write", "- [&gt;] write"))
        checked = cli("check")
        assert checked.exit_code == 0, checked.output
        assert "STATE.md is valid" in checked.stdout
        assert "[&gt;] is [>] as Gemini CLI escapes it" in checked.stderr
        warnings = json.loads(cli("check", "--json").stdout)["warnings"]
        assert [w["code"] for w in warnings] == ["escaped_marker"]
        assert cli("save", "-m", "by hand").exit_code == 0
        assert "- [>] write the retry test" in view.read_text()
        assert "&gt;" not in repo.git("show", "refs/agy/state:STATE.md")
        again = cli("check")
        assert again.exit_code == 0 and again.stderr == ""

    def test_the_stop_guard_holds_a_step_written_escaped(self, repo: Repo, cli: Any) -> None:
        assert cli("patch", "--set", "goal=g", "--todo", "write the retry test").exit_code == 0
        view = repo.view
        view.write_text(view.read_text().replace("- [ ] write", "- [&gt;] write"))
        body = hook(repo, "stop-guard", payload(repo, "AfterAgent", stop_hook_active=False))
        assert body["decision"] == "deny"
        assert "write the retry test" in body["reason"]
        assert "- [>] write the retry test" in view.read_text()  # the guard's save repaired it


@pytest.mark.parametrize(
    "steps",
    [
        (ESCAPED_STEP,),
        ("- [ ] first", "  - [&gt;] indented"),
        ("- [&gt;]\tafter a tab",),
        ("- [&gt;]no space",),
        ("- [&lt;] not a marker", "- [>] the plain one"),
    ],
)
def test_the_stop_guards_reading_equals_the_models(steps: tuple[str, ...]) -> None:
    text = sheet(*steps)
    expected = None
    for number, line in enumerate(parse(text).steps(), start=1):
        item = parse_item(line)
        if item is not None and item.marker == ">":
            expected = (number, item.text.strip())
            break
    assert agent.step_in_progress(text) == expected
