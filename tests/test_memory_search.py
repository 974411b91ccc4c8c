"""`memory search` and `memory index` on a real brain: CJK words inside sentences, mixed
Chinese and English, JSON, answering from the tip, incremental indexing, rebuilds of a missing
or corrupt index."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from memory_support import as_json, ok, tip

from gitstate.memory.storage.layout import BrainLayout
from gitstate.memory.usecases import search as memory_search
from gitstate.memory.usecases import write as memory_write

SENTENCES = {
    "knowledge": [
        "我們重構了連線池的重試機制，改用指數退避",
        "部署時要先跑資料庫遷移再重啟服務",
        "The connection pool retries with exponential backoff",
    ],
    "identity": ["使用者偏好繁體中文回覆，程式碼註解用英文"],
}


@pytest.fixture
def brain(cli: Any) -> None:
    for layer, lines in SENTENCES.items():
        for line in lines:
            ok(cli("memory", "add", "--layer", layer, line))
    ok(cli("memory", "session", "--project", "demo", "--summary", "改用pygit2實作refs的讀寫"))


def paths(cli: Any, *query: str) -> list[str]:
    return [hit["path"] for hit in as_json(cli("memory", "search", "--json", *query))]


@pytest.mark.usefixtures("brain")
class TestFinding:
    @pytest.mark.parametrize(
        ("query", "where"),
        [
            ("連線", "MEMORY.md"),  # a two-character word inside a sentence
            ("重試", "MEMORY.md"),
            ("遷移", "MEMORY.md"),
            ("連線池", "MEMORY.md"),  # three characters
            ("資料庫", "MEMORY.md"),
            ("指數退避", "MEMORY.md"),
            ("偏好", "USER.md"),
            ("繁體中文", "USER.md"),
        ],
    )
    def test_chinese_words_inside_sentences(self, cli: Any, query: str, where: str) -> None:
        assert paths(cli, query) == [where]

    def test_characters_apart_are_not_a_word(self, cli: Any) -> None:
        assert paths(cli, "池重") == []  # 連線池的重試: not next to each other
        assert paths(cli, "庫重") == []

    def test_mixed_chinese_and_english(self, cli: Any) -> None:
        # The summary is in the session log and, as a timeline link, in the project's file.
        found = sorted(paths(cli, "pygit2實作"))
        assert found[0] == "projects/demo.md" and found[1].startswith("sessions/")
        assert len(found) == 2
        assert sorted(paths(cli, "refs的讀寫")) == found
        assert sorted(paths(cli, "讀寫", "pygit2")) == found  # every word, anywhere
        assert paths(cli, "backoff", "連線") == ["MEMORY.md"]
        assert paths(cli, "retry") == ["MEMORY.md"]  # stemmed: retries
        assert paths(cli, "nothing-like-this") == []

    def test_json_shape_best_first(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "project", "--project", "demo", "退避 退避 退避 退避"))
        hits = as_json(cli("memory", "search", "--json", "退避"))
        assert all(set(hit) == {"path", "snippet", "score"} for hit in hits)
        assert all(isinstance(hit["score"], float) for hit in hits)
        scores = [hit["score"] for hit in hits]
        assert scores == sorted(scores, reverse=True)
        assert hits[0]["path"] == "projects/demo.md"  # four mentions beat one
        assert "«退避»" in hits[0]["snippet"]
        snippet = next(h["snippet"] for h in hits if h["path"] == "MEMORY.md")
        assert "機制，改用指數«退避»" in snippet  # the text as written: no segmentation left

    def test_human_output_and_limit(self, cli: Any) -> None:
        text = ok(cli("memory", "search", "連線")).stdout
        assert text.startswith("MEMORY.md  (score ")
        assert "我們重構了«連線»池的重試機制" in text
        assert len(as_json(cli("memory", "search", "--json", "-n", "1", "的"))) == 1
        assert "no match for" in ok(cli("memory", "search", "zzz")).stdout
        assert cli("memory", "search", "，。").exit_code == 64

    def test_it_answers_from_the_tip(self, cli: Any) -> None:
        assert paths(cli, "量子") == []
        ok(cli("memory", "add", "--layer", "knowledge", "新的量子計算筆記"))
        assert paths(cli, "量子") == ["MEMORY.md"]
        ok(cli("memory", "forget", "--layer", "knowledge", "量子"))
        assert paths(cli, "量子") == []


class TestIndex:
    def test_incremental_by_content(self, cli: Any) -> None:
        ok(cli("memory", "init"))
        first = as_json(cli("memory", "index", "--json"))
        assert first["indexed"] == 2 and first["files"] == 2 and first["tip"] == tip()
        assert as_json(cli("memory", "index", "--json"))["indexed"] == 0
        ok(cli("memory", "add", "--layer", "identity", "likes tea"))
        again = as_json(cli("memory", "index", "--json"))
        assert (again["indexed"], again["removed"], again["files"]) == (1, 0, 2)  # USER.md only
        rebuilt = as_json(cli("memory", "index", "--rebuild", "--json"))
        assert (rebuilt["rebuilt"], rebuilt["indexed"]) == (True, 2)

    def test_long_files_are_chunks_that_know_their_file(self, cli: Any) -> None:
        for day in range(12):
            memory_write.session(
                f"第{day}次 " + "長長的摘要內容 " * 40 + f"marker{day}",
                "demo",
                now=1767268800.0 + day * 60,
            )
        done = as_json(cli("memory", "index", "--json"))
        assert done["chunks"] > done["files"]
        db = sqlite3.connect(BrainLayout().index_path)
        rows = db.execute("SELECT path, count(*) FROM chunks GROUP BY path").fetchall()
        assert max(count for _, count in rows) > 1
        assert all(len(c) <= 1600 for (c,) in db.execute("SELECT content FROM chunks"))
        hits = as_json(cli("memory", "search", "--json", "marker11"))
        assert [h["path"] for h in hits] == ["sessions/2026-01-01.md"]

    def test_a_deleted_index_is_rebuilt(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "部署要先遷移"))
        ok(cli("memory", "search", "遷移"))
        index = BrainLayout().index_path
        assert index.exists()
        index.unlink()
        assert paths(cli, "遷移") == ["MEMORY.md"]
        assert index.exists()

    @pytest.mark.parametrize(
        "damage",
        [
            lambda data: b"this is not a database at all" * 100,
            lambda data: data[:100] + b"\x00" * 50 + data[150:],  # a broken header
            lambda data: data[:4096] + b"\xff" * (len(data) - 4096),  # broken pages
        ],
    )
    def test_a_corrupt_index_is_rebuilt(self, cli: Any, damage: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "部署要先遷移"))
        ok(cli("memory", "search", "遷移"))
        index = BrainLayout().index_path
        index.write_bytes(damage(index.read_bytes()))
        assert paths(cli, "遷移") == ["MEMORY.md"]
        assert as_json(cli("memory", "status", "--json"))["index"]["current"] is True

    def test_an_index_of_another_schema_is_rebuilt(self, cli: Any) -> None:
        ok(cli("memory", "add", "--layer", "knowledge", "部署要先遷移"))
        ok(cli("memory", "search", "遷移"))
        db = sqlite3.connect(BrainLayout().index_path)
        db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
        db.commit()
        db.close()
        assert paths(cli, "遷移") == ["MEMORY.md"]

    def test_without_a_brain(self, cli: Any) -> None:
        result = cli("memory", "search", "x")
        assert result.exit_code == 3 and "memory init" in result.stderr


def test_search_use_case_directly(cli: Any) -> None:
    ok(cli("memory", "add", "--layer", "knowledge", "東京的拉麵很好吃"))
    (hit,) = memory_search.search("拉麵")
    assert hit.path == "MEMORY.md" and hit.chunk == 0 and "«拉麵»" in hit.snippet


def test_a_query_word_counts_when_it_has_a_letter_or_digit_of_any_script() -> None:
    """fts_query keeps a word when it holds what `[^\\W_]` matches (str.isalnum, without
    compiling that class at every start): every 7th code point, as a word of its own."""
    import re

    from gitstate.memory.document.search_text import fts_query, normalize

    word = re.compile(r"[^\W_]")
    for code in range(0, 0x110000, 7):
        if 0xD800 <= code <= 0xDFFF or chr(code).isspace() or chr(code) == "*":
            continue
        char = chr(code)
        assert bool(fts_query(char)) == bool(word.search(normalize(char))), hex(code)
