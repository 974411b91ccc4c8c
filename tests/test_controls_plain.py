"""document/controls.py answers a text without controls with a set test and compiles its
patterns only for a text that may hold one (a search's output, a clean document: no `re`). The
answers are checked here against the patterns the module used to compile at import."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstate.document import controls

_CONTROL = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
CONTROL_RE = re.compile(f"\r(?!\n)|[{_CONTROL}]")
PRINT_RE = re.compile(f"\r(?!\n)|[{_CONTROL}\udc80-\udcff]")
JSON_RAW_RE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

EDGES = list("a 寫\t\n\r\x00\x08\x09\x0a\x0b\x0c\x0d\x0e\x1f\x20\x7e\x7f\x9f\xa0")
EDGES += ["\u2029", "\u202a", "\u202e", "\u202f", "\u2065", "\u2066", "\u2069", "\u206a"]
EDGES += ["\udc7f", "\udc80", "\udcff", "\udd00", "\r\n", "\x1b[31m"]
TEXT = st.lists(st.sampled_from(EDGES), max_size=10).map("".join)


@settings(max_examples=1500)
@given(TEXT)
def test_as_the_patterns_answered(text: str) -> None:
    found = CONTROL_RE.search(text)
    assert controls.first(text) == (found.group(0)[0] if found else None)
    assert controls.escape(text) == PRINT_RE.sub(
        controls._visible, text
    )  # how a control is shown: unchanged
    raw = JSON_RAW_RE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    assert controls.escape_json(text) == raw
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return  # a surrogate no undecodable byte stands for: no bytes to show
    want = data if PRINT_RE.search(text) is None else controls.escape(text).encode()
    assert controls.escape_bytes(data) == want


def test_a_plain_text_compiles_nothing() -> None:
    controls._compiled.clear()
    for text in ("plain text 寫\twith tabs\nand lines\r\n", "«token» bucket"):
        assert controls.escape(text) == text and controls.first(text) is None
        assert controls.escape_json(text) == text
    assert controls._compiled == {}
    assert controls.first("bell\x07") == "\x07" and controls._compiled
