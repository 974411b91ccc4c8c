"""STATE.md as a value: outline (what a reader sees, with line numbers), Document, parse, render.

Pure: no git, no file I/O. `parse` accepts any text whose title and seven headings are right;
content rules (sizes, markers) are `validate`'s business, so an over-long merged document can
still be loaded, shown and shrunk.
"""

from __future__ import annotations

from collections import namedtuple

from gitstate.document import language as lang_mod
from gitstate.document.language import KEYS, Language

MAX_BYTES = 1024 * 1024
BOM = "\ufeff"

# The peer's item grammar, verbatim: a hyphen bullet, one whitespace, a lower-case marker, text;
# plus `[&gt;]`, which is `[>]` as Gemini CLI shows hook context (it escapes `<` and `>`), so an
# agent copying a step from it may write it back (docs/format.md, "Escaped markers").
#
# The grammar is read with str methods, not patterns: a stop guard that saves parses the view,
# and importing `re` would be a quarter of what that hook costs (docs/hooks.md, "Start-up
# cost"). Each function stands for the pattern beside it, with `\s` as str.isspace and `.` as
# anything but a newline (tests/test_document_grammar.py compares them on generated lines):
#   item_parts   ^\s*-\s\[( |>|!|x|&gt;)\]\s+(.*)$   on line.rstrip()
#   is_bullet    ^\s*[-*]\s
#   heading_name ^## (.+)$
MARKERS = (" ", ">", "!", "x", "&gt;")
ESCAPED_IN_PROGRESS = "[&gt;]"


def item_parts(line: str) -> tuple[str, str] | None:
    """(marker as written, text) of a `- [m] text` line, or None."""
    body = line.strip()
    if body[:1] != "-" or not body[1:2].isspace() or body[2:3] != "[":
        return None
    for marker in MARKERS:
        end = 3 + len(marker)
        if body[3:end] == marker and body[end : end + 1] == "]":
            rest = body[end + 1 :]
            text = rest.lstrip()
            if text == rest or "\n" in text:  # no whitespace after `]`, or a line break inside
                return None
            return marker, text
    return None


def is_bullet(line: str) -> bool:
    """A `- ` or `* ` list line (any indent, any whitespace after the bullet)."""
    body = line.lstrip()
    return body[:1] in ("-", "*") and body[1:2].isspace()


def heading_name(line: str) -> str | None:
    """What follows `## ` on a heading line, or None."""
    if not line.startswith("## "):
        return None
    name = line[3:-1] if line.endswith("\n") else line[3:]  # `$` matches before a last \n
    return name if name and "\n" not in name else None


# Type checkers take this as typing.TYPE_CHECKING (True); at run time `typing` stays unloaded:
# the stop guard validates STATE.md on every agent stop (see storage/layout.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

if TYPE_CHECKING:

    class _LineFields(NamedTuple):
        number: int  # 1-based, in the source text
        text: str  # trailing whitespace already stripped

else:
    _LineFields = namedtuple("_LineFields", "number text")


class Line(_LineFields):
    __slots__ = ()


if TYPE_CHECKING:

    class _RawSectionFields(NamedTuple):
        name: str
        number: int  # line of the `## ` heading
        lines: tuple[Line, ...]  # non-blank lines only

else:
    _RawSectionFields = namedtuple("_RawSectionFields", "name number lines")


class RawSection(_RawSectionFields):
    __slots__ = ()


if TYPE_CHECKING:

    class _OutlineFields(NamedTuple):
        title: Line | None
        preamble: tuple[Line, ...]
        sections: tuple[RawSection, ...]
        bom: bool

else:
    _OutlineFields = namedtuple("_OutlineFields", "title preamble sections bom")


class Outline(_OutlineFields):
    """A text cut the way the peer validator cuts it; never fails."""

    __slots__ = ()

    @property
    def language(self) -> Language:
        return lang_mod.detect(
            self.title.text if self.title else None, [s.name for s in self.sections]
        )


def outline(text: str) -> Outline:
    """Split text into title, preamble and sections, keeping line numbers."""
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    title: Line | None = None
    preamble: list[Line] = []
    sections: list[RawSection] = []
    current: tuple[str, int, list[Line]] | None = None
    # The peer splits on \r?\n and strips trailing whitespace from every line.
    # The "\r" of a "\r\n" goes with the rest of the trailing whitespace.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        if title is None and line.startswith("# "):
            title = Line(number, line)
            continue
        heading = heading_name(line)
        if heading is not None:
            if current is not None:
                sections.append(RawSection(current[0], current[1], tuple(current[2])))
            current = (heading.strip(), number, [])
            continue
        if not line.strip():
            continue
        if current is None:
            preamble.append(Line(number, line))
        else:
            current[2].append(Line(number, line))
    if current is not None:
        sections.append(RawSection(current[0], current[1], tuple(current[2])))
    return Outline(title, tuple(preamble), tuple(sections), bom)


if TYPE_CHECKING:

    class _ItemFields(NamedTuple):
        indent: str
        marker: str  # " ", ">", "!" or "x"
        text: str

else:
    _ItemFields = namedtuple("_ItemFields", "indent marker text")


class Item(_ItemFields):
    """One `- [m] text` line."""

    __slots__ = ()

    def render(self) -> str:
        return f"{self.indent}- [{self.marker}] {self.text}"


