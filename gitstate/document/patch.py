"""The state patch ΔΣ: small typed operations applied whole to a Document, or not at all.

Step numbers refer to next_steps as it was before the patch (so `--done 1 --start 2` means what
it says); a step can also be named by a unique prefix of its text. The result must validate,
otherwise PatchError and the input document is untouched (values are immutable anyway).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from gitstate.document import language as lang_mod
from gitstate.document.language import KEYS, Language
from gitstate.document.model import (
    BULLET_RE,
    MAX_BYTES,
    Document,
    Item,
    cut_suffix,
    parse_item,
    render,
    step_text,
)
from gitstate.document.validate import (
    LIMIT_CODES,
    LINE_LIMIT,
    Problem,
    check_result,
    check_text,
)
from gitstate.errors import AgyError, InvalidDocument, UsageError

StepRef = int | str

# Bounds on a patch (docs/format.md, "Patches"): a patch is a few small ops. Without them a
# crafted patch costs time quadratic in its size (each op may scan every line).
MAX_OPS = 100
MAX_TEXT = MAX_BYTES  # the texts of one patch together, in UTF-8 bytes: they must fit a document
MAX_STEPS = 1000  # steps a step op searches (a valid next_steps holds 5)


class PatchError(AgyError):
    """The patch cannot apply (unknown step, ambiguous match, …): exit 1, nothing changes."""


@dataclass(frozen=True)
class SetSection:
    section: str
    text: str


@dataclass(frozen=True)
class AddLine:
    section: str
    text: str


@dataclass(frozen=True)
class RemoveLine:
    section: str
    match: str


@dataclass(frozen=True)
class StartStep:
    step: StepRef


@dataclass(frozen=True)
class PauseStep:
    """Put a step back to `[ ]` (the stop guard's second way out); drops a blocking reason."""

    step: StepRef


@dataclass(frozen=True)
class FinishStep:
    step: StepRef
    verify: str


@dataclass(frozen=True)
class BlockStep:
    step: StepRef
    reason: str


@dataclass(frozen=True)
class AddStep:
    text: str


Op = SetSection | AddLine | RemoveLine | StartStep | PauseStep | FinishStep | BlockStep | AddStep


@dataclass(frozen=True)
class Patch:
    ops: tuple[Op, ...]

    def describe(self) -> str:
        """A one-line summary for the snapshot's commit message."""
        return "; ".join(_describe(op) for op in self.ops)


@dataclass(frozen=True)
class Applied:
    document: Document
    changed: tuple[str, ...]  # section keys that changed
    notices: tuple[str, ...] = field(default=())  # things the user should hear (a dropped line)
    summary: str = ""  # what the patch did, with step texts: the snapshot's first line


def section_key(name: str) -> str:
    """A section key from a key (`next_steps`) or any language's heading (`下一步`, `Next steps`)."""
    wanted = name.strip()
    if wanted in KEYS:
        return wanted
    folded = wanted.casefold().replace("-", "_").replace(" ", "_")
    if folded in KEYS:
        return folded
    for lang in lang_mod.LANGUAGES.values():
        for key, heading in zip(KEYS, lang.headings, strict=True):
            if heading.casefold() == wanted.casefold():
                return key
    raise UsageError(
        f"unknown section {_shown(name)}",
        hint="sections: " + ", ".join(KEYS),
    )


def _shown(value: object, width: int = 40) -> str:
    """A value in an error message: its repr, cut to one short line (a patch may hold a
    megabyte-long string or a deeply nested list where a step belongs)."""
    try:
        text = repr(value)
    except RecursionError:
        text = f"a deeply nested {type(value).__name__}"
    return text if len(text) <= width else text[: width - 1] + "…"


def step_ref(value: object) -> StepRef:
    """A step as given by a user: a number from 1, or text naming the step."""
    if isinstance(value, bool):
        raise UsageError(f"a step is a number from 1 or the step's text, not {_shown(value)}")
    if isinstance(value, int):
        if value < 1:
            raise UsageError(f"steps count from 1, not {value}")
        return value
    if isinstance(value, str) and value.strip():
        text = value.strip()
        # isdecimal, not isdigit: int() refuses digits such as "¹" that isdigit accepts.
        if not text.isdecimal():
            return text
        try:
            number = int(text)
        except ValueError:  # past int()'s digit limit; no document has that many steps
            raise UsageError(f"there is no step {text[:20]}…") from None
        return step_ref(number)
    raise UsageError(f"a step is a number from 1 or the step's text, not {_shown(value)}")


# ---- building patches --------------------------------------------------------------------


def from_json(data: str) -> Patch:
    """A Patch from `{"ops": [...]}` (or a bare list of ops); UsageError on any malformed op.

    Whatever the text holds, the only error is UsageError (exit 64): deep nesting, integers
    past Python's digit limit, lone surrogates, wrong types (docs/format.md, "Patches")."""
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"patch is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise UsageError(
            "patch is not a patch: its JSON is nested too deeply (a patch is "
            '{"ops": [{...}, ...]}, three levels)'
        ) from None
    except ValueError as exc:  # an integer past int()'s digit limit, a lone surrogate in bytes
        raise UsageError(f"patch is not valid JSON: {_short(str(exc), 80)}") from None
    ops = doc.get("ops") if isinstance(doc, dict) else doc
    if not isinstance(ops, list) or not ops:
        raise UsageError('a patch is {"ops": [...]} with at least one op')
    if len(ops) > MAX_OPS:
        raise UsageError(f"a patch holds at most {MAX_OPS} ops, not {len(ops)}")
    return Patch(tuple(_op_from_json(i, op) for i, op in enumerate(ops, start=1)))


