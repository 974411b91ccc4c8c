"""Chinese word boundaries in `memory search`: two-character words found inside sentences, and a
query that only spans the end of one word and the start of the next (限流 in 权限|流程) is not a
hit (document/wordbreak.py). The same corpus is the one docs/memory.md reports figures for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memory_support import as_json, ok

from gitstate.memory.document import cjk_words, wordbreak
from gitstate.memory.storage import word_list

# Each sentence holds its words inside it, never set apart by spaces or punctuation.
RECALL = {
    "我們重構了連線池的重試機制": ["連線", "重試"],
    "部署時要先跑資料庫遷移再重啟服務": ["遷移", "重啟"],
    "这个接口的响应时间太长需要优化": ["接口", "优化"],
    "用户反馈登录页面加载缓慢": ["反馈", "缓慢"],
    "明天上午跟产品经理讨论需求文档": ["讨论", "需求"],
    "記得把日誌輪替的設定寫進文件": ["日誌", "設定"],
}
# A query word whose characters stand side by side in the sentence, across two words there.
ACROSS = {
    "我们的权限流程需要审查": "限流",  # 权限|流程
    "我們的權限流程需要審查": "限流",  # the same in Traditional characters
    "学生在学校园艺课上种花": "校园",  # 学校|园艺
    "中国人民银行发布通知": "国人",  # 中国|人民
    "结婚的和尚未结婚的": "和尚",  # 和|尚未
    "他说的确实在理": "确实",  # 的确|实在
    "提高人民生活水平": "民生",  # 人民|生活
    "下雨天地面积水": "天地",  # 下雨天|地面|积水
    "研究生命起源": "研究生",  # 研究|生命
}


SENTENCES = [*RECALL, *ACROSS]


@pytest.fixture
def corpus(cli: Any) -> None:
    for n, sentence in enumerate(SENTENCES):  # one file each: a hit names its sentence
        ok(cli("memory", "add", "--layer", "project", "--project", f"s{n}", sentence))


def found(cli: Any, *query: str) -> list[str]:
    """The sentences whose files are hits."""
    hits = as_json(cli("memory", "search", "--json", *query))
    return [SENTENCES[int(hit["path"][len("projects/s") : -3])] for hit in hits]


@pytest.mark.usefixtures("corpus")
class TestTheCorpus:
    @pytest.mark.parametrize(
        ("sentence", "word"), [(s, w) for s, words in RECALL.items() for w in words]
    )
    def test_two_character_words_inside_sentences(self, cli: Any, sentence: str, word: str) -> None:
        assert found(cli, word) == [sentence]

    @pytest.mark.parametrize(("sentence", "word"), list(ACROSS.items()))
    def test_a_word_across_two_is_no_hit(self, cli: Any, sentence: str, word: str) -> None:
        assert sentence not in found(cli, word)

    def test_the_words_it_spans_are_found(self, cli: Any) -> None:
        simplified, traditional = "我们的权限流程需要审查", "我們的權限流程需要審查"
        for query in ("权限", "权限流程", "审查"):
            assert found(cli, query) == [simplified], query
        assert found(cli, "權限流程") == [traditional]
        assert sorted(found(cli, "流程")) == sorted([simplified, traditional])  # one spelling

    def test_a_prefix_is_left_as_typed(self, cli: Any) -> None:
        assert "我们的权限流程需要审查" in found(cli, "限流*")


class TestWhereWordsBreak:
    def test_the_likeliest_cut(self) -> None:
        assert wordbreak.cuts("权限流程", "限流") == [0, 2, 4]
        assert wordbreak.cuts("系统限流策略", "限流") == [0, 2, 4, 6]

    def test_a_word_the_list_lacks_stands_where_nothing_likelier_cuts(self) -> None:
        assert wordbreak.found_as_word("张三说他明天来", "张三")
        assert wordbreak.found_as_word("改用zxqv實作", "實作")

    def test_any_occurrence_as_a_word_is_enough(self) -> None:
        text = "权限流程很长，所以系统限流"
        assert wordbreak.found_as_word(text, "限流")
        assert not wordbreak.found_as_word(text[:6], "限流")

    def test_no_literal_occurrence_is_left_to_the_index(self) -> None:
        assert wordbreak.found_as_word("ＡＢＣ", "限流")

    def test_runs_are_ideographs_two_or_more(self) -> None:
        assert wordbreak.runs("pygit2實作refs的讀寫") == ["實作", "的讀寫"]
        assert wordbreak.runs("的") == []


class TestTheWordList:
    """The list a search judges with is mapped from cjk_words.py's source (memory/storage/
    word_list.py): the same bytes and lines as the module it would otherwise import."""

    def test_the_mapped_source_is_the_module(self) -> None:
        mapped = word_list.words()
        assert mapped is not wordbreak.imported()
        assert mapped.data[mapped.low : mapped.high] == cjk_words.WORDS.encode()
        assert mapped.total == cjk_words.TOTAL_LOG2

    def test_every_character_finds_its_line_and_no_other(self) -> None:
        lines = dict(line.split("\t") for line in cjk_words.WORDS.strip("\n").split("\n"))
        mapped, imported = word_list.words(), wordbreak.imported()
        for first, line in lines.items():
            assert mapped.line(first) == imported.line(first) == line
        # Characters without a line: before the first, between lines, after the last, others.
        first, last = min(lines), max(lines)
        around = {chr(ord(first) - 1), chr(ord(last) + 1), "a", "\t", "\U0010ffff"}
        between = {chr(code) for code in range(ord(first), ord(last), 97)}
        for char in (around | between) - set(lines):
            assert mapped.line(char) == imported.line(char) == ""

    @pytest.mark.parametrize(
        "source",
        [
            None,  # no such file (a zip or byte-code-only install)
            "",  # empty
            'WORDS = "abc"\n',  # not the generated layout
            cjk_words.__doc__,  # the header without TOTAL_LOG2 and WORDS
        ],
    )
    def test_anything_else_is_the_imported_list(self, tmp_path: Path, source: str | None) -> None:
        path = tmp_path / "cjk_words.py"
        if source is not None:
            path.write_text(source, encoding="utf-8")
        assert word_list.mapped(str(path)) is wordbreak.imported()

    def test_a_directory_is_not_the_list(self, tmp_path: Path) -> None:
        assert word_list.mapped(str(tmp_path)) is wordbreak.imported()
