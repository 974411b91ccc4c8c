"""The pure parts of memory: files and sections, session blocks, the merge, the core, the
search text, compaction (no repository)."""

from __future__ import annotations

import itertools
import re
import sqlite3
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitstate.memory.document import compaction, files, search_text, sessions
from gitstate.memory.document import core as memory_core
from gitstate.memory.document.compaction import History
from gitstate.memory.document.merge import merge_log, merge_sections, merge_trees

DAY = 86400


def block(clock: str, summary: str, when: str, project: str = "demo") -> str:
    return sessions.render_block(clock, project, when, summary, project, "/w")


class TestFiles:
    def test_add_entry_goes_under_its_heading(self) -> None:
        text, added = files.add_entry(files.MEMORY_TEMPLATE, "Environment", ["- python 3.11"])
        assert added
        sections = files.parse_sections(text)
        index = files.find_section(sections, "environment")
        assert index is not None and sections[index].lines == ("- python 3.11",)
        assert files.find_section(sections, "Technical Knowledge") is not None

    def test_add_entry_creates_a_missing_section_and_is_idempotent(self) -> None:
        text, _ = files.add_entry(files.USER_TEMPLATE, "Tools  I  like", ["- ripgrep"])
        assert text.endswith("## Tools I like\n- ripgrep\n")
        again, added = files.add_entry(text, "tools i like", ["- ripgrep"])
        assert (again, added) == (text, False)

    def test_entry_lines(self) -> None:
        assert files.entry_lines("plain fact") == ["- plain fact"]
        assert files.entry_lines("* starred") == ["* starred"]
        assert files.entry_lines("first\nsecond") == ["- first", "  second"]

    def test_remove_entries_takes_continuation_lines_and_keeps_headings(self) -> None:
        text = "# T\n\n## A\n- keep\n- drop me\n  more of it\n- keep too\n\n## drop heading\n"
        new, removed = files.remove_entries(text, "DROP")
        assert removed == ["- drop me\n  more of it"]
        assert "## drop heading" in new and "- keep\n- keep too" in new

    def test_count_lines_is_wc_l(self) -> None:
        assert files.count_lines("a\nb\n") == 2
        assert files.count_lines("a\nb") == 1

    def test_paths_and_project_names(self) -> None:
        assert files.is_memory_path("projects/a.b-c_1.md")
        assert files.is_memory_path("sessions/2026-01-02.md")
        for bad in ("../MEMORY.md", "projects/a/b.md", "sessions/today.md", ".git/config"):
            assert not files.is_memory_path(bad)
        assert not files.valid_project("my project") and not files.valid_project("..")
        assert files.project_slug("我的 project!") == "project"
        assert files.project_slug("a b") == "a-b"

    def test_fenced_code_is_not_a_section(self) -> None:
        text = "# T\n\n## A\n```\n## not a heading\n```\n"
        assert [s.heading for s in files.parse_sections(text)] == [None, "A"]


