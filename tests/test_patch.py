"""The state patch ΔΣ (docs/format.md, "Patches"; docs/commands.md): typed ops, their JSON form,
and applying them whole.

A patch either applies completely and leaves a valid document, or raises and changes nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import any_line, fragment, valid_documents
from support import EN_SAMPLE, ZH_TW_SAMPLE

from gitstate.document.language import EN, KEYS, LANGUAGES, ZH_CN, ZH_TW, Language
from gitstate.document.model import Document, parse, parse_item, render, template
from gitstate.document.patch import (
    AddLine,
    AddStep,
    Applied,
    BlockStep,
    FinishStep,
    Op,
    Patch,
    PatchError,
    RemoveLine,
    SetSection,
    StartStep,
    apply,
    from_json,
    section_key,
)
from gitstate.document.validate import Problem, check_text
from gitstate.errors import EXIT_USAGE, InvalidDocument, UsageError

BASE = parse(ZH_TW_SAMPLE)
STEP1 = "- [>] 實作連線健康檢查定時器｜驗證：模擬斷線並檢查 3 秒內自動重連"
STEP2 = "- [ ] 將重試參數抽離至 config.ts"
STEP3 = "- [!] 整合 Prometheus 監控指標｜原因：等 PR #4410 合併後才有 Metric API"
DONE0 = "- [x] 實作連線重試指數退避演算法｜驗證：npm test tests/retry.test.mjs 全部通過"


def run(doc: Document, *ops: Op) -> Applied:
    return apply(doc, Patch(ops))


def refused(doc: Document, *ops: Op, error: type[Exception] = PatchError) -> Any:
    """Apply ops expecting `error`; the document must come out untouched."""
    before = render(doc)
    with pytest.raises(error) as info:
        run(doc, *ops)
    assert render(doc) == before
    return info.value


def doc_with(lang: Language = ZH_TW, **bodies: list[str]) -> Document:
    doc = template(lang, "2026-09-09 23:40")
    for key, lines in bodies.items():
        doc = doc.with_section(key, lines)
    assert check_text(render(doc)).valid
    return doc


def test_sample_steps_are_what_these_tests_assume() -> None:
    assert BASE.steps() == (STEP1, STEP2, STEP3)
    assert BASE.section("done") == (DONE0,)


# ---- finishing, starting, blocking ---------------------------------------------------------


class TestDone:
    """done N moves step N to done with the language's verification suffix."""

    def test_in_progress_step_moves_to_done_without_its_planned_verification(self) -> None:
        result = run(BASE, FinishStep(1, "模擬斷線後 3 秒內重連"))
        assert result.document.section("done") == (
            DONE0,
            "- [x] 實作連線健康檢查定時器｜驗證：模擬斷線後 3 秒內重連",
        )
        assert result.document.steps() == (STEP2, STEP3)
        assert result.changed == ("done", "next_steps")
        assert result.notices == ()

    def test_blocked_step_loses_its_reason(self) -> None:
        result = run(BASE, FinishStep(3, "  curl /metrics 有資料  "))
        assert result.document.section("done")[-1] == (
            "- [x] 整合 Prometheus 監控指標｜驗證：curl /metrics 有資料"
        )

    @pytest.mark.parametrize(
        ("lang", "step", "verify", "expected"),
        [
            (EN, "- [!] wire metrics | reason: waiting", "curl ok",
             "- [x] wire metrics | verified: curl ok"),
            (ZH_CN, "- [>] 健康检查｜验证：计划", "3 秒内重连",
             "- [x] 健康检查｜验证：3 秒内重连"),
            (ZH_TW, "- [ ] 健康檢查", "通過", "- [x] 健康檢查｜驗證：通過"),
        ],
    )  # fmt: skip
    def test_each_language_uses_its_own_suffix(
        self, lang: Language, step: str, verify: str, expected: str
    ) -> None:
        result = run(doc_with(lang, next_steps=[step]), FinishStep(1, verify))
        assert result.document.section("done") == (expected,)
        assert result.document.steps() == ()

    def test_full_done_drops_its_oldest_line_and_says_so(self) -> None:
        done = [f"- [x] 第{n}件｜驗證：ok" for n in range(1, 6)]
        doc = doc_with(done=done, next_steps=["- [ ] 甲", "- [ ] 乙"])
        result = run(doc, FinishStep(1, "好"))
        assert result.document.section("done") == (*done[1:], "- [x] 甲｜驗證：好")
        assert len(result.notices) == 1
        assert "dropped" in result.notices[0] and done[0] in result.notices[0]

        twice = run(doc, FinishStep(1, "好"), FinishStep(2, "也好"))
        assert twice.document.section("done") == (
            *done[2:],
            "- [x] 甲｜驗證：好",
            "- [x] 乙｜驗證：也好",
        )
        assert [done[0] in twice.notices[0], done[1] in twice.notices[1]] == [True, True]

    @pytest.mark.parametrize("verify", ["", "   ", "兩\n行", "a\rb"])
    def test_verification_is_one_non_empty_line(self, verify: str) -> None:
        refused(BASE, FinishStep(1, verify))


