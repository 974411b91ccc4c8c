"""Random input through the document layer (issue 12): bytes through check and parse, random
JSON through from_json, random op lists through apply. Pure, no repository.

The properties: nothing but the documented typed errors ever comes out (UsageError for a
malformed patch, PatchError for one that cannot apply, InvalidDocument for a result that breaks
the rules); whatever apply returns renders to a document that a reader takes back — within the
byte limit, UTF-8, no control character, parse∘render stable; a valid document stays valid.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import documents, fragment, valid_documents

from gitstate.document.language import KEYS, LANGUAGES, Language
from gitstate.document.model import MAX_BYTES, Document, parse, render, template
from gitstate.document.patch import (
    AddLine,
    AddStep,
    BlockStep,
    FinishStep,
    Op,
    Patch,
    PatchError,
    PauseStep,
    RemoveLine,
    SetSection,
    StartStep,
    apply,
    from_json,
)
from gitstate.document.validate import BYTE_RULES, check_bytes, check_result, decode
from gitstate.errors import InvalidDocument, UsageError

TYPED = (UsageError, PatchError, InvalidDocument)
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every code point, lone surrogates, controls and bidi overrides included.
any_char = st.characters(exclude_categories=())
nasty = st.sampled_from(
    ("\x00", "\x1b[31m", "\x08", "\r", "\r\n", "\n", "\u202e", "\ud800", "\udcff", "\ufeff",
     "\x85", "\u2028", "## ", "# ", "- [>] ", "- [x] ", "｜驗證：", " | reason: ", "\t")
)  # fmt: skip
small_texts = st.one_of(
    fragment, st.text(any_char, max_size=30), st.lists(fragment | nasty, max_size=6).map("".join)
)
# Now and then one big enough to cross the 1 MiB limit alone or with the document around it.
big_texts = st.sampled_from((600_000, MAX_BYTES - 300, MAX_BYTES + 1)).map(lambda n: "x" * n)
texts = st.integers(0, 15).flatmap(lambda n: big_texts if n == 0 else small_texts)
sections = st.sampled_from(KEYS)
step_refs = st.one_of(st.integers(-2, 8), fragment, st.text(any_char, max_size=8))
ops: st.SearchStrategy[Op] = st.one_of(
    st.builds(SetSection, sections, texts),
    st.builds(AddLine, sections, texts),
    st.builds(RemoveLine, sections, texts),
    st.builds(StartStep, step_refs),
    st.builds(PauseStep, step_refs),
    st.builds(FinishStep, step_refs, texts),
    st.builds(BlockStep, step_refs, texts),
    st.builds(AddStep, texts),
)
op_lists = st.lists(ops, min_size=1, max_size=6)


def assert_storable(doc: Document) -> None:
    """What apply returned is a document every reader takes back as it was written."""
    text = render(doc)
    data = text.encode("utf-8")  # no lone surrogate
    assert len(data) <= MAX_BYTES
    report = check_result(text)
    assert not [p for p in report.errors if p.code in BYTE_RULES], report.errors
    back, refusal = decode(data)
    assert refusal is None and back == text
    assert parse(text) == doc  # parse∘render is the identity on what apply returns
    assert render(parse(text)) == text


def apply_typed(doc: Document, patch: Patch) -> Document | None:
    try:
        return apply(doc, patch).document
    except TYPED:
        return None


class TestBytes:
    @FUZZ
    @given(st.binary(max_size=400) | st.text(any_char, max_size=200).map(
        lambda t: t.encode("utf-8", "surrogatepass")
    ))  # fmt: skip
    def test_random_bytes_are_checked_never_raise(self, data: bytes) -> None:
        report = check_bytes(data)
        text, refusal = decode(data)
        if refusal is not None:
            assert not refusal.valid
            return
        assert text is not None
        try:
            doc = parse(text)
        except InvalidDocument:
            assert not report.valid
            return
        if report.valid:
            assert_storable(doc)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(any_char, max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
op_objects = st.fixed_dictionaries(
    {"op": st.sampled_from(("set", "add", "remove", "start", "pause", "done", "block", "todo"))},
    optional={
        "section": st.sampled_from(KEYS) | json_values,
        "text": texts | json_values,
        "match": texts | json_values,
        "step": step_refs | json_values,
        "verify": texts | json_values,
        "reason": texts | json_values,
    },
)
patch_json = st.one_of(
    json_values,
    st.lists(op_objects | json_values, max_size=4),
    st.builds(lambda ops: {"ops": ops}, st.lists(op_objects, max_size=5)),
)


def dumps(value: Any) -> str:
    # ensure_ascii writes a lone surrogate as its \\ud800 escape, as a hostile file would
    return json.dumps(value, ensure_ascii=True)


class TestPatchJson:
    @FUZZ
    @given(st.binary(max_size=300).map(lambda b: b.decode("utf-8", "surrogateescape")))
    def test_random_text_is_a_patch_or_a_usage_error(self, data: str) -> None:
        with contextlib.suppress(UsageError):
            from_json(data)

    @FUZZ
    @given(patch_json, valid_documents())
    def test_random_json_patches_apply_or_fail_typed(self, value: Any, doc: Document) -> None:
        try:
            patch = from_json(dumps(value))
        except UsageError:
            return
        result = apply_typed(doc, patch)
        if result is not None:
            assert_storable(result)
            assert check_result(render(result)).valid

    def test_deep_nesting_a_lone_surrogate_and_big_numbers_are_usage_errors(self) -> None:
        for data in (
            "[" * 100_000,
            '{"ops": ' + "[" * 100_000 + "]" * 100_000 + "}",
            '{"ops": [{"op": "add", "section": "goal", "text": "\\ud800"}]}',
            '{"ops": [{"op": "start", "step": "\\udfff"}]}',
            '{"ops": [{"op": "start", "step": ' + "9" * 5000 + "}]}",
            '{"ops": [{"op": "start", "step": 1e999}]}',
            '{"ops": [{"op": "add", "section": "goal", "text": "a\x00"}]}',
            "\x00",
            "5",
            '"ops"',
            "null",
            '{"ops": {"op": "todo"}}',
            '{"ops": [{"op": "todo", "text": ["a"]}]}',
            '{"ops": [{"op": ' + "[" * 50_000 + "]" * 50_000 + "}]}",
            '{"ops": [' + ", ".join(['{"op": "todo", "text": "a"}'] * 101) + "]}",
        ):
            try:
                from_json(data)
            except UsageError as exc:
                assert "\n" not in exc.message and len(exc.message) < 200
            else:
                raise AssertionError(f"accepted {data[:60]!r}")


class TestOps:
    @FUZZ
    @given(documents(), op_lists)
    def test_any_ops_on_any_document(self, doc: Document, patch_ops: list[Op]) -> None:
        result = apply_typed(doc, Patch(tuple(patch_ops)))
        if result is not None:
            assert_storable(result)

    @FUZZ
    @given(valid_documents(), op_lists)
    def test_a_valid_document_stays_valid(self, doc: Document, patch_ops: list[Op]) -> None:
        result = apply_typed(doc, Patch(tuple(patch_ops)))
        if result is not None:
            assert_storable(result)
            assert check_result(render(result)).valid

    @pytest.mark.parametrize("lang", LANGUAGES.values(), ids=LANGUAGES.keys())
    @pytest.mark.parametrize("spare", [-1, 0, 400])
    def test_a_result_over_the_byte_limit_is_refused(self, lang: Language, spare: int) -> None:
        """A goal within the patch's text bound whose document is not: InvalidDocument naming
        the size; no result over 1 MiB ever comes back."""
        doc = template(lang, "2026-01-02 03:04").with_section("key_data", ["- k " + "y" * 600_000])
        room = MAX_BYTES - len(render(doc).encode()) - 1  # the goal line and its newline
        goal = "x" * (room - spare)
        try:
            result = apply(doc, Patch((SetSection("goal", goal),))).document
        except InvalidDocument as exc:
            assert spare < 0
            assert [p.code for p in exc.problems] == ["too_big"]
        else:
            assert spare >= 0
            assert_storable(result)
