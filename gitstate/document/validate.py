"""The STATE.md rules (docs/format.md): every problem at once, each with its line number.

Rule for rule the peer validator (antigravity-state's state-check.mjs), in its order and, for
zh-TW, its words; plus line numbers, warnings for stray markers, and two deliberate exceptions:
indented sub-bullets under a key-data item belong to that item, and control characters are
refused (document/controls.py, docs/format.md).
"""

from __future__ import annotations

from collections import namedtuple

from gitstate.document import language as lang_mod
from gitstate.document.language import KEYS, Language
from gitstate.document.model import (
    BOM,
    MAX_BYTES,
    Outline,
    RawSection,
    escaped_marker,
    is_bullet,
    outline,
    parse_item,
)

LINE_LIMIT = 5
KEY_ITEM_LIMIT = 5
# The size-limit rules' codes: the rules a sync merge may break (and commit, Agy-Conflict), and
# that a patch may leave broken as long as it does not make them worse (docs/sync.md).
LIMIT_CODES = ("lines", "key_items")


# Type checkers take this as typing.TYPE_CHECKING (True); at run time `typing` stays unloaded:
# the stop guard validates STATE.md on every agent stop (see storage/layout.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

if TYPE_CHECKING:

    class _ProblemFields(NamedTuple):
        line: int | None
        message: str
        code: str  # stable identifier of the rule, e.g. "lines", "done_verify"
        section: str | None = None  # a KEYS entry when the problem belongs to one section
        found: int | None = None  # for a size limit: how many lines or items there are

else:
    _ProblemFields = namedtuple(
        "_ProblemFields",
        "line message code section found",
        defaults=(
            None,
            None,
        ),
    )


class Problem(_ProblemFields):
    __slots__ = ()

    def as_json(self) -> dict[str, object]:
        return {"line": self.line, "message": self.message, "code": self.code}


if TYPE_CHECKING:

    class _ReportFields(NamedTuple):
        language: str
        errors: tuple[Problem, ...]
        warnings: tuple[Problem, ...] = ()

else:
    _ReportFields = namedtuple("_ReportFields", "language errors warnings", defaults=((),))


class Report(_ReportFields):
    __slots__ = ()

    @property
    def valid(self) -> bool:
        return not self.errors

    def as_json(self) -> dict[str, object]:
        return {
            "valid": self.valid,
            "language": self.language,
            "errors": [p.as_json() for p in self.errors],
            "warnings": [p.as_json() for p in self.warnings],
        }


def decode(
    data: bytes, user: Language | None = None, size: int | None = None
) -> tuple[str | None, Report | None]:
    """Bytes to text, or a one-error report for a file too big, binary or not UTF-8, in the
    user's language (English when no user is given: such bytes tell no language).

    `size` is the whole file's size when `data` was read only up to just past the limit.
    """
    lang = user or lang_mod.EN
    if len(data) > MAX_BYTES:
        actual = max(size or 0, len(data))
        problem = Problem(None, lang.message("too_big", size=actual), "too_big")
        return None, Report(lang.code, (problem,))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Point at the line of the first bad byte, so the user can find it.
        return None, _not_text(lang, data.count(b"\n", 0, exc.start) + 1, "not_text")
    if "\x00" in text:
        return None, _not_text(lang, text.count("\n", 0, text.index("\x00")) + 1, "nul")
    return text, None


def _not_text(lang: Language, line: int, wording: str) -> Report:
    return Report(lang.code, (Problem(line, lang.message(wording), "not_text"),))


def check_bytes(data: bytes, user: Language | None = None, size: int | None = None) -> Report:
    """check_text of the bytes, or decode's one-error refusal. `user`: the language of the
    messages (docs/format.md, "Language"); without it, the document's own."""
    text, refusal = decode(data, user, size)
    if refusal is not None:
        return refusal
    assert text is not None
    return check_text(text, user)


def check_text(text: str, user: Language | None = None) -> Report:
    report = check_outline(outline(text), user)
    refused = _controls(user or lang_mod.by_code(report.language), text)
    if not refused:
        return report
    errors = sorted(report.errors + tuple(refused), key=lambda p: p.line or 0)
    return report._replace(errors=tuple(errors))