class TestStart:
    """start N marks step N `[>]`; every other `[>]` goes back to `[ ]`."""

    def test_start_moves_the_in_progress_marker(self) -> None:
        result = run(BASE, StartStep(2))
        assert result.document.steps() == (
            "- [ ] 實作連線健康檢查定時器｜驗證：模擬斷線並檢查 3 秒內自動重連",
            "- [>] 將重試參數抽離至 config.ts",
            STEP3,
        )
        assert result.document.in_progress() == ("將重試參數抽離至 config.ts",)

    def test_start_unblocks_a_blocked_step(self) -> None:
        result = run(BASE, StartStep(3))
        assert result.document.steps()[0].startswith("- [ ] ")
        assert result.document.steps()[2] == "- [>] 整合 Prometheus 監控指標"

    def test_start_of_the_running_step_changes_nothing(self) -> None:
        result = run(BASE, StartStep(1))
        assert result.document == BASE
        assert result.changed == ()

    def test_start_keeps_indentation_and_blocked_neighbours(self) -> None:
        doc = doc_with(next_steps=["- [>] 甲", "  - [ ] 乙", "- [!] 丙｜原因：等"])
        result = run(doc, StartStep(2))
        assert result.document.steps() == ("- [ ] 甲", "  - [>] 乙", "- [!] 丙｜原因：等")


class TestBlock:
    """block N marks step N `[!]` with the language's reason suffix, replacing an old reason."""

    @pytest.mark.parametrize(
        ("step", "expected"),
        [
            (2, "- [!] 將重試參數抽離至 config.ts｜原因：等設計審查"),
            (3, "- [!] 整合 Prometheus 監控指標｜原因：等設計審查"),
            (1, "- [!] 實作連線健康檢查定時器｜驗證：模擬斷線並檢查 3 秒內自動重連｜原因：等設計審查"),
        ],
    )  # fmt: skip
    def test_block(self, step: int, expected: str) -> None:
        result = run(BASE, BlockStep(step, "等設計審查"))
        assert result.document.steps()[step - 1] == expected
        assert check_text(render(result.document)).valid

    def test_blocking_the_running_step_leaves_none_running(self) -> None:
        assert run(BASE, BlockStep(1, "等")).document.in_progress() == ()

    def test_en_reason(self) -> None:
        result = run(parse(EN_SAMPLE), BlockStep(2, "needs review"))
        assert (
            result.document.steps()[1]
            == "- [!] move retry settings to config.py | reason: needs review"
        )

    @pytest.mark.parametrize("reason", ["", " ", "一\n二"])
    def test_reason_is_one_non_empty_line(self, reason: str) -> None:
        refused(BASE, BlockStep(2, reason))