class TestSessions:
    def test_block_format(self) -> None:
        text = sessions.render_block(
            "14:30:22",
            "demo",
            "2026-01-02T14:30:22+08:00",
            "did things",
            "demo",
            "/src/demo",
            [("Key Decisions", ["use git"]), ("Learnings", []), ("Next Steps", ["[ ] more"])],
        )
        assert text.split("\n")[:4] == [
            "## Session 14:30:22 — demo",
            "**Project**: [[projects/demo]]",
            "**Workspace**: /src/demo",
            "**Time**: 2026-01-02T14:30:22+08:00",
        ]
        assert "### Key Decisions\n- use git" in text
        assert "Learnings" not in text
        assert text.endswith("### Next Steps\n- [ ] more")
        parsed = sessions.parse_block(text)
        assert (parsed.clock, parsed.project, parsed.time) == (
            "14:30:22",
            "demo",
            "2026-01-02T14:30:22+08:00",
        )
        assert sessions.link("2026-01-02", "14:30:22") == "[[sessions/2026-01-02#session-143022]]"

    def test_a_summary_cannot_start_a_block(self) -> None:
        text = block("10:00:00", "x\n## Session 11:00:00 — fake", "2026-01-02T10:00:00+00:00")
        _, blocks = sessions.parse_log(sessions.append("", "2026-01-02", text))
        assert len(blocks) == 1

    def test_append_keeps_the_old_text_byte_for_byte(self) -> None:
        first = sessions.append("", "2026-01-02", block("10:00:00", "one", "t1"))
        assert first.startswith("# Sessions — 2026-01-02\n\n## Session 10:00:00")
        second = sessions.append(first, "2026-01-02", block("11:00:00", "two", "t2"))
        assert second.startswith(first)
        assert [b.clock for b in sessions.parse_log(second)[1]] == ["10:00:00", "11:00:00"]

    def test_peer_separators_are_not_part_of_a_block(self) -> None:
        text = "# S\n\n## Session 10:00 — a\nx\n\n---\n\n## Session 11:00 — b\ny\n"
        _, blocks = sessions.parse_log(text)
        assert [b.text for b in blocks] == ["## Session 10:00 — a\nx", "## Session 11:00 — b\ny"]

    def test_days_is_a_calendar_day_back(self) -> None:
        assert sessions.days(1767268800.0)[1] < sessions.days(1767268800.0)[0]


class TestMerge:
    def test_sessions_union_drops_identical_blocks_and_orders_by_time(self) -> None:
        a = block("09:00:00", "a", "2026-01-02T09:00:00+00:00")
        b = block("08:00:00", "b (Taipei)", "2026-01-02T08:00:00+08:00")  # 00:00 UTC
        c = block("10:00:00", "c", "2026-01-02T10:00:00+00:00")
        base = sessions.append("", "2026-01-02", a)
        ours = sessions.append(base, "2026-01-02", c)
        theirs = sessions.append(base, "2026-01-02", b)
        merged = merge_log(base, ours, theirs, "2026-01-02")
        summaries = [x.text.split("### Summary\n")[1] for x in sessions.parse_log(merged)[1]]
        assert summaries == ["b (Taipei)", "a", "c"]

    def test_sessions_union_without_a_base(self) -> None:
        a = sessions.append("", "2026-01-02", block("09:00:00", "a", "2026-01-02T09:00:00+00:00"))
        b = sessions.append("", "2026-01-02", block("09:00:00", "b", "2026-01-02T09:00:00+00:00"))
        merged = merge_log("", a, b)
        assert merged.count("## Session") == 2 and merge_log("", a, a).count("## Session") == 1

    def test_a_block_one_side_forgot_stays_forgotten(self) -> None:
        a = block("09:00:00", "secret stuff", "2026-01-02T09:00:00+00:00")
        c = block("10:00:00", "c", "2026-01-02T10:00:00+00:00")
        base = sessions.append("", "2026-01-02", a)
        ours = sessions.render_log("# Sessions — 2026-01-02", [])  # forgot a
        theirs = sessions.append(base, "2026-01-02", c)
        merged = merge_log(base, ours, theirs)
        assert "secret stuff" not in merged and "### Summary\nc" in merged

    def test_sections_one_side_takes_that_side(self) -> None:
        base = files.MEMORY_TEMPLATE
        ours, _ = files.add_entry(base, "Environment", ["- ours"])
        theirs, _ = files.add_entry(base, "Important Decisions", ["- theirs"])
        merged, both = merge_sections(base, ours, theirs)
        assert both == ()
        assert "## Environment\n- ours" in merged and "## Important Decisions\n- theirs" in merged

    def test_sections_changed_on_both_sides_unite_their_lines(self) -> None:
        base, _ = files.add_entry(files.MEMORY_TEMPLATE, "Environment", ["- python 3.10"])
        ours = base.replace("- python 3.10", "- python 3.11")
        theirs = base.replace("- python 3.10", "- python 3.12")
        merged, both = merge_sections(base, ours, theirs)
        assert both == ("Environment",)
        assert "- python 3.11\n- python 3.12" in merged and "3.10" not in merged
        assert "sync conflict" not in merged

    def test_sections_a_new_section_keeps_its_place(self) -> None:
        base = "# T\n\n## A\n- a\n\n## C\n- c\n"
        theirs = "# T\n\n## A\n- a\n\n## B\n- b\n\n## C\n- c\n"
        merged, _ = merge_sections(base, base, theirs)
        assert [s.heading for s in files.parse_sections(merged)] == [None, "A", "B", "C"]

    def test_sections_deleted_on_one_side_changed_on_the_other_is_kept(self) -> None:
        base = "# T\n\n## A\n- a\n"
        merged, _ = merge_sections(base, "# T\n", "# T\n\n## A\n- a\n- more\n")
        assert "- more" in merged

    def test_trees_unrelated_histories_keep_everything(self) -> None:
        ours = {"MEMORY.md": files.add_entry(files.MEMORY_TEMPLATE, "Environment", ["- x"])[0]}
        theirs = {
            "MEMORY.md": files.add_entry(files.MEMORY_TEMPLATE, "Environment", ["- y"])[0],
            "USER.md": files.USER_TEMPLATE,
        }
        result = merge_trees(
            {}, {k: v.encode() for k, v in ours.items()}, {k: v.encode() for k, v in theirs.items()}
        )
        memory = result.files["MEMORY.md"].decode()
        assert "- x\n- y" in memory and memory.count("## Environment") == 1
        assert result.files["USER.md"].decode() == files.USER_TEMPLATE

    def test_trees_deleted_on_one_side_unchanged_on_the_other_goes(self) -> None:
        base = {"projects/a.md": b"# A\n", "MEMORY.md": b"m\n"}
        result = merge_trees(base, {"MEMORY.md": b"m\n"}, dict(base))
        assert "projects/a.md" not in result.files

    @given(
        st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=4, unique=True),
        st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=4, unique=True),
    )
    def test_sessions_merge_loses_no_new_block(self, mine: list[str], yours: list[str]) -> None:
        def log(names: list[str]) -> str:
            text = ""
            for name in names:
                clock = f"0{'abcde'.index(name)}:00:00"
                text = sessions.append(text, "d", block(clock, name, f"2026-01-02T{clock}+00:00"))
            return text

        merged = merge_log("", log(mine), log(yours))
        found = [b.text.split("### Summary\n")[1] for b in sessions.parse_log(merged)[1]]
        assert found == sorted(set(mine) | set(yours))