def _controls(lang: Language, text: str) -> list[Problem]:
    """Control characters, one error per line (docs/format.md): a terminal would obey them,
    so the text would show as something it is not. The peer accepts them; we do not."""
    text = strip_bom(text)
    # Every control is unprintable (Cc, or the bidi Cf): a text printable but for its line
    # ends and tabs has none, and need not load controls' three large patterns (the stop
    # guard validates on every agent stop).
    if text.replace("\r\n", "").replace("\n", "").replace("\t", "").isprintable():
        return []
    from gitstate.document import controls

    return [
        Problem(number, lang.message("control", char=controls.name(char)), "control")
        for number, char in controls.find(text)
    ]


def check_outline(out: Outline, user: Language | None = None) -> Report:
    """Every rule, each problem once. The document's language (ties and a text of no language
    go to `user`) sets what its headings, title and tokens must be; the messages are in `user`'s
    language, or with no user given in the document's (docs/format.md, "Language")."""
    lang = lang_mod.detect(
        out.title.text if out.title else None, [s.name for s in out.sections], user
    )
    say = _Messages(user or lang, lang)
    errors: list[Problem] = []
    warnings: list[Problem] = []

    if out.bom:
        errors.append(Problem(1, say("bom"), "bom"))
    # The BOM is reported on its own (the peer would call it a bad title); a title that is
    # wrong as well is still reported, so one run lists everything. A missing title belongs on
    # line 1.
    if out.title is None or lang.title_stamp(out.title.text) is None:
        title = say("title", title=lang.title("YYYY-MM-DD HH:mm"))
        errors.append(Problem(out.title.number if out.title else 1, title, "title"))

    names = [s.name for s in out.sections]
    if tuple(names) != lang.headings:
        separator = say.lang.list_separator
        errors.append(
            Problem(
                _first_misplaced(out, lang),
                say(
                    "sections",
                    expected=separator.join(lang.headings),
                    actual=separator.join(names) if names else say("none"),
                ),
                "sections",
            )
        )

    # Like the peer, the per-section rules run on every known section present, even when the
    # section list itself is wrong, so one run reports everything.
    for section in out.sections:
        if section.name not in lang.headings:
            continue
        key = KEYS[lang.headings.index(section.name)]
        errors.extend(_limits(say, key, section))
        if key == "done":
            errors.extend(_done_rules(say, section))
        elif key == "next_steps":
            errors.extend(_next_rules(say, section))
            warnings.extend(_escaped_markers(say, section))
        else:
            warnings.extend(_stray_markers(say, key, section))
    return Report(lang.code, tuple(errors), tuple(warnings))


class _Messages:
    """Messages in one language (`lang`) about a document in another (`doc`): a zh-TW sheet
    checked for an English user reads `"已完成" holds at most 5 lines, found 6`."""

    def __init__(self, lang: Language, doc: Language) -> None:
        self.lang = lang
        self.doc = doc

    def __call__(self, code: str, **fields: object) -> str:
        return self.lang.message(code, **fields)


def _first_misplaced(out: Outline, lang: Language) -> int:
    """The heading where the section list goes wrong; for sections missing at the end, the
    last line of the document (the missing ones belong after it)."""
    expected = lang.headings
    for i, section in enumerate(out.sections):
        if i >= len(expected) or section.name != expected[i]:
            return section.number
    numbers = [line.number for line in out.preamble]
    if out.title is not None:
        numbers.append(out.title.number)
    for section in out.sections:
        numbers.append(section.number)
        numbers.extend(line.number for line in section.lines)
    return max(numbers, default=1)


def key_items(section_lines: tuple[str, ...] | list[str]) -> list[int]:
    """Indexes of the lines that start a key-data item; deeper bullets belong to the item above."""
    starts: list[int] = []
    item_indent: int | None = None
    for i, line in enumerate(section_lines):
        if not is_bullet(line):
            continue
        indent = len(line) - len(line.lstrip())
        if item_indent is not None and indent > item_indent:
            continue
        starts.append(i)
        item_indent = indent
    return starts


def _limits(say: _Messages, key: str, section: RawSection) -> list[Problem]:
    name = section.name
    if key == "key_data":
        starts = key_items([line.text for line in section.lines])
        if len(starts) > KEY_ITEM_LIMIT:
            line = section.lines[starts[KEY_ITEM_LIMIT]].number
            return [
                Problem(
                    line,
                    say("key_items", name=name, count=len(starts)),
                    "key_items",
                    key,
                    len(starts),
                )
            ]
        return []
    if len(section.lines) > LINE_LIMIT:
        line = section.lines[LINE_LIMIT].number
        return [
            Problem(
                line,
                say("lines", name=name, count=len(section.lines)),
                "lines",
                key,
                len(section.lines),
            )
        ]
    return []