class TestStepReferences:
    """Numbers refer to next_steps before the patch; text names a step by its words."""

    def test_numbers_refer_to_the_document_before_the_patch(self) -> None:
        expected = (
            "- [>] 將重試參數抽離至 config.ts",
            STEP3,
        )
        assert run(BASE, FinishStep(1, "ok"), StartStep(2)).document.steps() == expected
        assert run(BASE, StartStep(2), FinishStep(1, "ok")).document.steps() == expected
        result = run(BASE, FinishStep(2, "ok"), BlockStep(3, "新原因"), StartStep(1))
        assert result.document.steps() == (STEP1, "- [!] 整合 Prometheus 監控指標｜原因：新原因")

    def test_a_finished_step_is_gone(self) -> None:
        error = refused(BASE, FinishStep(1, "ok"), StartStep(1))
        assert "no step 1" in error.message and "any more" in error.message

    @pytest.mark.parametrize("step", [4, 99])
    def test_out_of_range(self, step: int) -> None:
        error = refused(BASE, StartStep(step))
        assert f"no step {step}" in error.message and "any more" not in error.message

    def test_set_next_steps_renumbers_nothing(self) -> None:
        refused(BASE, SetSection("next_steps", "甲\n乙"), StartStep(1))

    def test_new_steps_are_named_by_text(self) -> None:
        result = run(BASE, AddStep("  撰寫文件  "), StartStep("撰寫"))
        assert result.document.steps()[-1] == "- [>] 撰寫文件"
        assert result.document.steps()[0].startswith("- [ ] ")

    @pytest.mark.parametrize(
        ("ref", "index"),
        [
            pytest.param("將重試參數抽離至 config.ts", 1, id="exact"),
            pytest.param("實作連線健康檢查定時器", 0, id="exact-without-verification"),
            pytest.param("整合 Prometheus 監控指標", 2, id="exact-without-reason"),
            pytest.param("將重試", 1, id="unique-prefix"),
            pytest.param("整合 prometheus", 2, id="case-insensitive"),
        ],
    )
    def test_text_reference(self, ref: str, index: int) -> None:
        result = run(BASE, BlockStep(ref, "r"))
        assert result.document.steps()[index].startswith("- [!] ")
        assert sum(line.startswith("- [!] ") for line in result.document.steps()) == (
            1 if index == 2 else 2
        )

    def test_exact_text_beats_a_longer_step(self) -> None:
        doc = doc_with(next_steps=["- [ ] deploy docs", "- [ ] deploy", "- [ ] deploy db"])
        assert run(doc, StartStep("Deploy")).document.steps()[1] == "- [>] deploy"

    @pytest.mark.parametrize(
        ("ref", "words"),
        [
            pytest.param("實作", "no step", id="none-starts-with"),
            pytest.param("docs", "no step", id="middle-is-not-a-prefix"),
            pytest.param("deploy", "2 steps", id="ambiguous"),
        ],
    )
    def test_bad_text_reference(self, ref: str, words: str) -> None:
        doc = doc_with(next_steps=["- [ ] deploy docs", "- [ ] deploy db"])
        assert words in refused(doc, StartStep(ref)).message


# ---- add, remove, set ----------------------------------------------------------------------


ADD_CASES = [
    pytest.param("changed_files", "M src/x.py", ["- M src/x.py"], id="changed-file-bulleted"),
    pytest.param("changed_files", "- A src/y.py", ["- A src/y.py"], id="bullet-kept"),
    pytest.param("changed_files", "M a.py\r\n\r\nD b.py  ", ["- M a.py", "- D b.py"], id="lines"),
    pytest.param("open_issues", "   縮排的問題", ["- 縮排的問題"], id="leading-blanks-dropped"),
    pytest.param("open_issues", "* 星號", ["* 星號"], id="star-kept"),
    pytest.param("goal", "再補一行目標", ["再補一行目標"], id="goal-free-text"),
    pytest.param("goal", "- 目標也可以是清單", ["- 目標也可以是清單"], id="goal-bullet"),
    pytest.param("key_data", "Traceback:\n  File x\nValueError: 1", ["- Traceback:", "  File x", "ValueError: 1"], id="key-data-verbatim"),
    pytest.param("failed_attempts", "固定間隔：雪崩", ["- 固定間隔：雪崩"], id="failed"),
    pytest.param("next_steps", "寫測試", ["- [ ] 寫測試"], id="step"),
    pytest.param("next_steps", "- 寫文件", ["- [ ] 寫文件"], id="step-plain-bullet"),
    pytest.param("next_steps", "[!] 發版｜原因：等", ["- [!] 發版｜原因：等"], id="step-bare-marker"),
    pytest.param("next_steps", "  - [ ] 子步驟", ["  - [ ] 子步驟"], id="step-item-kept"),
    pytest.param("done", "寫完｜驗證：ok", ["- [x] 寫完｜驗證：ok"], id="done-bare"),
    pytest.param("done", "- [x] 寫完｜驗證：ok", ["- [x] 寫完｜驗證：ok"], id="done-item"),
]  # fmt: skip