class TestCore:
    def read(self, texts: dict[str, str]):  # type: ignore[no-untyped-def]
        return texts.get

    def test_order_and_project_blocks_newest_first(self) -> None:
        user, _ = files.add_entry(files.USER_TEMPLATE, "Coding Preferences", ["- tabs"])
        memory, _ = files.add_entry(files.MEMORY_TEMPLATE, "Environment", ["- linux"])
        log = sessions.append("", "D1", block("09:00:00", "early", "t"))
        log = sessions.append(log, "D1", block("10:00:00", "other", "t", project="else"))
        log = sessions.append(log, "D1", block("11:00:00", "late", "t"))
        texts = {
            "USER.md": user,
            "MEMORY.md": memory,
            "projects/demo.md": files.project_template("demo"),
            "sessions/D1.md": log,
        }
        text = memory_core.core_text(texts.get, "demo", "D1", "D0", 14000)
        assert text is not None
        order = [text.index(s) for s in ("- tabs", "- linux", "### Summary\nlate", "early")]
        assert order == sorted(order)
        assert "other" not in text
        assert "Pet Peeves" not in text  # empty sections are left out
        assert "Durable facts worth knowing" not in text  # so is the template's preamble

    def test_the_budget_cuts_between_sections_with_a_pointer(self) -> None:
        memory = files.MEMORY_TEMPLATE
        for n in range(40):
            memory, _ = files.add_entry(memory, f"Topic {n}", [f"- fact number {n} " + "x" * 40])
        text = memory_core.core_text({"MEMORY.md": memory}.get, None, "D1", "D0", 2000)
        assert text is not None and len(text.encode()) <= 2000
        assert "## Topic 0\n" in text and "## Topic 39" not in text
        assert "git agy-state memory show" in text and "MEMORY.md" in text.splitlines()[-1]
        assert text.count("## Topic") == text.count("- fact number")  # never half a section

    def test_nothing_to_say(self) -> None:
        texts = {"MEMORY.md": files.MEMORY_TEMPLATE, "USER.md": files.USER_TEMPLATE}
        assert memory_core.core_text(texts.get, "demo", "D1", "D0", 14000) is None


