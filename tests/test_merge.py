"""The three-way merge of states (docs/sync.md): rules, properties, determinism."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstate.document.language import EN, KEYS
from gitstate.document.merge import merge_documents, merge_lines
from gitstate.document.model import Document, parse, render, template

STAMP = "2026-02-03 04:05"


def doc(**sections: list[str]) -> Document:
    d = template(EN, "2026-01-01 00:00")
    for key, lines in sections.items():
        d = d.with_section(key, lines)
    return d


def merge(base: Document, ours: Document, theirs: Document, newer: bool = False):  # type: ignore[no-untyped-def]
    return merge_documents(base, ours, theirs, label="abc1234", stamp=STAMP, theirs_newer=newer)


class TestLines:
    def test_one_side_changed(self) -> None:
        assert merge_lines(["a"], ["a", "b"], ["a"], "x") == (["a", "b"], False)
        assert merge_lines(["a"], ["a"], ["a", "c"], "x") == (["a", "c"], False)

    def test_both_appended_keeps_both_ours_first(self) -> None:
        assert merge_lines(["a"], ["a", "b"], ["a", "c"], "x") == (["a", "b", "c"], False)

    def test_same_change_once(self) -> None:
        assert merge_lines(["a"], ["a", "b"], ["a", "b"], "x") == (["a", "b"], False)

    def test_different_edits_far_apart_both_taken(self) -> None:
        base = ["1", "2", "3", "4"]
        assert merge_lines(base, ["1x", "2", "3", "4"], ["1", "2", "3", "4y"], "x") == (
            ["1x", "2", "3", "4y"],
            False,
        )

    def test_true_conflict_keeps_both_marked(self) -> None:
        lines, conflict = merge_lines(["goal A"], ["goal B"], ["goal C"], "abc1234")
        assert conflict
        assert lines == ["goal B", "(sync conflict abc1234) goal C"]

    def test_removed_on_one_side_edited_on_the_other_keeps_the_edit(self) -> None:
        lines, conflict = merge_lines(["a", "b"], ["a"], ["a", "b2"], "x")
        assert "(sync conflict x) b2" in lines and conflict


class TestDocuments:
    def test_union_of_lists(self) -> None:
        base = doc(open_issues=["- one"])
        ours = doc(open_issues=["- one", "- two"])
        theirs = doc(open_issues=["- one", "- three"])
        merged = merge(base, ours, theirs)
        assert merged.document.section("open_issues") == ("- one", "- two", "- three")
        assert merged.clean and not merged.over_limit
        assert merged.document.stamp == STAMP

    def test_finished_on_one_side_blocked_on_the_other_ends_done(self) -> None:
        base = doc(next_steps=["- [>] ship", "- [ ] docs"])
        ours = doc(done=["- [x] ship | verified: ok"], next_steps=["- [ ] docs"])
        theirs = doc(next_steps=["- [!] ship | reason: waiting", "- [ ] docs"])
        merged = merge(base, ours, theirs)
        assert merged.document.section("done") == ("- [x] ship | verified: ok",)
        assert merged.document.section("next_steps") == ("- [ ] docs",)
        assert merged.clean
        merged = merge(base, theirs, ours)  # and the other way round
        assert merged.document.section("next_steps") == ("- [ ] docs",)
        assert merged.document.section("done") == ("- [x] ship | verified: ok",)

    def test_done_keeps_its_newest_five(self) -> None:
        base = doc(done=[f"- [x] d{i} | verified: ok" for i in range(3)])
        ours = doc(
            done=[*base.section("done"), "- [x] o1 | verified: ok", "- [x] o2 | verified: ok"]
        )
        theirs = doc(
            done=[*base.section("done"), "- [x] t1 | verified: ok", "- [x] t2 | verified: ok"]
        )
        done = merge(base, ours, theirs).document.section("done")
        assert len(done) == 5
        assert done[-4:] == (
            "- [x] o1 | verified: ok",
            "- [x] o2 | verified: ok",
            "- [x] t1 | verified: ok",
            "- [x] t2 | verified: ok",
        )

    def test_one_in_progress_the_newer_sides(self) -> None:
        base = doc(next_steps=["- [ ] a", "- [ ] b"])
        ours = doc(next_steps=["- [>] a", "- [ ] b"])
        theirs = doc(next_steps=["- [ ] a", "- [>] b"])
        steps = merge(base, ours, theirs, newer=True).document.section("next_steps")
        assert steps == ("- [ ] a", "- [>] b")
        steps = merge(base, ours, theirs, newer=False).document.section("next_steps")
        assert steps == ("- [>] a", "- [ ] b")

    def test_two_goals_conflict_visibly_with_a_step_to_resolve(self) -> None:
        base = doc(goal=["A"])
        merged = merge(base, doc(goal=["B"]), doc(goal=["C"]))
        assert merged.conflicts == ("goal",)
        assert merged.document.section("goal") == ("B", "(sync conflict abc1234) C")
        assert merged.document.section("next_steps")[-1].startswith(
            "- [!] resolve the sync conflict in Goal | reason: "
        )

    def test_over_the_limit_is_kept_and_named(self) -> None:
        base = doc(open_issues=["- 1", "- 2", "- 3"])
        ours = doc(open_issues=["- 1", "- 2", "- 3", "- o1", "- o2"])
        theirs = doc(open_issues=["- 1", "- 2", "- 3", "- t1"])
        merged = merge(base, ours, theirs)
        assert len(merged.document.section("open_issues")) == 6
        assert merged.over_limit == ("open_issues",)

    def test_deterministic(self) -> None:
        base, ours, theirs = doc(goal=["A"]), doc(goal=["B"]), doc(goal=["C"])
        assert merge(base, ours, theirs) == merge(base, ours, theirs)


# ---- properties ---------------------------------------------------------------------------

line = st.text(alphabet="abcxyz 任務", min_size=1, max_size=8).map(lambda s: s.strip() or "l")
items = st.lists(line.map(lambda s: f"- {s}"), max_size=5)
steps = st.lists(
    st.tuples(st.sampled_from([" ", "!"]), line).map(
        lambda t: f"- [{t[0]}] {t[1]}" + (" | reason: r" if t[0] == "!" else "")
    ),
    max_size=4,
    unique=True,
)
documents = st.builds(
    lambda goal, issues, failed, nxt: doc(
        goal=goal, open_issues=issues, failed_attempts=failed, next_steps=nxt
    ),
    st.lists(line, max_size=2),
    items,
    items,
    steps,
)


@settings(max_examples=150, deadline=None)
@given(documents, documents)
def test_merge_with_an_unchanged_side_is_the_changed_side(base: Document, x: Document) -> None:
    assert merge(base, x, base).document.sections == x.sections
    assert merge(base, base, x).document.sections == x.sections


@settings(max_examples=150, deadline=None)
@given(documents, documents)
def test_merge_of_equal_sides_is_that_side(base: Document, x: Document) -> None:
    assert merge(base, x, x).document.sections == x.sections


@settings(max_examples=200, deadline=None)
@given(documents, documents, documents)
def test_no_line_of_either_side_is_lost(base: Document, ours: Document, theirs: Document) -> None:
    merged = merge(base, ours, theirs).document
    for key in KEYS:
        if key in ("done", "next_steps"):
            continue  # moves across sections and the done limit are their own rules
        result = merged.section(key)
        for side in (ours, theirs):
            for text in set(side.section(key)) - set(base.section(key)):
                assert text in result or f"(sync conflict abc1234) {text}" in result, (key, text)


@settings(max_examples=100, deadline=None)
@given(documents, documents, documents)
def test_the_result_always_renders_and_parses(
    base: Document, ours: Document, theirs: Document
) -> None:
    merged = merge(base, ours, theirs).document
    assert parse(render(merged)) == merged


# ---- a view saved over a moved tip merges three ways (docs/sync.md) -----------------------


def foreign_snapshot(repo: Any, text: str) -> str:
    """A snapshot written by someone else (another machine, a sync): the view is not touched."""
    blob = repo.git("hash-object", "-w", "--stdin", input=text).strip()
    tree = repo.git("mktree", input=f"100644 blob {blob}\tSTATE.md\n").strip()
    tip = repo.ref()
    commit = repo.git(
        "commit-tree", tree, "-p", tip, "-m", "foreign\n\nAgy-Format: 1\nAgy-Phase: IDLE"
    ).strip()
    repo.git("update-ref", "refs/agy/state", commit, tip)
    return commit


def test_stale_view_edits_merge_with_the_tip(repo: Any, cli: Any) -> None:
    assert cli("patch", "--set", "goal=G", "--todo", "a", "--todo", "b").exit_code == 0
    mine = repo.view.read_text()
    foreign_snapshot(repo, mine.replace("## Open issues\n", "## Open issues\n- from the tip\n"))
    repo.view.write_text(mine.replace("## Tried and failed\n", "## Tried and failed\n- mine\n"))
    result = cli("save", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["merged"] is True
    saved = repo.git("show", "refs/agy/state:STATE.md")
    assert "- from the tip" in saved and "- mine" in saved
    assert repo.view.read_text() == saved


def test_stale_view_conflict_is_kept_visibly(repo: Any, cli: Any) -> None:
    cli("patch", "--set", "goal=Original", "--todo", "a")
    stale = repo.view.read_text()
    tip = foreign_snapshot(repo, stale.replace("Original", "Theirs"))
    repo.view.write_text(stale.replace("Original", "Mine"))
    result = cli("save")
    assert result.exit_code == 0, result.output
    saved = repo.git("show", "refs/agy/state:STATE.md")
    assert f"## Goal\nMine\n(sync conflict {tip[:7]}) Theirs\n" in saved
    assert "- [!] resolve the sync conflict in Goal | reason: " in saved


def test_over_the_limit_is_committed_flagged_and_can_only_shrink(repo: Any, cli: Any) -> None:
    cli("patch", "--todo", "a", *[x for i in range(3) for x in ("--add", f"open_issues=base {i}")])
    base = repo.view.read_text()
    foreign_snapshot(repo, base.replace("- base 2\n", "- base 2\n- tip 1\n- tip 2\n"))
    repo.view.write_text(base.replace("- base 2\n", "- base 2\n- mine\n"))
    # The merge holds six open issues: still saved (nothing lost), flagged Agy-Conflict.
    result = cli("patch", "--add", "failed_attempts=x")
    assert result.exit_code == 0, result.output
    trailers = repo.git("log", "-1", "--format=%(trailers)", "refs/agy/state")
    assert "Agy-Conflict: open_issues" in trailers
    check = cli("check", "--json")
    assert check.exit_code == 1
    assert "at most 5 lines, found 6" in check.stdout
    assert cli("patch", "--add", "open_issues=seventh").exit_code == 1  # may not grow
    assert cli("patch", "--remove", "open_issues=base 0").exit_code == 0  # may shrink
    assert cli("check").exit_code == 0
