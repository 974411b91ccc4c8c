"""The pure document layer: outline, parse, render and validate STATE.md (docs/format.md).

zh-TW must behave as the peer validator antigravity-state does (its format and its verdicts), in
the peer's own words; en and zh-CN follow the same rules with their own headings and tokens.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import documents, structured_text
from support import EN_SAMPLE, ZH_TW_SAMPLE

from gitstate.document.language import EN, KEYS, ZH_CN, ZH_TW, Language
from gitstate.document.model import (
    MAX_BYTES,
    Document,
    Line,
    outline,
    parse,
    render,
    template,
)
from gitstate.document.validate import Report, check_bytes, check_text
from gitstate.errors import InvalidDocument

STAMP = "2026-09-09 23:40"


def make(lang: Language = ZH_TW, *, title: str | None = None, **bodies: list[str]) -> str:
    """A document in canonical layout; `bodies` maps section keys to their lines."""
    assert set(bodies) <= set(KEYS), bodies
    lines = [lang.title(STAMP) if title is None else title, ""]
    for key, heading in zip(KEYS, lang.headings, strict=True):
        lines += [f"## {heading}", *bodies.get(key, []), ""]
    return "\n".join(lines)


def at(text: str, line: str) -> int:
    """The 1-based number of the one line of `text` that reads `line` (trailing blanks aside)."""
    hits = [n for n, raw in enumerate(text.splitlines(), start=1) if raw.rstrip() == line]
    assert len(hits) == 1, f"{line!r} occurs {len(hits)} times"
    return hits[0]


def errors(report: Report) -> list[tuple[str, int | None, str]]:
    return [(p.code, p.line, p.message) for p in report.errors]


def _resolve(text: str, expected: list[tuple[str, int | str, str]]) -> list[tuple[str, int, str]]:
    return [
        (code, at(text, line) if isinstance(line, str) else line, m) for code, line, m in expected
    ]


ZH_CN_SAMPLE = """\
# 任务状态 ── 最后更新 2026-09-09 23:40

## 目标
重构数据库连接池

## 已完成
- [x] 指数退避重试｜验证：pytest tests/test_retry.py 全部通过

## 已变更文件
- M src/pool.py

## 待解决

## 关键资料（原样保留）
- 错误信息：ECONNRESET

## 已试过但失败
- 固定 1 秒间隔重试：连接雪崩

