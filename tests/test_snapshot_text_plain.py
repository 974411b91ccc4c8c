"""The commit-message and reflog helpers of storage/snapshot_text.py, which an agent hook's save
runs, are written with str methods instead of patterns (docs/hooks.md, "Start-up cost"). Each is
checked here against the pattern it replaced, on generated text, so the two cannot drift."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gitstate.storage import snapshot_text

# The patterns the code used before; kept here as the specification.
TRAILER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*): ?(.*)$")
CONTROLS = re.compile(r"[\x00-\x1f\x7f]")
IDENT_CRUD = re.compile(r"[<>\x00-\x1f\x7f]")
PLAIN_DATE = re.compile(r"^@?(\d+)(?:\s+([+-])(\d{2})(\d{2}))?$")


def by_pattern(message: str) -> dict[str, str]:
    paragraphs = [p for p in message.strip().split("\n\n") if p.strip()]
    if len(paragraphs) < 2:
        return {}
    found: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        match = TRAILER.match(line.strip())
        if match is None:
            return {}
        found[match.group(1)] = match.group(2).strip()
    return found


# Text rich in what the rules turn on: letters, digits, dashes, colons, spaces, line breaks of
# every kind splitlines knows, controls, angle brackets and non-ASCII letters and digits.
TRICKY = st.text(alphabet=st.sampled_from(list("aZk9-: \t\n\r\x0b\x0c\x1c\x85\u2028é١<>\x00\x7f")))
LINE = st.lists(
    st.one_of(
        TRICKY,
        st.builds(lambda k, v: f"{k}:{v}", TRICKY, TRICKY),
        st.builds(
            lambda k, v: f"{k}: {v}",
            st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,5}", fullmatch=True),
            TRICKY,
        ),
    ),
    max_size=4,
)


@settings(max_examples=400)
@given(st.text(max_size=10), LINE)
def test_trailers_as_the_pattern_read_them(subject: str, lines: list[str]) -> None:
    message = subject + "\n\n" + "\n".join(lines)
    assert snapshot_text.parse_trailers(message) == by_pattern(message)


def test_a_real_trailer_block_and_what_is_not_one() -> None:
    message = "save: goal\n\nAgy-Format: 1\nAgy-Sections:done\nX-9: a: b"
    assert snapshot_text.parse_trailers(message) == {
        "Agy-Format": "1",
        "Agy-Sections": "done",
        "X-9": "a: b",
    }
    for line in ("9x: no", "-x: no", "Ké: no", "a b: no", "no colon", ": empty key"):
        assert snapshot_text.parse_trailers(f"s\n\nA: 1\n{line}") == {}, line


@settings(max_examples=400)
@given(TRICKY, TRICKY)
def test_reflog_text_as_the_patterns_cleaned_it(name: str, reason: str) -> None:
    assert snapshot_text.reflog_reason(reason) == CONTROLS.sub(" ", reason)
    want_name = IDENT_CRUD.sub("", name).strip() or snapshot_text.DEFAULT_NAME
    want_email = IDENT_CRUD.sub("", reason).strip()
    assert snapshot_text.reflog_ident(name, reason, 7, -90) == f"{want_name} <{want_email}> 7 -0130"


def date_by_pattern(text: str) -> tuple[int, int] | None:
    match = PLAIN_DATE.match(text)
    if match is None:
        return None
    sign = -1 if match.group(2) == "-" else 1
    return int(match.group(1)), sign * (int(match.group(3) or 0) * 60 + int(match.group(4) or 0))


DATEISH = st.lists(st.sampled_from(list("@0179٣+- \t\n:Tx")), max_size=14).map("".join)
# Digits of several scripts (`\d` takes any decimal digit), every kind of whitespace.
DIGIT = st.sampled_from(list("0123456789٣७５"))
SPACE = st.text(st.sampled_from(list(" \t\n\x0b\x0c\x1c\x85\u3000")), max_size=3)
ZONED = st.builds(
    lambda at, secs, gap, sign, zone, tail: f"{at}{secs}{gap}{sign}{zone}{tail}",
    st.sampled_from(["", "@", "@@"]),
    st.lists(DIGIT, min_size=0, max_size=4).map("".join),
    SPACE,
    st.sampled_from(["+", "-", "", "±"]),
    st.lists(DIGIT, min_size=3, max_size=5).map("".join),
    st.sampled_from(["", "\n", "\n\n", " "]),
)


@settings(max_examples=1500)
@given(st.one_of(DATEISH, ZONED))
def test_plain_dates_as_the_pattern_read_them(text: str) -> None:
    assert snapshot_text.parse_plain_date(text) == date_by_pattern(text)


def test_git_dates_still_parse() -> None:
    assert snapshot_text.parse_plain_date("@1700000000 +0530") == (1700000000, 330)
    assert snapshot_text.parse_plain_date("1700000000") == (1700000000, 0)
    assert snapshot_text.parse_plain_date("1700000000 -0100") == (1700000000, -60)
    assert snapshot_text.parse_plain_date("2026-01-02") is None
    assert snapshot_text.parse_plain_date("12 +01") is None
    assert snapshot_text.parse_plain_date("12+0100") is None  # the zone needs a space
