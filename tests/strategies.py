"""Hypothesis strategies for STATE.md: realistic lines (CJK, code, the format's own tokens) in
every language, whole Documents, valid Documents, and line-structured noise.

Shared by test_document.py and test_patch.py; pure, no repository.
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

from gitstate.document.language import KEYS, LANGUAGES, Language
from gitstate.document.model import Document

HEADING = re.compile(r"^## (.+)$")  # a section heading, as document/model.py:heading_name reads it

LANGS: tuple[Language, ...] = tuple(LANGUAGES.values())

# What agents really write: traditional and simplified Chinese, paths, commands, error text, and
# the characters the format itself gives meaning to (bars, colons, brackets, #, markers).
WORDS = (
    "重構",
    "連線池",
    "斷線重試",
    "资料库",
    "验证",
    "驗證",
    "原因",
    "錯誤訊息",
    "测试通过",
    "fix",
    "retry",
    "src/pool.ts",
    "tests/test_x.py",
    "#4412",
    "ECONNRESET:",
    "MAX_RETRIES=5",
    "｜",
    "：",
    "|",
    ":",
    "（",
    "）",
    "[>]",
    "[x]",
    "[ ]",
    "-",
    "*",
    "#",
    "`npm test`",
    "→",
    "✓",
    "200ms",
)

# Letters of several scripts, digits, ASCII and full-width punctuation, symbols; no whitespace, so
# words never carry leading or trailing blanks.
ALPHABET = (
    "abcxyzABCXYZ0189_.,;:!?'\"`/\\|#*-+=<>()[]{}@$%^&~"
    "重構連線池斷開錯誤訊息驗證原因资料库验证测试错误信息処理テストéßΩЖ"
    "｜：，。「」（）【】、・─—–…→✓🙂🚀"
)
word = st.sampled_from(WORDS) | st.text(ALPHABET, min_size=1, max_size=6)
# A run of words; never blank, never with leading or trailing whitespace.
fragment = st.lists(word, min_size=1, max_size=4).map(" ".join)
stamps = st.builds(
    "{:04d}-{:02d}-{:02d} {:02d}:{:02d}".format,
    st.integers(0, 9999),
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
    st.integers(0, 99),
)
languages = st.sampled_from(LANGS)


def _not_heading(line: str) -> bool:
    return HEADING.match(line) is None


def any_line(lang: Language) -> st.SearchStrategy[str]:
    """One body line of any shape a section may hold, valid there or not."""
    suffix = st.just("") | st.tuples(st.sampled_from((lang.verify, lang.reason)), fragment).map(
        "".join
    )
    item = st.builds(lambda m, f, s: f"- [{m}] {f}{s}", st.sampled_from(" >!x"), fragment, suffix)
    line = st.one_of(
        fragment,
        fragment.map(lambda f: "- " + f),
        item,
        item.map(lambda i: "  " + i),
        fragment.map(lambda f: "  - " + f),
        fragment.map(lambda f: "### " + f),
        fragment.map(lambda f: "# " + f),
    )
    return line.map(lambda x: x if _not_heading(x) else "x " + x)


@st.composite
def documents(draw: st.DrawFn, lang: Language | None = None) -> Document:
    """Any structurally sound Document (content rules not enforced)."""
    lang = lang or draw(languages)
    line = any_line(lang)
    bodies = tuple(tuple(draw(st.lists(line, max_size=6))) for _ in KEYS)
    preamble = tuple(line for line in draw(st.lists(fragment, max_size=2)) if _not_heading(line))
    return Document(lang.code, draw(stamps), bodies, preamble)


@st.composite
def valid_documents(draw: st.DrawFn, lang: Language | None = None) -> Document:
    """A Document every rule accepts."""
    lang = lang or draw(languages)
    free = st.lists(fragment.filter(_not_heading), max_size=5)
    bullets = st.lists(fragment.map(lambda f: "- " + f), max_size=5)
    done = st.lists(
        st.tuples(fragment, fragment).map(lambda p: f"- [x] {p[0]}{lang.verify}{p[1]}"),
        max_size=5,
    )
    key_item = st.tuples(
        fragment,
        st.lists(fragment.map(lambda f: "  " + f) | fragment.map(lambda f: "  - " + f), max_size=2),
    ).map(lambda p: ["- " + p[0], *p[1]])
    key_data = st.lists(key_item, max_size=5).map(lambda items: [x for i in items for x in i])
    step = st.tuples(st.sampled_from(" !"), fragment, fragment).map(
        lambda p: f"- [{p[0]}] {p[1]}" + (f"{lang.reason}{p[2]}" if p[0] == "!" else "")
    )
    steps = draw(st.lists(step, max_size=5))
    if draw(st.booleans()) and steps:
        at = draw(st.integers(0, len(steps) - 1))
        steps[at] = f"- [>] {draw(fragment)}"
    bodies = (
        tuple(draw(free)),
        tuple(draw(done)),
        tuple(draw(bullets)),
        tuple(draw(bullets)),
        tuple(draw(key_data)),
        tuple(draw(bullets)),
        tuple(steps),
    )
    return Document(lang.code, draw(stamps), bodies)


def titles() -> st.SearchStrategy[str]:
    return st.builds(lambda lang, stamp: lang.title(stamp), languages, stamps)


@st.composite
def structured_text(draw: st.DrawFn) -> str:
    """Text made of the format's building blocks in random order: titles, every language's
    headings, items, noise, blank lines; LF or CRLF; sometimes a BOM."""
    lang = draw(languages)
    headings = [h for each in LANGS for h in each.headings]
    block = st.one_of(
        titles(),
        st.sampled_from(headings).map(lambda h: "## " + h),
        st.sampled_from(headings).map(lambda h: "##" + h),
        any_line(lang),
        st.sampled_from(("", "   ", "\t", "##", "## ", "#", "# ", "- [ ]", "- [x]", "\u3000")),
        st.text(max_size=12),
    )
    # Mostly the right skeleton, shuffled a little, so that a good share of examples parse.
    skeleton = [lang.title(draw(stamps))] + [f"## {h}" for h in lang.headings]
    lines: list[str] = []
    for head in skeleton:
        if draw(st.integers(0, 9)) > 0:
            lines.append(head)
        lines.extend(draw(st.lists(block, max_size=4)))
    newline = draw(st.sampled_from(("\n", "\r\n")))
    bom = draw(st.sampled_from(("", "", "", "\ufeff")))
    return bom + newline.join(lines) + draw(st.sampled_from(("", newline)))