@pytest.mark.parametrize(("key", "text", "added"), ADD_CASES)
def test_add_appends_with_the_bullet_the_section_wants(
    key: str, text: str, added: list[str]
) -> None:
    result = run(BASE, AddLine(key, text))
    assert result.document.section(key) == (*BASE.section(key), *added)
    assert result.changed == (key,)


class TestAddAndTodo:
    def test_add_nothing_is_refused(self) -> None:
        refused(BASE, AddLine("open_issues", " \n\t\n"))

    def test_todo_appends_an_open_step(self) -> None:
        result = run(BASE, AddStep("新步驟"))
        assert result.document.steps() == (STEP1, STEP2, STEP3, "- [ ] 新步驟")

    @pytest.mark.parametrize("text", ["", "  ", "一\n二"])
    def test_todo_is_one_non_empty_line(self, text: str) -> None:
        refused(BASE, AddStep(text))


class TestRemove:
    """remove takes the line equal to the match, else the one line containing it."""

    @pytest.mark.parametrize(
        ("key", "match", "left"),
        [
            pytest.param("changed_files", "- M src/pool.ts", ("- A tests/retry.test.mjs",), id="exact"),
            pytest.param("changed_files", "retry.test", ("- M src/pool.ts",), id="substring"),
            pytest.param("next_steps", "config.ts", (STEP1, STEP3), id="step"),
            pytest.param("goal", "issue #4412", (), id="goal"),
        ],
    )  # fmt: skip
    def test_remove(self, key: str, match: str, left: tuple[str, ...]) -> None:
        result = run(BASE, RemoveLine(key, match))
        assert result.document.section(key) == left

    def test_exact_beats_substring(self) -> None:
        doc = doc_with(changed_files=["- M a.py.orig", "- M a.py"])
        assert run(doc, RemoveLine("changed_files", "- M a.py")).document.section(
            "changed_files"
        ) == ("- M a.py.orig",)

    def test_identical_lines_remove_one(self) -> None:
        doc = doc_with(changed_files=["- M a.py", "- M b.py", "- M a.py"])
        result = run(doc, RemoveLine("changed_files", "- M a.py"))
        assert result.document.section("changed_files") == ("- M b.py", "- M a.py")

    @pytest.mark.parametrize(
        ("key", "match", "words"),
        [
            pytest.param("changed_files", "- ", "2 lines", id="ambiguous"),
            pytest.param("changed_files", "src/other.py", "no line", id="none"),
            pytest.param("open_issues", "   ", "needs text", id="blank"),
            pytest.param("failed_attempts", "ECONNRESET", "no line", id="other-section"),
        ],
    )
    def test_remove_refused(self, key: str, match: str, words: str) -> None:
        assert words in refused(BASE, RemoveLine(key, match)).message

    def test_removed_step_keeps_the_other_numbers(self) -> None:
        result = run(BASE, RemoveLine("next_steps", "config.ts"), FinishStep(3, "ok"))
        assert result.document.steps() == (STEP1,)
        assert result.document.section("done")[-1] == "- [x] 整合 Prometheus 監控指標｜驗證：ok"


class TestSet:
    def test_set_next_steps(self) -> None:
        result = run(BASE, SetSection("next_steps", "甲\n\n- [>] 乙\n丙"))
        assert result.document.steps() == ("- [ ] 甲", "- [>] 乙", "- [ ] 丙")

    def test_set_goal_is_free_text(self) -> None:
        result = run(BASE, SetSection("goal", "第一行\n  第二行  \n"))
        assert result.document.section("goal") == ("第一行", "  第二行")
        assert result.changed == ("goal",)

    def test_set_empty_clears(self) -> None:
        assert run(BASE, SetSection("open_issues", "")).document.section("open_issues") == ()

    def test_set_to_the_same_text_changes_nothing(self) -> None:
        result = run(BASE, SetSection("changed_files", "M src/pool.ts\nA tests/retry.test.mjs"))
        assert result.changed == ()

    def test_key_data_sub_bullets_fit_five_items(self) -> None:
        text = "- a\n  - a1\n  - a2\n- b\n- c\n- d\n- e"
        assert len(run(BASE, SetSection("key_data", text)).document.section("key_data")) == 7