def _text_field(index: int, op: dict[str, object], name: str) -> str:
    value = op.get(name)
    if not isinstance(value, str):
        raise UsageError(f"op {index} ({op.get('op')}): {name!r} must be a string")
    return _encodable(f"op {index} ({op.get('op')}): {name!r}", value)


def _encodable(what: str, value: str) -> str:
    """`value`, unless it holds a lone surrogate (JSON allows `\\ud800`; no UTF-8 text does)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = f"U+{ord(value[exc.start]):04X}"
        raise UsageError(
            f"{what} holds {char}, a lone surrogate: not a character",
            hint="a \\uD800-\\uDFFF escape must be half of a pair",
        ) from None
    return value


def _step_field(index: int, op: dict[str, object]) -> StepRef:
    value = op.get("step")
    if isinstance(value, str):
        _encodable(f"op {index} ({op.get('op')}): 'step'", value)
    return step_ref(value)


def _op_from_json(index: int, op: object) -> Op:
    if not isinstance(op, dict):
        raise UsageError(f"op {index} is not an object")
    kind = op.get("op")
    if kind == "set":
        return SetSection(
            section_key(_text_field(index, op, "section")), _text_field(index, op, "text")
        )
    if kind == "add":
        return AddLine(
            section_key(_text_field(index, op, "section")), _text_field(index, op, "text")
        )
    if kind == "remove":
        return RemoveLine(
            section_key(_text_field(index, op, "section")), _text_field(index, op, "match")
        )
    if kind == "start":
        return StartStep(_step_field(index, op))
    if kind == "pause":
        return PauseStep(_step_field(index, op))
    if kind == "done":
        return FinishStep(_step_field(index, op), _text_field(index, op, "verify"))
    if kind == "block":
        return BlockStep(_step_field(index, op), _text_field(index, op, "reason"))
    if kind == "todo":
        return AddStep(_text_field(index, op, "text"))
    raise UsageError(
        f"op {index}: unknown op {_shown(kind)}",
        hint="ops: set, add, remove, start, pause, done, block, todo",
    )


def check_bounds(patch: Patch) -> None:
    """UsageError when the patch is bigger than any patch can usefully be: more than MAX_OPS
    ops, or texts that together could not fit in a document."""
    if len(patch.ops) > MAX_OPS:
        raise UsageError(f"a patch holds at most {MAX_OPS} ops, not {len(patch.ops)}")
    total = 0
    for op in patch.ops:
        for value in (getattr(op, name, None) for name in ("text", "match", "verify", "reason")):
            if isinstance(value, str):
                total += len(value.encode("utf-8", "surrogatepass"))
        step = getattr(op, "step", None)
        if isinstance(step, str):
            total += len(step.encode("utf-8", "surrogatepass"))
    if total > MAX_TEXT:
        raise UsageError(
            f"the patch's texts come to {total} bytes, more than a STATE.md may hold (1 MiB)"
        )


# ---- applying ----------------------------------------------------------------------------


@dataclass
class _Step:
    # A step's number for this patch: its place in next_steps before the patch; steps the
    # patch adds continue the count (so `--todo a --todo b --start 1` on an empty list works).
    origin: int
    line: str


class _Work:
    """The mutable scratch copy a patch is applied to; discarded if anything fails."""

    def __init__(self, doc: Document) -> None:
        self.lang: Language = doc.lang
        self.bodies: dict[str, list[str]] = {k: list(doc.section(k)) for k in KEYS}
        self.steps = [_Step(i, line) for i, line in enumerate(doc.steps(), start=1)]
        self.notices: list[str] = []
        self.summary: list[str] = []
        self.original_count = len(self.steps)
        self.next_origin = self.original_count + 1

    def new_steps(self, lines: list[str]) -> list[_Step]:
        made = [_Step(self.next_origin + i, line) for i, line in enumerate(lines)]
        self.next_origin += len(made)
        return made

    def find(self, ref: StepRef) -> _Step:
        if len(self.steps) > MAX_STEPS:
            raise PatchError(
                f"next_steps holds {len(self.steps)} lines; a step op searches at most {MAX_STEPS}",
                hint="shrink it first: git agy-state patch --set next_steps=…",
            )
        if isinstance(ref, int):
            for step in self.steps:
                if step.origin == ref:
                    return step
            raise PatchError(
                f"there is no step {ref} in next_steps"
                + (" any more" if 0 < ref <= self.original_count else ""),
                hint="git agy-state show --section next_steps",
            )
        wanted = ref.casefold()
        exact = [s for s in self.steps if step_text(s.line, self.lang).casefold() == wanted]
        if len(exact) == 1:
            return exact[0]
        prefixed = [
            s for s in self.steps if step_text(s.line, self.lang).casefold().startswith(wanted)
        ]
        if len(prefixed) == 1:
            return prefixed[0]
        if not prefixed:
            raise PatchError(f"no step in next_steps starts with {_shown(ref)}")
        raise PatchError(
            f"{len(prefixed)} steps start with {_shown(ref)}; give more of the text or N"
        )

    def document(self, base: Document) -> Document:
        doc = base
        self.bodies["next_steps"] = [s.line for s in self.steps]
        for key in KEYS:
            doc = doc.with_section(key, self.bodies[key])
        return doc


def _bulleted(key: str, lines: list[str]) -> list[str]:
    """Give bare lines the bullet their section expects (goal is free text).

    done and next_steps lines are items: a bare line, a plain `- `/`* ` bullet or a bare `[m]`
    marker gets what it lacks (`- [x] `, `- [ ] `, `- `), never a second marker.
    """
    if key == "goal":
        return lines
    marker = {"done": "x", "next_steps": " "}.get(key)
    out = []
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if key == "key_data" and i > 0:
            out.append(line)  # verbatim continuation of the item above
        elif marker is None:
            out.append(line if BULLET_RE.match(line) else f"- {stripped}")
        elif parse_item(line) is not None:
            out.append(line)
        elif _BARE_MARKER.match(stripped):
            out.append(f"- {stripped}")
        else:
            body = stripped[2:].lstrip() if BULLET_RE.match(stripped) else stripped
            out.append(f"- [{marker}] {body}")
    return out


_BARE_MARKER = re.compile(r"^\[( |>|!|x)\]\s+\S")


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]


def _one_line(what: str, text: str) -> str:
    value = text.strip()
    if not value or "\n" in value or "\r" in value:
        raise PatchError(f"{what} must be one non-empty line")
    return value


def apply(doc: Document, patch: Patch, user: Language | None = None) -> Applied:
    """Apply every op in order; the result validates or PatchError/InvalidDocument is raised
    (UsageError for a patch past check_bounds). The result is checked as its bytes will be
    stored: the byte limit and UTF-8 too, not only the rules of the text."""
    check_bounds(patch)
    work = _Work(doc)
    lang = work.lang
    for op in patch.ops:
        if isinstance(op, SetSection | AddLine | RemoveLine):
            work.summary.append(_describe(op))
        if isinstance(op, SetSection):
            lines = _bulleted(op.section, _lines(op.text))
            if op.section == "next_steps":
                work.steps = work.new_steps(lines)
            else:
                work.bodies[op.section] = lines
        elif isinstance(op, AddLine):
            lines = _bulleted(op.section, _lines(op.text))
            if not lines:
                raise PatchError(f"nothing to add to {op.section}")
            if op.section == "next_steps":
                work.steps.extend(work.new_steps(lines))
            else:
                work.bodies[op.section].extend(lines)
        elif isinstance(op, RemoveLine):
            _remove(work, op)
        elif isinstance(op, AddStep):
            text = _one_line("a step", op.text)
            work.steps.extend(work.new_steps([f"- [ ] {text}"]))
            work.summary.append(f"todo: {text}")
        elif isinstance(op, StartStep):
            target = work.find(op.step)
            for step in work.steps:
                item = parse_item(step.line)
                if step is not target and item is not None and item.marker == ">":
                    step.line = Item(item.indent, " ", item.text).render()
            item = parse_item(target.line)
            indent = item.indent if item else ""
            body = item.text if item else target.line.strip()
            body, _ = cut_suffix(body, lang.reason)
            target.line = Item(indent, ">", body.rstrip()).render()
            work.summary.append(f"start: {step_text(target.line, lang)}")
        elif isinstance(op, PauseStep):
            target = work.find(op.step)
            item = parse_item(target.line)
            body = item.text if item else target.line.strip()
            body, _ = cut_suffix(body, lang.reason)
            target.line = Item(item.indent if item else "", " ", body.rstrip()).render()
            work.summary.append(f"pause: {step_text(target.line, lang)}")
        elif isinstance(op, BlockStep):
            target = work.find(op.step)
            reason = _one_line("a reason", op.reason)
            item = parse_item(target.line)
            body = item.text if item else target.line.strip()
            body, _ = cut_suffix(body, lang.reason)
            indent = item.indent if item else ""
            target.line = Item(indent, "!", f"{body.rstrip()}{lang.reason}{reason}").render()
            work.summary.append(f"block: {step_text(target.line, lang)}")
        elif isinstance(op, FinishStep):
            target = work.find(op.step)
            verify = _one_line("a verification", op.verify)
            work.steps.remove(target)
            done = work.bodies["done"]
            done.append(f"- [x] {step_text(target.line, lang)}{lang.verify}{verify}")
            work.summary.append(f"done: {step_text(target.line, lang)}")
            while len(done) > LINE_LIMIT:
                dropped = done.pop(0)
                work.notices.append(
                    f"done was full: dropped its oldest line (it stays in history): {dropped}"
                )
    result = work.document(doc)
    report = check_result(render(result), user)  # messages in the user's language
    if not report.valid and not _shrinks_only(doc, report.errors):
        raise InvalidDocument(
            "the patch would leave STATE.md invalid; nothing was changed",
            report.errors,
            hint="a patch must leave a valid document (git agy-state check shows the rules)",
        )
    return Applied(result, result.changed_keys(doc), tuple(work.notices), "; ".join(work.summary))


def _shrinks_only(before: Document, errors: tuple[Problem, ...]) -> bool:
    """True when every problem left is a size limit that the input already broke at least as
    badly: after a sync merge over the limits, a patch that shrinks (or keeps) the violation
    is accepted although the document is not valid yet (docs/sync.md)."""
    old = {
        p.section: p.found or 0 for p in check_text(render(before)).errors if p.code in LIMIT_CODES
    }
    for problem in errors:
        if problem.code not in LIMIT_CODES or problem.section not in old:
            return False
        if (problem.found or 0) > old[problem.section]:
            return False
    return True


def _remove(work: _Work, op: RemoveLine) -> None:
    lines = [s.line for s in work.steps] if op.section == "next_steps" else work.bodies[op.section]
    wanted = op.match.strip()
    if not wanted:
        raise PatchError("remove needs text to match")
    exact = [i for i, line in enumerate(lines) if line.strip() == wanted]
    hits = exact or [i for i, line in enumerate(lines) if wanted in line]
    if len(exact) > 1 and len({lines[i] for i in exact}) == 1:
        # Identical lines: no longer match could single one out, and removing either gives the
        # same text; take the first.
        hits = exact[:1]
    if not hits:
        raise PatchError(f"no line of {op.section} contains {_shown(op.match)}")
    if len(hits) > 1:
        raise PatchError(
            f"{len(hits)} lines of {op.section} contain {_shown(op.match)}; give more of the line"
        )
    if op.section == "next_steps":
        del work.steps[hits[0]]
    else:
        del work.bodies[op.section][hits[0]]


def _describe(op: Op) -> str:
    if isinstance(op, SetSection):
        return f"set {op.section}"
    if isinstance(op, AddLine):
        return f"add to {op.section}: {_short(op.text)}"
    if isinstance(op, RemoveLine):
        return f"remove from {op.section}: {_short(op.match)}"
    if isinstance(op, StartStep):
        return f"start step {op.step}"
    if isinstance(op, PauseStep):
        return f"pause step {op.step}"
    if isinstance(op, FinishStep):
        return f"finish step {op.step}"
    if isinstance(op, BlockStep):
        return f"block step {op.step}: {_short(op.reason)}"
    return f"add step: {_short(op.text)}"


def _short(text: str, width: int = 48) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


__all__ = [
    "AddLine",
    "AddStep",
    "Applied",
    "BlockStep",
    "FinishStep",
    "Op",
    "Patch",
    "PatchError",
    "PauseStep",
    "Problem",
    "RemoveLine",
    "SetSection",
    "StartStep",
    "apply",
    "check_bounds",
    "from_json",
    "section_key",
    "step_ref",
]
