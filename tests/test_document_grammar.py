"""document/model.py reads the item, bullet and heading grammar, and language.py the title's
time, with str methods instead of patterns (a saving agent hook loads no `re`: docs/hooks.md,
"Start-up cost"). Each function is checked here against the pattern it stands for, on generated
lines rich in what the grammar turns on, so the two cannot drift."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstate.document import model
from gitstate.document.language import LANGUAGES

# The patterns, as the code used them: the specification.
ITEM = re.compile(r"^\s*-\s\[( |>|!|x|&gt;)\]\s+(.*)$")
BULLET = re.compile(r"^\s*[-*]\s")
HEADING = re.compile(r"^## (.+)$")

# Whitespace of every kind str.isspace (and `\s`) knows, line breaks included; the markers'
# characters and look-alikes; letters, CJK, digits and the stamp's separators.
PIECES = [
    " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2028", "\u3000",
    "-", "*", "[", "]", ">", "!", "x", "X", "&gt;", "&gt", "&", "#", "## ", "# ",
    "a", "寫", "7", "٣", ":", "2026-01-02 03:04",
]  # fmt: skip
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
# Lines that start like an item or a heading, so the interesting branches are reached often.
WHITE = st.lists(st.sampled_from([" ", "\t", "\n", "\x0b", "\x85", "\u3000"]), max_size=3)
ITEMISH = st.builds(
    lambda lead, sep, marker, gap, rest: f"{lead}-{sep}[{marker}]{gap}{rest}",
    WHITE.map("".join),
    st.sampled_from([" ", "\t", "\n", "", "  ", "\u3000"]),
    st.sampled_from([" ", ">", "!", "x", "&gt;", "X", "", ">>", "&gt"]),
    st.sampled_from([" ", "", "\n", "  \n ", "\t", "\x85"]),
    st.one_of(TEXT, st.lists(st.sampled_from(["a", "\n", " ", "寫"]), max_size=5).map("".join)),
)
LINES = st.one_of(TEXT, ITEMISH, TEXT.map(lambda t: "## " + t))


@settings(max_examples=1500)
@given(LINES)
def test_item_parts_is_the_item_pattern(line: str) -> None:
    match = ITEM.match(line.rstrip())
    want = None if match is None else (match.group(1), match.group(2))
    assert model.item_parts(line) == want


@settings(max_examples=800)
@given(LINES)
def test_is_bullet_is_the_bullet_pattern(line: str) -> None:
    assert model.is_bullet(line) == (BULLET.match(line) is not None)


@settings(max_examples=800)
@given(LINES)
def test_heading_name_is_the_heading_pattern(line: str) -> None:
    match = HEADING.match(line)
    assert model.heading_name(line) == (None if match is None else match.group(1))


# Stamps built by the shape, each digit ASCII or another script's (the title wants ASCII), the
# separators now and then wrong; and random text.
SHAPED = st.lists(
    st.tuples(st.sampled_from(list("0123456789٣５")), st.sampled_from(["-", " ", ":", "x"])),
    min_size=16,
    max_size=16,
).map(
    lambda picks: "".join(
        d if shape == "9" else (shape if sep != "x" else sep)
        for (d, sep), shape in zip(picks, "9999-99-99 99:99", strict=True)
    )
)
STAMPS = st.one_of(
    st.just("2026-01-02 03:04"),
    SHAPED,
    st.lists(st.sampled_from(list("0123456789-: ٣x\n")), max_size=18).map("".join),
)


@settings(max_examples=800)
@given(st.sampled_from(sorted(LANGUAGES)), STAMPS, st.sampled_from(["", "\n", "\n\n", " "]))
def test_title_stamp_is_the_title_pattern(code: str, stamp: str, tail: str) -> None:
    lang = LANGUAGES[code]
    pattern = re.compile(
        "^" + re.escape(lang.title_prefix) + r"([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2})$"
    )
    for text in (lang.title_prefix + stamp + tail, stamp, "# " + stamp):
        match = pattern.match(text)
        assert lang.title_stamp(text) == (None if match is None else match.group(1))


def test_the_lines_that_matter_most() -> None:
    assert model.item_parts("  - [>] ship it  ") == (">", "ship it")
    assert model.item_parts("- [&gt;] ship it") == ("&gt;", "ship it")
    assert model.item_parts("- [x]ship") is None  # no space after the marker
    assert model.item_parts("-  [ ] two spaces") is None
    assert model.item_parts("- [X] upper") is None
    assert model.item_parts("- [ ]\n\nnext") == (" ", "next")  # `\s+` crosses line breaks
    assert model.item_parts("- [ ] a\nb") is None  # `.` does not
    assert model.is_bullet("  * item") and not model.is_bullet("-item")
    assert model.heading_name("## Goal") == "Goal" and model.heading_name("##Goal") is None
    assert model.heading_name("## x\n") == "x" and model.heading_name("## \n") is None
    en = LANGUAGES["en"]
    assert en.title_stamp(en.title("2026-12-02 18:30")) == "2026-12-02 18:30"
    assert en.title_stamp(en.title("2026-12-02 18:3")) is None
    assert en.title_stamp(en.title("２026-12-02 18:30")) is None  # ASCII digits only