def parse_item(line: str) -> Item | None:
    parts = item_parts(line)
    if parts is None:
        return None
    indent = line[: len(line) - len(line.lstrip())]
    marker, text = parts
    return Item(indent, ">" if marker == "&gt;" else marker, text)


def escaped_marker(line: str) -> bool:
    """A `- [&gt;] …` item: `[>]` with Gemini CLI's escaping, read as `[>]`."""
    if ESCAPED_IN_PROGRESS not in line:
        return False
    parts = item_parts(line)
    return parts is not None and parts[0] == "&gt;"


def _unescaped(lines: tuple[str, ...]) -> tuple[str, ...]:
    """Next steps with `[&gt;]` written back as `[>]`: what every save writes."""
    if not any(ESCAPED_IN_PROGRESS in line for line in lines):
        return lines
    out = []
    for line in lines:
        item = parse_item(line) if escaped_marker(line) else None
        out.append(item.render() if item is not None else line)
    return tuple(out)


def cut_suffix(text: str, token: str) -> tuple[str, str | None]:
    """Split `body<token>value` at the first token; (text, None) when the token is absent."""
    at = text.find(token)
    if at < 0:
        return text, None
    return text[:at], text[at + len(token) :]


def step_text(line: str, lang: Language) -> str:
    """A step's words: the text after the marker, without its reason or verification."""
    item = parse_item(line)
    text = item.text if item is not None else line.strip()
    text, _ = cut_suffix(text, lang.reason)
    text, _ = cut_suffix(text, lang.verify)
    return text.strip()


if TYPE_CHECKING:

    class _DocumentFields(NamedTuple):
        language: str  # a code of gitstate.document.language.LANGUAGES
        stamp: str  # "YYYY-MM-DD HH:mm", as in the title
        sections: tuple[tuple[str, ...], ...]  # KEYS order; non-blank, right-stripped lines
        preamble: tuple[str, ...] = ()

else:
    _DocumentFields = namedtuple(
        "_DocumentFields", "language stamp sections preamble", defaults=((),)
    )


class Document(_DocumentFields):
    """A structurally sound STATE.md: a language, a time stamp and seven section bodies."""

    __slots__ = ()

    @property
    def lang(self) -> Language:
        return lang_mod.LANGUAGES[self.language]

    def section(self, key: str) -> tuple[str, ...]:
        return self.sections[KEYS.index(key)]

    def with_section(self, key: str, lines: tuple[str, ...] | list[str]) -> Document:
        clean = tuple(line.rstrip() for line in lines if line.strip())
        bodies = list(self.sections)
        bodies[KEYS.index(key)] = clean
        return self._replace(sections=tuple(bodies))

    def with_stamp(self, stamp: str) -> Document:
        return self._replace(stamp=stamp)

    def changed_keys(self, other: Document) -> tuple[str, ...]:
        """Section keys whose bodies differ between two documents (the title never counts)."""
        return tuple(k for i, k in enumerate(KEYS) if self.sections[i] != other.sections[i])

    def same_content(self, other: Document) -> bool:
        return (
            self.sections == other.sections
            and self.preamble == other.preamble
            and self.language == other.language
        )

    def steps(self) -> tuple[str, ...]:
        return self.section("next_steps")

    def in_progress(self) -> tuple[str, ...]:
        """The text of every `[>]` step, markers stripped."""
        found = []
        for line in self.steps():
            item = parse_item(line)
            if item is not None and item.marker == ">":
                found.append(item.text.strip())
        return tuple(found)


def template(language: Language, stamp: str) -> Document:
    return Document(language.code, stamp, tuple(() for _ in KEYS))


def render(doc: Document) -> str:
    """The canonical text: title, preamble, seven sections, one blank line between blocks."""
    lang = doc.lang
    blocks = [lang.title(doc.stamp)]
    if doc.preamble:
        blocks.append("\n".join(doc.preamble))
    for heading, body in zip(lang.headings, doc.sections, strict=True):
        blocks.append("\n".join((f"## {heading}", *body)))
    return "\n\n".join(blocks) + "\n"


def structure_ok(out: Outline) -> bool:
    """True when the title and the seven headings are as the document's language wants."""
    lang = out.language
    if out.bom or out.title is None or lang.title_stamp(out.title.text) is None:
        return False
    return tuple(s.name for s in out.sections) == lang.headings


def parse(text: str) -> Document:
    """A Document from text; raises InvalidDocument when the title or the headings are wrong."""
    out = outline(text)
    if not structure_ok(out):
        # Callers that want every problem listed run validate.check_text first. Imported here:
        # the agent hooks parse only documents already found valid.
        from gitstate.errors import InvalidDocument

        raise InvalidDocument(
            "STATE.md is not a valid state document", hint="run: git agy-state check"
        )
    lang = out.language
    assert out.title is not None
    stamp = lang.title_stamp(out.title.text)
    assert stamp is not None
    return Document(
        language=lang.code,
        stamp=stamp,
        sections=tuple(
            _unescaped(body) if key == "next_steps" else body
            for key, body in zip(
                KEYS, (tuple(line.text for line in s.lines) for s in out.sections), strict=True
            )
        ),
        preamble=tuple(line.text for line in out.preamble),
    )