class TestInvalidResults:
    """An op that would leave the document invalid raises InvalidDocument listing the problems;
    nothing is applied, not even the ops before it."""

    def test_sixth_open_issue(self) -> None:
        error = refused(BASE, AddLine("open_issues", "一\n二\n三\n四\n五"), error=InvalidDocument)
        assert error.problems == (
            Problem(19, "「待解決」最多 5 行，實際 6 行", "lines", "open_issues", 6),
        )

    def test_done_without_verification(self) -> None:
        error = refused(BASE, AddLine("done", "做完了"), error=InvalidDocument)
        assert [(p.code, p.message) for p in error.problems] == [
            ("done_verify", "「已完成」項目缺「｜驗證：」：- [x] 做完了")
        ]

    def test_every_problem_is_listed(self) -> None:
        error = refused(
            BASE,
            SetSection("next_steps", "- [>] 甲\n- [>] 乙\n- [!] 丙"),
            AddLine("goal", "\n".join("一二三四五")),
            error=InvalidDocument,
        )
        assert sorted(p.code for p in error.problems) == ["blocked_reason", "in_progress", "lines"]

    def test_a_heading_in_text_cannot_break_the_structure(self) -> None:
        error = refused(BASE, AddLine("goal", "## 下一步"), error=InvalidDocument)
        assert [p.code for p in error.problems] == ["sections"]

    def test_a_good_op_before_a_bad_one_is_not_applied(self) -> None:
        refused(BASE, StartStep(2), FinishStep(1, "ok"), FinishStep(9, "ok"))


# ---- JSON and names ------------------------------------------------------------------------

EVERY_OP = [
    {"op": "set", "section": "goal", "text": "新目標"},
    {"op": "add", "section": "changed_files", "text": "M src/x.py"},
    {"op": "remove", "section": "open_issues", "match": "重試逾時"},
    {"op": "start", "step": 2},
    {"op": "done", "step": 1, "verify": "pytest 通過"},
    {"op": "block", "step": "整合", "reason": "等 PR"},
    {"op": "todo", "text": "寫文件"},
]
EVERY_OP_PARSED = (
    SetSection("goal", "新目標"),
    AddLine("changed_files", "M src/x.py"),
    RemoveLine("open_issues", "重試逾時"),
    StartStep(2),
    FinishStep(1, "pytest 通過"),
    BlockStep("整合", "等 PR"),
    AddStep("寫文件"),
)