class TestSearchText:
    def fts(self, texts: list[str]) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:")
        db.execute(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')"
        )
        for text in texts:
            db.execute("INSERT INTO t(body) VALUES (?)", (search_text.segment(text),))
        return db

    def hits(self, db: sqlite3.Connection, query: str) -> int:
        match = search_text.fts_query(query)
        return int(db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (match,)).fetchone()[0])

    def test_unicode61_alone_misses_a_word_inside_a_sentence(self) -> None:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        db.execute("INSERT INTO t(body) VALUES ('我們重構了連線池的重試機制')")
        assert db.execute("SELECT count(*) FROM t WHERE t MATCH '連線'").fetchone()[0] == 0

    def test_cjk_words_inside_sentences(self) -> None:
        db = self.fts(["我們重構了連線池的重試機制", "使用者偏好繁體中文回覆"])
        assert self.hits(db, "連線") == 1  # two characters
        assert self.hits(db, "連線池") == 1  # three
        assert self.hits(db, "重試機制") == 1
        assert self.hits(db, "線重") == 0  # characters that are not next to each other
        assert self.hits(db, "中文 偏好") == 1  # every word, in any order

    def test_mixed_chinese_and_english(self) -> None:
        db = self.fts(["改用pygit2實作refs的讀寫", "Connection pooling with retries"])
        assert self.hits(db, "pygit2實作") == 1
        assert self.hits(db, "refs的") == 1
        assert self.hits(db, "connections") == 1  # porter stemming
        assert self.hits(db, "ＰＹＧＩＴ２") == 1  # full-width letters read as ASCII
        assert self.hits(db, "pool*") == 1

    def test_query_syntax_is_not_injected(self) -> None:
        db = self.fts(["a or b", "a b"])
        assert search_text.fts_query('a" OR "b') == '"a""" "OR" """b"'
        assert self.hits(db, 'a" OR "b') == 1  # OR is a word here, not an operator
        assert self.hits(db, "NEAR(a b) *") == 0  # words, not syntax: no error, no match
        assert search_text.fts_query("，。 ...") == ""

    def test_snippets_come_back_as_written(self) -> None:
        segmented = search_text.segment("重構，連線池")
        assert segmented != "重構，連線池" and search_text.unsegment(segmented) == "重構，連線池"

    # Both ends of every CJK range and the characters just outside, astral ones, full-width
    # letters, the separator itself, a decomposed accent.
    EDGES = "a\u2e7f\u2e80\u2fdf\u2fe0\u30ff\u3100\u318f\u3190\u4e00\u9fff\ua000\uac00\ud7af"
    EDGES += "\ud7b0\U0001ffff\U00020000\U0003134f\U00031350ＡＰＩ１\x1fe\u0301 x"

    @given(st.text(max_size=80))
    def test_any_short_text_segments_as_the_compiled_class_would(self, text: str) -> None:
        cjk = re.compile(search_text._CJK_CLASS)
        long = search_text.normalize(text + " " * search_text.SHORT)  # the compiled path
        assert search_text.segment(text) == search_text.SEPARATOR.join(
            cjk.split(search_text.normalize(text))
        )
        assert long.startswith(search_text.normalize(text))

    @pytest.mark.parametrize("text", [EDGES, "連線池 pool", "ＡＰＩ", "plain ascii", "日本語の文"])
    def test_a_query_length_text_segments_as_the_indexed_one(self, text: str) -> None:
        # Short texts (a query) take a loop, long ones (a file) the compiled class: the same
        # tokens either way, or a query could never match what the index holds.
        wide = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\x1f]")
        cjk = re.compile(search_text._CJK_CLASS)

        def expected(value: str) -> str:
            value = unicodedata.normalize("NFC", value)
            value = wide.sub(lambda m: " " if m[0] == "\x1f" else chr(ord(m[0]) - 0xFEE0), value)
            return search_text.SEPARATOR.join(cjk.split(value))

        assert len(text) < search_text.SHORT
        assert search_text.segment(text) == expected(text)
        long = text * (search_text.SHORT // len(text) + 1)
        assert search_text.segment(long) == expected(long)
        assert search_text.normalize(long) == search_text.normalize(text) * (
            search_text.SHORT // len(text) + 1
        )

    def test_chunks_overlap_and_cut_at_lines(self) -> None:
        text = "\n".join(f"line {n:04d} " + "x" * 50 for n in range(200))
        pieces = search_text.chunks(text)
        assert len(pieces) > 5
        assert all(len(p) <= search_text.CHUNK_SIZE for p in pieces)
        assert all(p.startswith("line ") for p in pieces)  # cut at line starts
        for first, second in itertools.pairwise(pieces):
            assert second.split("\n")[0] in first  # they overlap
        assert search_text.chunks("short") == ["short"] and search_text.chunks("  ") == []


class TestCompaction:
    NOW = 1800000000.0

    def history(self, since: dict[str, int], **extra: object) -> History:
        base: dict[str, object] = {
            "line_since": since,
            "project_touched": {},
            "project_sessions": {},
            "recent_sessions": "",
            "horizon": int(self.NOW - 200 * DAY),
        }
        base.update(extra)
        return History(**base)  # type: ignore[arg-type]

    def test_old_unreferenced_entries_can_go(self) -> None:
        memory, _ = files.add_entry(files.MEMORY_TEMPLATE, "Environment", ["- old fact"])
        memory, _ = files.add_entry(memory, "Environment", ["- new fact"])
        memory, _ = files.add_entry(memory, "Environment", ["- quoted fact"])
        old = int(self.NOW - 100 * DAY)
        since = {"- old fact": old, "- new fact": int(self.NOW - DAY), "- quoted fact": old}
        found = compaction.plan(
            memory, {}, self.history(since, recent_sessions="we used the quoted fact"), self.NOW
        )
        assert [(c.kind, c.text) for c in found] == [("drop", "- old fact")]
        assert "100 days" in found[0].reason
        applied = compaction.apply(memory, {}, found)
        assert "- old fact" not in applied["MEMORY.md"] and "- new fact" in applied["MEMORY.md"]

    def test_project_detail_moves_to_its_file(self) -> None:
        memory, _ = files.add_entry(
            files.MEMORY_TEMPLATE, "Technical Knowledge", ["- gizmo uses rust"]
        )
        memory, _ = files.add_entry(memory, "Projects Overview", ["- gizmo: the parser"])
        projects = {"gizmo": files.project_template("gizmo")}
        now = int(self.NOW)
        found = compaction.plan(
            memory, projects, self.history({}, project_touched={"gizmo": now}), self.NOW
        )
        assert [(c.kind, c.text, c.target) for c in found] == [
            ("move", "- gizmo uses rust", "projects/gizmo.md")
        ]
        applied = compaction.apply(memory, projects, found)
        assert "gizmo uses rust" not in applied["MEMORY.md"]
        assert "## Context\n- gizmo uses rust" in applied["projects/gizmo.md"]

    def test_quiet_projects_get_archived(self) -> None:
        projects = {"old": files.project_template("old"), "busy": files.project_template("busy")}
        history = self.history(
            {},
            project_touched={"old": int(self.NOW - 70 * DAY), "busy": int(self.NOW - 70 * DAY)},
            project_sessions={"busy": int(self.NOW - 3 * DAY)},
        )
        found = compaction.plan(files.MEMORY_TEMPLATE, projects, history, self.NOW)
        assert [(c.kind, c.path) for c in found] == [("archive", "projects/old.md")]
        applied = compaction.apply(files.MEMORY_TEMPLATE, projects, found)
        assert applied["projects/old.md"].startswith("# [ARCHIVED] Project: old\n")
        again = compaction.plan(
            files.MEMORY_TEMPLATE, {"old": applied["projects/old.md"]}, history, self.NOW
        )
        assert again == []