## 下一步
- [>] 健康检查定时器
- [!] 接入监控｜原因：等 PR #4410
"""

SAMPLES = [
    pytest.param(ZH_TW_SAMPLE, ZH_TW, id="zh-TW"),
    pytest.param(ZH_CN_SAMPLE, ZH_CN, id="zh-CN"),
    pytest.param(EN_SAMPLE, EN, id="en"),
]


# ---- zh-TW: the peer's verdicts and words --------------------------------------------------

# The peer's messages, word for word as antigravity-state's validator words them.
TITLE = "標題行須為「# 任務狀態 ── 最後更新 YYYY-MM-DD HH:mm」"
SECTIONS = (
    "段落須恰為七段且順序固定：目標、已完成、已變更檔案、待解決、關鍵資料（原樣保留）、"
    "已試過但失敗、下一步；實際："
)
DONE_ITEM = "「已完成」每項須以「- [x] 」開頭："
DONE_VERIFY = "「已完成」項目缺「｜驗證：」："
NEXT_ITEM = "「下一步」每項須以「- [ ] 」「- [>] 」或「- [!] 」開頭："
NEXT_X = "「下一步」不得含 [x]，已完成項目請移到「已完成」："
BLOCKED = "受阻項目缺「｜原因：」："
ALL = "目標、已完成、已變更檔案、待解決、關鍵資料（原樣保留）、已試過但失敗、下一步"


def lines_msg(name: str, count: int) -> str:
    return f"「{name}」最多 5 行，實際 {count} 行"


def key_items_msg(count: int) -> str:
    return f"「關鍵資料（原樣保留）」最多 5 項，實際 {count} 項"


def in_progress_msg(count: int) -> str:
    return f"「下一步」最多一個 [>] 進行中項目，實際 {count} 個"


FIVE = ["第一", "第二", "第三", "第四", "第五"]
SIX = [*FIVE, "第六"]
DONE_OK = "- [x] 重試｜驗證：npm test 通過"
TRACEBACK = ["Traceback (most recent call last):", '  File "pool.py", line 3', "ECONNRESET"]

PEER_ACCEPTS = [
    pytest.param(ZH_TW_SAMPLE, id="sample"),
    pytest.param(make(), id="all-sections-empty"),
    pytest.param(make(title="# 任務狀態 ── 最後更新 2026-13-99 99:99"), id="title-digit-shape-only"),
    pytest.param(make(title="# 任務狀態 ── 最後更新 0000-00-00 00:00"), id="title-zero-stamp"),
    pytest.param("說明：這份檔案由 agent 維護\n- [x] 無驗證\n" + make(), id="preamble-before-title"),
    pytest.param(
        make().replace("\n\n## 目標", "\n注意事項\n* 雜項\n\n## 目標"), id="preamble-after-title"
    ),
    pytest.param(ZH_TW_SAMPLE.replace("\n", "\r\n"), id="crlf"),
    pytest.param(ZH_TW_SAMPLE.replace("\n", " \t\u3000\n"), id="trailing-whitespace"),
    pytest.param(make(goal=["### 背景", "重構連線池", "### 範圍", "src/pool.ts", "# 不是標題"]),
                 id="h3-and-late-h1-are-content"),
    pytest.param(make(done=[]), id="empty-done"),
    pytest.param(make(done=[DONE_OK, "  - [x] 縮排也可以｜驗證：ok"]), id="done-indented"),
    pytest.param(make(next_steps=["  - [ ] 縮排", "- [ ]\t定位字元", "- [>]   多個空白"]),
                 id="item-whitespace"),
    pytest.param(make(goal=FIVE, changed_files=FIVE, open_issues=FIVE), id="five-lines"),
    pytest.param(make(done=[DONE_OK] * 5, next_steps=["- [ ] 一"] * 5), id="five-items"),
    pytest.param(make(key_data=["- a", *TRACEBACK, "- b", "- c", "* d", "- e", *TRACEBACK]),
                 id="key-data-multi-line-five-items"),
    pytest.param(make(open_issues=["- [>] 一", "- [>] 二", "- [x] 三"]),
                 id="markers-outside-next-steps-unchecked"),
    pytest.param(make(next_steps=["- [>] 做｜驗證：計畫中的驗證", "- [!] 卡住｜原因：等審查", "- [ ] 之後"]),
                 id="one-in-progress-one-blocked"),
    pytest.param(make(goal=["目標"]).replace("\n\n", "\n\n\n\n"), id="extra-blank-lines"),
    pytest.param(make().replace("## 目標", "##   目標  "), id="heading-name-trimmed"),
    pytest.param(make(goal=["", "  ", "\t", "一", "二", "三", "四", "五"]),
                 id="blank-lines-do-not-count"),
]  # fmt: skip


@pytest.mark.parametrize("text", PEER_ACCEPTS)
def test_peer_accepts__we_accept(text: str) -> None:
    """Every zh-TW file the peer validator accepts gives no error here."""
    report = check_text(text)
    assert report.language == "zh-TW"
    assert errors(report) == []
    assert report.valid


TITLE_CASES = [
    pytest.param("# 任務狀態 ── 最後更新 2026-09-09 23:40:00", id="seconds"),
    pytest.param("# 任務狀態 -- 最後更新 2026-09-09 23:40", id="ascii-dashes"),
    pytest.param("# 任務狀態 ─ 最後更新 2026-09-09 23:40", id="one-box-dash"),
    pytest.param("# 任務狀態 ── 最後更新 2026-09-09", id="no-time"),
    pytest.param("# 任務狀態 ── 最後更新 26-09-09 23:40", id="short-year"),
    pytest.param("# 任務狀態 ── 最後更新 ２０２６-09-09 23:40", id="full-width-digits"),
    pytest.param("# 任務狀態──最後更新 2026-09-09 23:40", id="no-spaces-round-dash"),
    pytest.param("# 任務狀態 ── 最後更新 2026-09-09 23:40 (UTC)", id="trailing-text"),
    pytest.param("#  任務狀態 ── 最後更新 2026-09-09 23:40", id="two-spaces-after-hash"),
]


@pytest.mark.parametrize("title", TITLE_CASES)
def test_peer_rejects_title(title: str) -> None:
    """Only `# 任務狀態 ── 最後更新 dddd-dd-dd dd:dd` is a title; the error points at it."""
    assert errors(check_text(make(title=title))) == [("title", 1, TITLE)]


def test_first_hash_line_is_the_title_even_when_a_real_title_follows() -> None:
    text = "# 筆記\n" + make()
    assert errors(check_text(text)) == [("title", 1, TITLE)]


def test_title_found_late_is_still_the_title() -> None:
    """The peer takes the first `# ` line wherever it is, so a title after a preamble works."""
    text = "前言\n\n" + make()
    assert check_text(text).valid
    out = outline(text)
    assert out.title == Line(3, ZH_TW.title(STAMP))
    assert out.preamble == (Line(1, "前言"),)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(make().split("\n", 1)[1], id="no-title"),
        pytest.param(
            make(title="#任務狀態 ── 最後更新 2026-09-09 23:40"), id="no-space-after-hash"
        ),
        pytest.param(make(title="任務狀態 ── 最後更新 2026-09-09 23:40"), id="no-hash"),
    ],
)
def test_missing_title_is_reported_on_line_1(text: str) -> None:
    assert errors(check_text(text)) == [("title", 1, TITLE)]


PEER_REJECTS = [
    # next_steps: every line an item with a hyphen bullet, lower-case marker and text
    pytest.param(make(next_steps=["* [ ] 星號"]), [("next_item", "* [ ] 星號", NEXT_ITEM + "* [ ] 星號")], id="star-bullet"),
    pytest.param(make(next_steps=["- [X] 大寫"]), [("next_item", "- [X] 大寫", NEXT_ITEM + "- [X] 大寫")], id="capital-X"),
    pytest.param(make(next_steps=["- [ ]"]), [("next_item", "- [ ]", NEXT_ITEM + "- [ ]")], id="bare-item"),
    pytest.param(make(next_steps=["- [>]   "]), [("next_item", "- [>]", NEXT_ITEM + "- [>]")], id="bare-item-trailing-blanks"),
    pytest.param(make(next_steps=["-[ ] 沒空白"]), [("next_item", "-[ ] 沒空白", NEXT_ITEM + "-[ ] 沒空白")], id="no-space-after-hyphen"),
    pytest.param(make(next_steps=["- [?] 問號"]), [("next_item", "- [?] 問號", NEXT_ITEM + "- [?] 問號")], id="unknown-marker"),
    pytest.param(make(next_steps=["- [ ] 一", "  詳見 issue"]), [("next_item", "  詳見 issue", NEXT_ITEM + "  詳見 issue")], id="continuation-line"),
    pytest.param(make(next_steps=["- 普通清單"]), [("next_item", "- 普通清單", NEXT_ITEM + "- 普通清單")], id="plain-bullet"),
    pytest.param(make(next_steps=["- [x] 做完｜驗證：ok"]), [("next_x", "- [x] 做完｜驗證：ok", NEXT_X + "- [x] 做完｜驗證：ok")], id="done-marker"),
    pytest.param(make(next_steps=["- [!] 卡住"]), [("blocked_reason", "- [!] 卡住", BLOCKED + "- [!] 卡住")], id="blocked-no-reason"),
    pytest.param(make(next_steps=["- [!] 卡住|原因：等"]), [("blocked_reason", "- [!] 卡住|原因：等", BLOCKED + "- [!] 卡住|原因：等")], id="blocked-half-width-bar"),
    pytest.param(make(next_steps=["- [!] 卡住｜原因:等"]), [("blocked_reason", "- [!] 卡住｜原因:等", BLOCKED + "- [!] 卡住｜原因:等")], id="blocked-half-width-colon"),
    pytest.param(make(next_steps=["- [>] a", "- [ ] b", "- [>] c"]), [("in_progress", "- [>] c", in_progress_msg(2))], id="two-in-progress"),
    pytest.param(make(next_steps=["- [>] a", "- [>] b", "- [>] c"]), [("in_progress", "- [>] b", in_progress_msg(3))], id="three-in-progress"),
    # done: `- [x] … ｜驗證：…`
    pytest.param(make(done=["- [ ] 沒勾｜驗證：ok"]), [("done_item", "- [ ] 沒勾｜驗證：ok", DONE_ITEM + "- [ ] 沒勾｜驗證：ok")], id="done-open-marker"),
    pytest.param(make(done=["- [X] 大寫｜驗證：ok"]), [("done_item", "- [X] 大寫｜驗證：ok", DONE_ITEM + "- [X] 大寫｜驗證：ok")], id="done-capital-X"),
    pytest.param(make(done=[DONE_OK, "  補充說明"]), [("done_item", "  補充說明", DONE_ITEM + "補充說明")], id="done-continuation-trimmed"),
    pytest.param(make(done=["- [x] 做完"]), [("done_verify", "- [x] 做完", DONE_VERIFY + "- [x] 做完")], id="done-no-verify"),
    pytest.param(make(done=["- [x] 做完|驗證：ok"]), [("done_verify", "- [x] 做完|驗證：ok", DONE_VERIFY + "- [x] 做完|驗證：ok")], id="done-half-width-bar"),
    # sizes: five non-blank lines, five key-data items
    pytest.param(make(goal=SIX), [("lines", "第六", lines_msg("目標", 6))], id="goal-6-lines"),
    pytest.param(make(changed_files=[f"- M f{i}" for i in range(7)]), [("lines", "- M f5", lines_msg("已變更檔案", 7))], id="changed-7-lines"),
    pytest.param(make(open_issues=["### 標題", *FIVE]), [("lines", "第五", lines_msg("待解決", 6))], id="h3-counts-as-a-line"),
    pytest.param(make(failed_attempts=SIX), [("lines", "第六", lines_msg("已試過但失敗", 6))], id="failed-6-lines"),
    pytest.param(make(done=[f"- [x] {n}｜驗證：ok" for n in SIX]), [("lines", "- [x] 第六｜驗證：ok", lines_msg("已完成", 6))], id="done-6-lines"),
    pytest.param(make(next_steps=[f"- [ ] {n}" for n in SIX]), [("lines", "- [ ] 第六", lines_msg("下一步", 6))], id="next-6-lines"),
    pytest.param(make(key_data=[f"- {n}" for n in SIX]), [("key_items", "- 第六", key_items_msg(6))], id="key-data-6-items"),
    pytest.param(make(key_data=["- a", *TRACEBACK, "* b", "- c", "* d", "- e", "* f", "- g"]), [("key_items", "* f", key_items_msg(7))], id="key-data-star-bullets-count"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), PEER_REJECTS)
def test_peer_rejects__we_reject_with_its_words(
    text: str, expected: list[tuple[str, int | str, str]]
) -> None:
    """Every zh-TW file the peer rejects is rejected here, with the peer's message and the line
    that carries the problem."""
    assert errors(check_text(text)) == _resolve(text, expected)


def _swap(text: str, a: str, b: str) -> str:
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


SECTION_CASES = [
    pytest.param(make().replace("## 待解決\n\n", ""), "## 關鍵資料（原樣保留）",
                 "目標、已完成、已變更檔案、關鍵資料（原樣保留）、已試過但失敗、下一步", id="missing"),
    pytest.param(make() + "## 備註\n", "## 備註", ALL + "、備註", id="extra-at-end"),
    pytest.param(make().replace("## 待解決", "## 待解決\n\n## 附註"), "## 附註",
                 "目標、已完成、已變更檔案、待解決、附註、關鍵資料（原樣保留）、已試過但失敗、下一步",
                 id="extra-in-middle"),
    pytest.param(make().replace("## 已完成", "## 目標\n\n## 已完成"), 5,
                 "目標、目標、已完成、已變更檔案、待解決、關鍵資料（原樣保留）、已試過但失敗、下一步",
                 id="duplicate"),
    pytest.param(_swap(make(), "## 目標", "## 已完成"), "## 已完成",
                 "已完成、目標、已變更檔案、待解決、關鍵資料（原樣保留）、已試過但失敗、下一步", id="reordered"),
    pytest.param(make().replace("## 已試過但失敗", "## 已試過但失敗的事"), "## 已試過但失敗的事",
                 "目標、已完成、已變更檔案、待解決、關鍵資料（原樣保留）、已試過但失敗的事、下一步", id="renamed"),
    pytest.param(make().replace("## 目標", "##目標"), "## 已完成",
                 "已完成、已變更檔案、待解決、關鍵資料（原樣保留）、已試過但失敗、下一步", id="no-space-is-not-a-heading"),
    pytest.param(make().replace("## 目標", "### 目標"), "## 已完成",
                 "已完成、已變更檔案、待解決、關鍵資料（原樣保留）、已試過但失敗、下一步", id="h3-is-not-a-heading"),
    pytest.param(make(failed_attempts=["- 試過"]).replace("## 下一步\n", ""), "- 試過",
                 "目標、已完成、已變更檔案、待解決、關鍵資料（原樣保留）、已試過但失敗", id="missing-last"),
    pytest.param("# 任務狀態 ── 最後更新 2026-09-09 23:40\n\n只有前言\n", 3, "（無）", id="no-sections"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "actual"), SECTION_CASES)
def test_sections_must_be_the_seven_in_order(text: str, line: int | str, actual: str) -> None:
    """Missing, extra, duplicate, reordered or renamed sections: one error naming what was found,
    on the first heading that is out of place (or the last line, when sections are missing at
    the end)."""
    assert errors(check_text(text)) == _resolve(text, [("sections", line, SECTIONS + actual)])


def test_rules_still_run_on_known_sections_when_the_list_is_wrong() -> None:
    text = make(goal=SIX, next_steps=["- [!] 卡住"]).replace("## 待解決\n\n", "")
    assert [(code, line) for code, line, _ in errors(check_text(text))] == [
        ("sections", at(text, "## 關鍵資料（原樣保留）")),
        ("lines", at(text, "第六")),
        ("blocked_reason", at(text, "- [!] 卡住")),
    ]


class TestKeyData:
    """Key data holds any number of lines but at most five items (bullets)."""

    def test_multi_line_item_is_one_item(self) -> None:
        text = make(key_data=["- 錯誤：", *TRACEBACK * 4, "- b", "- c", "- d", "- e"])
        assert check_text(text).valid

    def test_sub_bullets_belong_to_their_item__deliberately_unlike_the_peer(self) -> None:
        """Our one exception to peer compatibility (docs/format.md): the peer counts these six
        bullets as 6 items and rejects the file; we count 4 items and accept it."""
        text = make(key_data=["- a", "- b", "  - b 的細節", "  - b 的另一個細節", "- c", "- d"])
        assert errors(check_text(text)) == []

    def test_sub_bullets_do_not_rescue_six_top_level_items(self) -> None:
        text = make(key_data=["- a", "  - a1", "- b", "- c", "  * c1", "- d", "- e", "- f"])
        assert errors(check_text(text)) == [("key_items", at(text, "- f"), key_items_msg(6))]

    def test_indentation_is_relative_to_the_item_above(self) -> None:
        text = make(key_data=["  - a", "  - b", "    - b1", "- c", "- d", "- e", "  - e1", "- f"])
        assert errors(check_text(text)) == [("key_items", at(text, "- f"), key_items_msg(6))]


class TestWarnings:
    """Markers outside next_steps and done are not errors (as with the peer) but warnings."""

    def test_markers_in_open_issues_warn(self) -> None:
        text = make(open_issues=["- [>] 一", "- [>] 二", "- 普通"], goal=["- [x] 目標打勾"])
        report = check_text(text)
        assert report.valid
        assert [(w.code, w.line, w.section) for w in report.warnings] == [
            ("marker_outside", at(text, "- [x] 目標打勾"), "goal"),
            ("marker_outside", at(text, "- [>] 一"), "open_issues"),
            ("marker_outside", at(text, "- [>] 二"), "open_issues"),
        ]
        assert report.warnings[1].message == (
            "「待解決」含進度標記 [>]，標記只用於「下一步」與「已完成」：- [>] 一"
        )

    @pytest.mark.parametrize(("text", "_lang"), SAMPLES)
    def test_samples_have_no_warnings(self, text: str, _lang: Language) -> None:
        assert check_text(text).warnings == ()


def test_every_problem_is_reported_at_once_with_its_line() -> None:
    """Four different problems give four errors; no stop at the first."""
    text = make(
        title="# 任務狀態 ── 最後更新 2026-09-09",
        goal=SIX,
        done=["- [x] 沒驗證"],
        next_steps=["- [>] 一", "- [>] 二"],
    )
    assert errors(check_text(text)) == [
        ("title", 1, TITLE),
        ("lines", 9, lines_msg("目標", 6)),
        ("done_verify", 12, DONE_VERIFY + "- [x] 沒驗證"),
        ("in_progress", 24, in_progress_msg(2)),
    ]


def test_line_numbers_count_crlf_preamble_and_blank_lines() -> None:
    text = "前言\r\n\r\n" + make(next_steps=["", "- [ ] ok", "", "- [!] 卡住"]).replace(
        "\n", "\r\n"
    )
    assert errors(check_text(text)) == [("blocked_reason", 21, BLOCKED + "- [!] 卡住")]


# ---- en and zh-CN: the same rules in their own words ---------------------------------------

OTHER_LANGUAGE_CASES = [
    # (language, bodies or title, expected code, line of the problem, message)
    pytest.param(EN, {"title": "# Task state - updated 2026-09-09 23:40"}, "title", 1,
                 'the title line must be "# Task state — updated YYYY-MM-DD HH:mm"', id="en-title"),
    pytest.param(EN, {"done": ["- [x] retry"]}, "done_verify", "- [x] retry",
                 'a "Done" item lacks " | verified: ": - [x] retry', id="en-done-verify"),
    pytest.param(EN, {"done": ["- [x] retry｜驗證：ok"]}, "done_verify", "- [x] retry｜驗證：ok",
                 'a "Done" item lacks " | verified: ": - [x] retry｜驗證：ok', id="en-zh-token"),
    pytest.param(EN, {"done": ["- [x] retry |verified: ok"]}, "done_verify", "- [x] retry |verified: ok",
                 'a "Done" item lacks " | verified: ": - [x] retry |verified: ok', id="en-tight-bar"),
    pytest.param(EN, {"done": ["* [x] a | verified: ok"]}, "done_item", "* [x] a | verified: ok",
                 'every line of "Done" must start with "- [x] ": * [x] a | verified: ok', id="en-done-item"),
    pytest.param(EN, {"next_steps": ["- [!] stuck"]}, "blocked_reason", "- [!] stuck",
                 'a blocked item lacks " | reason: ": - [!] stuck', id="en-blocked"),
    pytest.param(EN, {"next_steps": ["- [!] stuck｜原因：x"]}, "blocked_reason", "- [!] stuck｜原因：x",
                 'a blocked item lacks " | reason: ": - [!] stuck｜原因：x', id="en-blocked-zh-token"),
    pytest.param(EN, {"next_steps": ["- [>] a", "- [>] b"]}, "in_progress", "- [>] b",
                 '"Next steps" holds at most one [>] item in progress, found 2', id="en-in-progress"),
    pytest.param(EN, {"next_steps": ["- [x] a"]}, "next_x", "- [x] a",
                 '"Next steps" must not hold [x]; move finished items to "Done": - [x] a', id="en-next-x"),
    pytest.param(EN, {"next_steps": ["do it"]}, "next_item", "do it",
                 'every line of "Next steps" must start with "- [ ] ", "- [>] " or "- [!] ": do it',
                 id="en-next-item"),
    pytest.param(EN, {"open_issues": SIX}, "lines", "第六", '"Open issues" holds at most 5 lines, found 6',
                 id="en-lines"),
    pytest.param(EN, {"key_data": [f"- {n}" for n in SIX]}, "key_items", "- 第六",
                 '"Key data (verbatim)" holds at most 5 items, found 6', id="en-key-items"),
    pytest.param(ZH_CN, {"title": "# 任务状态 ── 最后更新 2026-09-09"}, "title", 1,
                 "标题行须为「# 任务状态 ── 最后更新 YYYY-MM-DD HH:mm」", id="zh-CN-title"),
    pytest.param(ZH_CN, {"done": ["- [x] 重试｜驗證：ok"]}, "done_verify", "- [x] 重试｜驗證：ok",
                 "「已完成」项目缺「｜验证：」：- [x] 重试｜驗證：ok", id="zh-CN-traditional-token"),
    pytest.param(ZH_CN, {"next_steps": ["- [!] 卡住"]}, "blocked_reason", "- [!] 卡住",
                 "受阻项目缺「｜原因：」：- [!] 卡住", id="zh-CN-blocked"),
    pytest.param(ZH_CN, {"next_steps": ["- [>] 一", "- [>] 二"]}, "in_progress", "- [>] 二",
                 "「下一步」最多一个 [>] 进行中项目，实际 2 个", id="zh-CN-in-progress"),
    pytest.param(ZH_CN, {"changed_files": SIX}, "lines", "第六", "「已变更文件」最多 5 行，实际 6 行",
                 id="zh-CN-lines"),
    pytest.param(ZH_CN, {"key_data": [f"- {n}" for n in SIX]}, "key_items", "- 第六",
                 "「关键资料（原样保留）」最多 5 项，实际 6 项", id="zh-CN-key-items"),
]  # fmt: skip


@pytest.mark.parametrize(("lang", "parts", "code", "line", "message"), OTHER_LANGUAGE_CASES)
def test_other_languages_same_rules_own_words(
    lang: Language, parts: dict[str, object], code: str, line: int | str, message: str
) -> None:
    text = make(lang, **parts)  # type: ignore[arg-type]
    report = check_text(text)
    assert report.language == lang.code
    assert errors(report) == _resolve(text, [(code, line, message)])


@pytest.mark.parametrize(
    ("lang", "done", "blocked"),
    [
        (EN, "- [x] retry | verified: pytest passes", "- [!] metrics | reason: waiting on #4410"),
        (ZH_CN, "- [x] 重试｜验证：pytest 通过", "- [!] 监控｜原因：等 PR #4410"),
    ],
)
def test_other_languages_accept_their_tokens(lang: Language, done: str, blocked: str) -> None:
    text = make(lang, done=[done], next_steps=["- [>] now", blocked, "- [ ] later"])
    assert errors(check_text(text)) == []


def test_en_sections_message() -> None:
    text = make(EN).replace("## Open issues\n\n", "")
    assert errors(check_text(text)) == [
        (
            "sections",
            at(text, "## Key data (verbatim)"),
            "there must be exactly seven sections in this order: Goal, Done, Changed files, "
            "Open issues, Key data (verbatim), Tried and failed, Next steps; found: Goal, Done, "
            "Changed files, Key data (verbatim), Tried and failed, Next steps",
        )
    ]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param(ZH_TW_SAMPLE, "zh-TW", id="zh-TW"),
        pytest.param(ZH_CN_SAMPLE, "zh-CN", id="zh-CN"),
        pytest.param(EN_SAMPLE, "en", id="en"),
        pytest.param(make(ZH_CN, title="# 壞標題"), "zh-CN", id="zh-CN-headings-bad-title"),
        pytest.param(make(ZH_TW, title="# 壞標題"), "zh-TW", id="zh-TW-headings-bad-title"),
        pytest.param(make(EN, title=ZH_TW.title(STAMP)), "en", id="en-headings-zh-title"),
        pytest.param(ZH_CN.title(STAMP) + "\n", "zh-CN", id="zh-CN-title-only"),
        pytest.param(EN.title(STAMP) + "\n\n## Goal\n", "en", id="en-title-one-heading"),
        pytest.param("", "zh-TW", id="empty-defaults-to-peer-format"),
    ],
)
def test_language_is_detected_from_the_file(text: str, code: str) -> None:
    assert check_text(text).language == code
    assert outline(text).language.code == code


def test_detected_language_speaks_its_errors() -> None:
    assert errors(check_text(make(EN, title="# Task state"))) == [
        ("title", 1, 'the title line must be "# Task state — updated YYYY-MM-DD HH:mm"')
    ]
    assert check_text(make(ZH_CN, title="# 任务状态")).errors[0].message.startswith("标题行须为")


# ---- bytes: size, encoding, BOM ------------------------------------------------------------


class TestBytes:
    """A file over 1 MiB, not UTF-8, with NUL bytes or with a BOM: exactly one error each."""

    def test_over_one_mebibyte_is_refused(self) -> None:
        data = ZH_TW_SAMPLE.encode() + b"x" * (MAX_BYTES + 1 - len(ZH_TW_SAMPLE.encode()))
        report = check_bytes(data)
        assert errors(report) == [
            ("too_big", None, "STATE.md is over 1 MiB (1048577 bytes); refusing to read it")
        ]
        assert errors(check_bytes(data, ZH_TW)) == [
            ("too_big", None, "STATE.md 超過 1 MiB（1048577 位元組），拒絕處理")
        ]

    def test_exactly_one_mebibyte_is_read(self) -> None:
        body = ZH_TW_SAMPLE.encode()
        data = b"p" * (MAX_BYTES - len(body) - 1) + b"\n" + body  # a long preamble line
        assert len(data) == MAX_BYTES
        assert check_bytes(data).valid

    @pytest.mark.parametrize(
        ("data", "line"),
        [
            pytest.param(
                ZH_TW_SAMPLE.encode().replace(b"\n## ", b"\n\xff## ", 1), 3, id="bad-byte"
            ),
            pytest.param(ZH_TW_SAMPLE.encode("big5", errors="replace"), 1, id="big5"),
            pytest.param(ZH_TW_SAMPLE.encode("utf-16"), 1, id="utf-16"),
            pytest.param(ZH_TW_SAMPLE.encode()[:-3] + "訊".encode()[:2] + b"\n", 26, id="cut-char"),
            pytest.param(b"\xed\xa0\x80\n", 1, id="surrogate"),
        ],
    )
    def test_not_utf8_text_is_one_error_at_the_first_bad_line(self, data: bytes, line: int) -> None:
        assert errors(check_bytes(data)) == [("not_text", line, "STATE.md is not UTF-8 text")]
        assert check_bytes(data, ZH_TW).errors[0].message == "STATE.md 不是 UTF-8 文字"

    @pytest.mark.parametrize(("text", "lang"), SAMPLES)
    def test_bom_is_one_error_on_line_1(self, text: str, lang: Language) -> None:
        report = check_bytes(b"\xef\xbb\xbf" + text.encode())
        assert [(p.code, p.line) for p in report.errors] == [("bom", 1)]
        assert report.language == lang.code
        assert "BOM" in report.errors[0].message

    def test_bom_does_not_hide_a_bad_title(self) -> None:
        report = check_bytes(b"\xef\xbb\xbf" + make(title="# 任務狀態").encode())
        assert errors(report) == [
            ("bom", 1, "STATE.md 以 BOM（位元組順序標記）開頭，請存為不含 BOM 的 UTF-8"),
            ("title", 1, TITLE),
        ]

    @pytest.mark.parametrize(("text", "_lang"), SAMPLES)
    def test_good_bytes_are_checked_as_text(self, text: str, _lang: Language) -> None:
        assert check_bytes(text.encode()) == check_text(text)
        assert check_bytes(text.encode()).valid


# ---- parse and render ----------------------------------------------------------------------


class TestRoundTrip:
    """render(parse(x)) is x for canonical text; anything parseable renders canonically."""

    @pytest.mark.parametrize(("text", "lang"), SAMPLES)
    def test_canonical_samples_render_back_byte_for_byte(self, text: str, lang: Language) -> None:
        doc = parse(text)
        assert doc.language == lang.code
        assert doc.stamp == STAMP
        assert render(doc) == text

    def test_parse_gives_the_sections(self) -> None:
        doc = parse(ZH_TW_SAMPLE)
        assert doc.section("changed_files") == ("- M src/pool.ts", "- A tests/retry.test.mjs")
        assert doc.section("open_issues") == ("- 重試逾時上限需要自環境變數讀取",)
        assert len(doc.steps()) == 3
        assert doc.in_progress() == ("實作連線健康檢查定時器｜驗證：模擬斷線並檢查 3 秒內自動重連",)
        assert doc.preamble == ()

    def test_parse_render_of_a_built_document(self) -> None:
        doc = template(EN, STAMP).with_section("goal", ["ship it  ", "", "  today"])
        assert doc.section("goal") == ("ship it", "  today")
        assert parse(render(doc)) == doc
        assert render(doc).startswith(
            "# Task state — updated 2026-09-09 23:40\n\n## Goal\nship it\n"
        )

    def test_non_canonical_input_renders_canonically(self) -> None:
        messy = (
            "由 agent 維護  \r\n"
            "\r\n"
            "# 任務狀態 ── 最後更新 2026-09-09 23:40 \t\r\n"
            "\r\n\r\n"
            "##  目標  \r\n"
            "重構連線池   \r\n"
            "\r\n\r\n\r\n"
            "## 已完成\r\n"
            "## 已變更檔案\r\n"
            "- M src/pool.ts\t\r\n"
            "\r\n"
            "- A tests/x.py\r\n"
            "## 待解決\r\n"
            "## 關鍵資料（原樣保留）\r\n"
            "- Traceback:\r\n"
            "    File x, line 3   \r\n"
            "## 已試過但失敗\r\n"
            "## 下一步\r\n"
            "- [>] 下一件事\r\n"
        )
        canonical = (
            "# 任務狀態 ── 最後更新 2026-09-09 23:40\n\n"
            "由 agent 維護\n\n"
            "## 目標\n重構連線池\n\n"
            "## 已完成\n\n"
            "## 已變更檔案\n- M src/pool.ts\n- A tests/x.py\n\n"
            "## 待解決\n\n"
            "## 關鍵資料（原樣保留）\n- Traceback:\n    File x, line 3\n\n"
            "## 已試過但失敗\n\n"
            "## 下一步\n- [>] 下一件事\n"
        )
        assert check_text(messy).valid
        assert render(parse(messy)) == canonical
        assert render(parse(canonical)) == canonical
        assert parse(messy) == parse(canonical)

    def test_title_inside_a_section_moves_to_the_top(self) -> None:
        text = make(goal=["一"]).replace(ZH_TW.title(STAMP) + "\n", "")
        text = text.replace("一\n", "一\n" + ZH_TW.title(STAMP) + "\n")
        assert check_text(text).valid
        assert render(parse(text)) == make(goal=["一"])

    def test_content_errors_still_parse(self) -> None:
        """An over-long (say, merged) document must still load so it can be shown and shrunk."""
        text = make(goal=SIX, next_steps=["- [>] a", "- [>] b", "- [x] c"])
        assert not check_text(text).valid
        doc = parse(text)
        assert doc.section("goal") == tuple(SIX)
        assert render(doc) == text

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param(make(title="# 任務狀態"), id="bad-title"),
            pytest.param(make().split("\n", 1)[1], id="no-title"),
            pytest.param(make().replace("## 待解決\n\n", ""), id="missing-section"),
            pytest.param(make() + "## 備註\n", id="extra-section"),
            pytest.param("\ufeff" + ZH_TW_SAMPLE, id="bom"),
            pytest.param("", id="empty"),
            pytest.param(make(EN).replace("## Goal", "## 目標"), id="mixed-languages"),
        ],
    )
    def test_structure_errors_do_not_parse(self, text: str) -> None:
        with pytest.raises(InvalidDocument):
            parse(text)


class TestDocumentValue:
    """The small helpers on Document that the rest of the tool uses."""

    def test_changed_keys_and_same_content(self) -> None:
        doc = parse(ZH_TW_SAMPLE)
        other = doc.with_section("goal", ["新目標"]).with_section("open_issues", [])
        assert doc.changed_keys(other) == ("goal", "open_issues")
        assert doc.changed_keys(doc.with_stamp("2027-01-01 00:00")) == ()
        assert doc.same_content(doc.with_stamp("2027-01-01 00:00"))
        assert not doc.same_content(other)

    def test_in_progress_strips_the_marker_only(self) -> None:
        doc = template(ZH_TW, STAMP).with_section(
            "next_steps", ["- [ ] a", "  - [>]   b ｜原因：c", "- [!] d｜原因：e"]
        )
        assert doc.in_progress() == ("b ｜原因：c",)


# ---- properties ----------------------------------------------------------------------------

FAST = settings(max_examples=100, deadline=None)


@FAST
@given(documents())
def test_property_parse_inverts_render(doc: Document) -> None:
    text = render(doc)
    assert parse(text) == doc
    assert render(parse(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_property_arbitrary_text_never_crashes(text: str) -> None:
    _check_any_text(text)


@FAST
@given(structured_text())
def test_property_structured_text_never_crashes_and_renders_stably(text: str) -> None:
    _check_any_text(text)


def _check_any_text(text: str) -> None:
    out = outline(text)
    report = check_text(text)
    assert report.language == out.language.code
    assert all(p.line is None or 1 <= p.line <= text.count("\n") + 1 for p in report.errors)
    structural = {"title", "sections", "bom"}
    try:
        doc = parse(text)
    except InvalidDocument:
        assert {p.code for p in report.errors} & structural
        return
    assert not {p.code for p in report.errors} & structural
    canonical = render(doc)
    assert parse(canonical) == doc
    assert render(parse(canonical)) == canonical
    # Canonical layout moves lines about but breaks or mends no rule, with one exception it
    # may mend: a control character that is whitespace to str.strip (\x0b, \x0c, \x1c-\x1f) at
    # a line's end or start, which the outline strips as whitespace and rendering drops.
    before = sorted(p.code for p in report.errors)
    after = sorted(p.code for p in check_text(canonical).errors)

    def stripped_controls(line: str) -> bool:
        ends = line[len(line.rstrip()) :] + line[: len(line) - len(line.lstrip())]
        return not ends.replace("\t", "").replace("\r", "").isprintable()

    if any(map(stripped_controls, text.split("\n"))) and "control" not in after:
        before = [code for code in before if code != "control"]
    assert after == before