class TestFromJson:
    def test_ops_object_and_bare_list(self) -> None:
        assert from_json(json.dumps({"ops": EVERY_OP})) == Patch(EVERY_OP_PARSED)
        assert from_json(json.dumps(EVERY_OP, ensure_ascii=False)) == Patch(EVERY_OP_PARSED)

    def test_every_op_applies(self) -> None:
        result = apply(BASE, from_json(json.dumps({"ops": EVERY_OP})))
        doc = result.document
        assert doc.section("goal") == ("新目標",)
        assert doc.section("changed_files")[-1] == "- M src/x.py"
        assert doc.section("open_issues") == ()
        assert doc.steps() == (
            "- [>] 將重試參數抽離至 config.ts",
            "- [!] 整合 Prometheus 監控指標｜原因：等 PR",
            "- [ ] 寫文件",
        )
        assert doc.section("done")[-1] == "- [x] 實作連線健康檢查定時器｜驗證：pytest 通過"
        assert result.changed == ("goal", "done", "changed_files", "open_issues", "next_steps")

    @pytest.mark.parametrize(
        ("step", "expected"),
        [(3, 3), ("3", 3), (" 2 ", 2), ("２", 2), ("將重試", "將重試"), ("¹", "¹"), ("3rd", "3rd")],
    )
    def test_steps_as_numbers_or_text(self, step: object, expected: object) -> None:
        patch = from_json(json.dumps([{"op": "start", "step": step}]))
        assert patch.ops == (StartStep(expected),)  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("given", "key"),
        [
            ("已變更檔案", "changed_files"),
            ("Changed files", "changed_files"),
            ("next-steps", "next_steps"),
        ],
    )
    def test_sections_by_any_name(self, given: str, key: str) -> None:
        patch = from_json(json.dumps([{"op": "set", "section": given, "text": ""}]))
        assert patch.ops == (SetSection(key, ""),)

    @pytest.mark.parametrize(
        "data",
        [
            pytest.param("not json", id="not-json"),
            pytest.param('{"ops": [', id="truncated"),
            pytest.param("", id="empty"),
            pytest.param("{}", id="no-ops"),
            pytest.param('{"ops": []}', id="empty-ops"),
            pytest.param("[]", id="empty-list"),
            pytest.param('{"ops": {"op": "todo"}}', id="ops-not-list"),
            pytest.param('"todo"', id="string"),
            pytest.param("null", id="null"),
            pytest.param("[1]", id="op-not-object"),
            pytest.param('[{"op": "frobnicate"}]', id="unknown-op"),
            pytest.param('[{"text": "x"}]', id="no-op-name"),
            pytest.param('[{"op": "set", "section": "goal"}]', id="set-no-text"),
            pytest.param('[{"op": "add", "text": "x"}]', id="add-no-section"),
            pytest.param('[{"op": "remove", "section": "goal"}]', id="remove-no-match"),
            pytest.param('[{"op": "done", "step": 1}]', id="done-no-verify"),
            pytest.param('[{"op": "block", "step": 1}]', id="block-no-reason"),
            pytest.param('[{"op": "todo"}]', id="todo-no-text"),
            pytest.param('[{"op": "todo", "text": 5}]', id="text-not-string"),
            pytest.param('[{"op": "set", "section": "goal", "text": ["a"]}]', id="text-list"),
            pytest.param('[{"op": "start"}]', id="no-step"),
            pytest.param('[{"op": "start", "step": 0}]', id="step-0"),
            pytest.param('[{"op": "start", "step": "0"}]', id="step-string-0"),
            pytest.param('[{"op": "start", "step": -1}]', id="step-negative"),
            pytest.param('[{"op": "start", "step": true}]', id="step-true"),
            pytest.param('[{"op": "start", "step": false}]', id="step-false"),
            pytest.param('[{"op": "start", "step": 1.5}]', id="step-float"),
            pytest.param('[{"op": "start", "step": null}]', id="step-null"),
            pytest.param('[{"op": "start", "step": "  "}]', id="step-blank"),
            pytest.param('[{"op": "start", "step": [1]}]', id="step-list"),
            pytest.param('[{"op": "start", "step": "' + "9" * 5000 + '"}]', id="step-huge"),
            pytest.param('[{"op": "set", "section": "notes", "text": ""}]', id="unknown-section"),
            pytest.param('[{"op": "set", "section": 4, "text": ""}]', id="section-number"),
            pytest.param('[{"op": "todo", "text": "ok"}, {"op": "nope"}]', id="second-op-bad"),
        ],
    )
    def test_malformed_is_a_usage_error(self, data: str) -> None:
        with pytest.raises(UsageError) as info:
            from_json(data)
        assert info.value.exit_code == EXIT_USAGE == 64
        assert info.value.message

    def test_messages_say_which_op(self) -> None:
        with pytest.raises(UsageError, match=r"op 2: unknown op 'nope'"):
            from_json('[{"op": "todo", "text": "ok"}, {"op": "nope"}]')
        with pytest.raises(UsageError, match=r"op 1 \(done\): 'verify' must be a string"):
            from_json('[{"op": "done", "step": 1}]')


@pytest.mark.parametrize(
    ("name", "key"),
    [
        *[(key, key) for key in KEYS],
        *[(h, key) for lang in LANGUAGES.values() for key, h in zip(KEYS, lang.headings, strict=True)],
        ("GOAL", "goal"),
        (" Next steps ", "next_steps"),
        ("next-steps", "next_steps"),
        ("key data (VERBATIM)", "key_data"),
        ("Changed Files", "changed_files"),
    ],
)  # fmt: skip
def test_section_key_accepts_keys_and_every_heading(name: str, key: str) -> None:
    assert section_key(name) == key