def _done_rules(say: _Messages, section: RawSection) -> list[Problem]:
    problems = []
    for line in section.lines:
        item = parse_item(line.text)
        if item is None or item.marker != "x":
            problems.append(
                Problem(
                    line.number,
                    say("done_item", name=section.name, line=line.text.strip()),
                    "done_item",
                    "done",
                )
            )
        elif say.doc.verify not in line.text:
            problems.append(
                Problem(
                    line.number,
                    say("done_verify", name=section.name, token=say.doc.verify, line=line.text),
                    "done_verify",
                    "done",
                )
            )
    return problems


def _next_rules(say: _Messages, section: RawSection) -> list[Problem]:
    problems = []
    in_progress: list[int] = []
    done_name = say.doc.heading("done")
    for line in section.lines:
        item = parse_item(line.text)
        if item is None:
            problems.append(
                Problem(
                    line.number,
                    say("next_item", name=section.name, line=line.text),
                    "next_item",
                    "next_steps",
                )
            )
        elif item.marker == "x":
            problems.append(
                Problem(
                    line.number,
                    say("next_x", name=section.name, done=done_name, line=line.text),
                    "next_x",
                    "next_steps",
                )
            )
        elif item.marker == "!" and say.doc.reason not in line.text:
            problems.append(
                Problem(
                    line.number,
                    say("blocked_reason", token=say.doc.reason, line=line.text),
                    "blocked_reason",
                    "next_steps",
                )
            )
        elif item.marker == ">":
            in_progress.append(line.number)
    if len(in_progress) > 1:
        problems.append(
            Problem(
                in_progress[1],
                say("in_progress", name=section.name, count=len(in_progress)),
                "in_progress",
                "next_steps",
            )
        )
    return problems


def _escaped_markers(say: _Messages, section: RawSection) -> list[Problem]:
    """`[&gt;]` is `[>]` as Gemini CLI shows it: read as `[>]`, fixed by the next save."""
    return [
        Problem(line.number, say("escaped_marker", line=line.text), "escaped_marker", "next_steps")
        for line in section.lines
        if escaped_marker(line.text)
    ]


def _stray_markers(say: _Messages, key: str, section: RawSection) -> list[Problem]:
    warnings = []
    for line in section.lines:
        item = parse_item(line.text)
        if item is not None:
            warnings.append(
                Problem(
                    line.number,
                    say(
                        "marker_outside",
                        name=section.name,
                        marker=item.marker,
                        next=say.doc.heading("next_steps"),
                        done=say.doc.heading("done"),
                        line=line.text.strip(),
                    ),
                    "marker_outside",
                    key,
                )
            )
    return warnings


def strip_bom(text: str) -> str:
    return text[1:] if text.startswith(BOM) else text


# The rules every document written to a ref keeps, merge results included: the ones a reader
# applies to the bytes before it parses anything (docs/format.md, "Limits"). A merge may break
# a line or item limit and is committed anyway (Agy-Conflict); it never breaks these.
BYTE_RULES = ("too_big", "not_text", "control")


def check_result(text: str, user: Language | None = None) -> Report:
    """A document about to be written (a patch result, a save, a merge), checked as its bytes
    will be read back: every rule of check_text, plus the byte rules `decode` applies to a file
    — at most MAX_BYTES as UTF-8, and UTF-8 at all (a lone surrogate from a JSON `\\ud800`
    escape or an undecodable argument cannot be encoded). Never raises."""
    report = check_text(text, user)
    lang = user or lang_mod.by_code(report.language)
    extra: list[Problem] = []
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        char = f"U+{ord(text[exc.start]):04X}"
        extra.append(Problem(line, lang.message("unencodable", char=char), "not_text"))
        size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        extra.append(Problem(None, lang.message("result_too_big", size=size), "too_big"))
    if not extra:
        return report
    errors = sorted(tuple(extra) + report.errors, key=lambda p: p.line or 0)
    return report._replace(errors=tuple(errors))