@pytest.mark.parametrize("name", ["notes", "", "next", "關鍵資料", "goal_"])
def test_section_key_refuses_other_names(name: str) -> None:
    with pytest.raises(UsageError) as info:
        section_key(name)
    assert info.value.hint is not None and "next_steps" in info.value.hint


def test_describe_summarises_each_op() -> None:
    assert Patch(EVERY_OP_PARSED).describe() == (
        "set goal; add to changed_files: M src/x.py; remove from open_issues: 重試逾時; "
        "start step 2; finish step 1; block step 整合: 等 PR; add step: 寫文件"
    )
    long = Patch((AddLine("goal", "a\n  b " + "c" * 60),)).describe()
    assert long == "add to goal: a b " + "c" * 43 + "…"
    assert len(long) == len("add to goal: ") + 48


# ---- properties ----------------------------------------------------------------------------


@st.composite
def op_lists(draw: st.DrawFn, doc: Document) -> list[dict[str, object]]:
    """Random ops in JSON form against `doc`: mostly sensible, some out of range or malformed."""
    lang = doc.lang
    steps = doc.steps()
    words = [item.text for item in map(parse_item, steps) if item is not None]
    step = st.one_of(
        st.integers(1, len(steps) + 1),
        st.integers(-1, 8),
        st.sampled_from(words).map(lambda w: w[: max(1, len(w) // 2)]) if words else fragment,
        fragment,
        st.text(max_size=4),
        st.booleans(),
    )
    line = any_line(lang) | fragment
    text = st.lists(line, max_size=4).map("\n".join)
    one_line = fragment | st.sampled_from(("", " ", "a\nb"))
    section = st.sampled_from(KEYS)
    existing = [x for k in KEYS for x in doc.section(k)]
    match = (st.sampled_from(existing) if existing else fragment) | fragment

    op = st.one_of(
        st.fixed_dictionaries({"op": st.just("set"), "section": section, "text": text}),
        st.fixed_dictionaries({"op": st.just("add"), "section": section, "text": text}),
        st.fixed_dictionaries({"op": st.just("remove"), "section": section, "match": match}),
        st.fixed_dictionaries({"op": st.just("start"), "step": step}),
        st.fixed_dictionaries({"op": st.just("done"), "step": step, "verify": one_line}),
        st.fixed_dictionaries({"op": st.just("block"), "step": step, "reason": one_line}),
        st.fixed_dictionaries({"op": st.just("todo"), "text": one_line}),
    )
    return draw(st.lists(op, min_size=1, max_size=5))


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_property_a_patch_applies_whole_and_valid_or_not_at_all(data: st.DataObject) -> None:
    doc = data.draw(valid_documents())
    assert check_text(render(doc)).valid, "the strategy must make valid documents"
    before = render(doc)
    ops = data.draw(op_lists(doc))
    try:
        result = apply(doc, from_json(json.dumps({"ops": ops})))
    except (PatchError, InvalidDocument, UsageError):
        assert render(doc) == before
        return
    assert render(doc) == before
    text = render(result.document)
    assert check_text(text).valid
    assert parse(text) == result.document
    assert (result.document.language, result.document.stamp) == (doc.language, doc.stamp)
    assert result.changed == doc.changed_keys(result.document)
    assert len(result.document.in_progress()) <= 1


@settings(max_examples=60, deadline=None)
@given(valid_documents(), st.data())
def test_property_finishing_a_step_moves_exactly_that_step(
    doc: Document, data: st.DataObject
) -> None:
    if not doc.steps():
        return
    n = data.draw(st.integers(1, len(doc.steps())))
    result = apply(doc, Patch((FinishStep(n, "ok"),))).document
    steps = list(doc.steps())
    moved = steps.pop(n - 1)
    assert result.steps() == tuple(steps)
    done = result.section("done")
    item = parse_item(moved)
    assert item is not None
    words = item.text.split(doc.lang.reason)[0].split(doc.lang.verify)[0].strip()
    assert done[-1] == f"- [x] {words}{doc.lang.verify}ok"
    kept = doc.section("done")[-4:] if len(doc.section("done")) == 5 else doc.section("done")
    assert done[:-1] == kept
