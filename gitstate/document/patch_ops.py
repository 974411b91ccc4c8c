"""The ΔΣ operations, one class per op: its JSON name and fields, how it reads from JSON, how
it changes the scratch copy of a document (Work), how it is described (docs/format.md,
"Patches"). The registry OPS is filled as the classes are defined, so every op has all of these
and an op name OPS lacks is a UsageError. Pure: no I/O. The patch as a whole (bounds, applying
every op, the validity of the result) is document/patch.py's.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import ClassVar

from gitstate.document import language as lang_mod
from gitstate.document.language import KEYS, Language
from gitstate.document.model import Document, Item, cut_suffix, is_bullet, parse_item, step_text
from gitstate.document.validate import LINE_LIMIT
from gitstate.errors import PatchError, UsageError

StepRef = int | str

MAX_STEPS = 1000  # steps a step op searches (a valid next_steps holds 5): docs/format.md, "Patches"


# ---- the ops ------------------------------------------------------------------------------

# Every op by its JSON name, in the order the classes are defined (the unknown-op hint lists
# them so). Filled by Op.__init_subclass__: defining an op class is registering it.
OPS: dict[str, type[Op]] = {}


@dataclass(frozen=True)
class Op(ABC):
    """One patch operation. Its JSON form is `{"op": NAME, <field>: <value>, …}`, its fields
    by name: `section` a section key or any language's heading, `step` a step number or text,
    every other field a string. A subclass without NAME, or with a NAME taken, is refused
    where it is defined; one that lacks a method below cannot be made (mypy says so too)."""

    NAME: ClassVar[str]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("NAME")
        if not isinstance(name, str) or not name:
            raise TypeError(f"patch op {cls.__name__} has no NAME (its name in JSON)")
        if name in OPS:
            raise TypeError(f"patch op {cls.__name__}: {name!r} is {OPS[name].__name__}'s NAME")
        OPS[name] = cls

    @classmethod
    @abstractmethod
    def from_json(cls, read: _Fields) -> Op:
        """The op from its JSON object's fields; UsageError naming the field that is wrong."""

    @abstractmethod
    def apply(self, work: Work) -> str:
        """Change `work`, or raise PatchError; what was done (with the step's text, which the
        op alone may not hold) for the snapshot's first line."""

    @abstractmethod
    def describe(self) -> str:
        """A short phrase for the op alone (Patch.describe)."""

    @property
    @abstractmethod
    def adds_steps(self) -> bool:
        """Whether the op itself puts steps into next_steps: a patch with such an op never
        finishes the task, even if it leaves next_steps empty (docs/archive.md)."""

    def as_json(self) -> dict[str, object]:
        """The op's JSON object: what from_json reads back into an equal op."""
        return {"op": self.NAME, **{f.name: getattr(self, f.name) for f in fields(self)}}

    def texts(self) -> list[str]:
        """The user's texts the op carries (check_bounds counts them): every string field but
        the section, which is a key."""
        values = (getattr(self, f.name) for f in fields(self) if f.name != "section")
        return [value for value in values if isinstance(value, str)]


@dataclass(frozen=True)
class SetSection(Op):
    NAME = "set"
    section: str
    text: str

    @classmethod
    def from_json(cls, read: _Fields) -> SetSection:
        return cls(read.section(), read.text("text"))

    def apply(self, work: Work) -> str:
        lines = _bulleted(self.section, _lines(self.text))
        if self.section == "next_steps":
            work.steps = work.new_steps(lines)
        else:
            work.bodies[self.section] = lines
        return self.describe()

    def describe(self) -> str:
        return f"set {self.section}"

    @property
    def adds_steps(self) -> bool:
        return self.section == "next_steps" and bool(self.text.strip())


@dataclass(frozen=True)
class AddLine(Op):
    NAME = "add"
    section: str
    text: str

    @classmethod
    def from_json(cls, read: _Fields) -> AddLine:
        return cls(read.section(), read.text("text"))

    def apply(self, work: Work) -> str:
        lines = _bulleted(self.section, _lines(self.text))
        if not lines:
            raise PatchError(f"nothing to add to {self.section}")
        if self.section == "next_steps":
            work.steps.extend(work.new_steps(lines))
        else:
            work.bodies[self.section].extend(lines)
        return self.describe()

    def describe(self) -> str:
        return f"add to {self.section}: {short(self.text)}"

    @property
    def adds_steps(self) -> bool:
        return self.section == "next_steps" and bool(self.text.strip())


@dataclass(frozen=True)
class RemoveLine(Op):
    NAME = "remove"
    section: str
    match: str

    @classmethod
    def from_json(cls, read: _Fields) -> RemoveLine:
        return cls(read.section(), read.text("match"))

    def apply(self, work: Work) -> str:
        steps = self.section == "next_steps"
        lines = [s.line for s in work.steps] if steps else work.bodies[self.section]
        wanted = self.match.strip()
        if not wanted:
            raise PatchError("remove needs text to match")
        exact = [i for i, line in enumerate(lines) if line.strip() == wanted]
        hits = exact or [i for i, line in enumerate(lines) if wanted in line]
        if len(exact) > 1 and len({lines[i] for i in exact}) == 1:
            # Identical lines: no longer match could single one out, and removing either gives
            # the same text; take the first.
            hits = exact[:1]
        if not hits:
            raise PatchError(f"no line of {self.section} contains {shown(self.match)}")
        if len(hits) > 1:
            raise PatchError(
                f"{len(hits)} lines of {self.section} contain {shown(self.match)}; "
                "give more of the line"
            )
        if steps:
            del work.steps[hits[0]]
        else:
            del work.bodies[self.section][hits[0]]
        return self.describe()

    def describe(self) -> str:
        return f"remove from {self.section}: {short(self.match)}"

    @property
    def adds_steps(self) -> bool:
        return False


@dataclass(frozen=True)
class StartStep(Op):
    NAME = "start"
    step: StepRef

    @classmethod
    def from_json(cls, read: _Fields) -> StartStep:
        return cls(read.step())

    def apply(self, work: Work) -> str:
        target = work.find(self.step)
        for step in work.steps:  # at most one step in progress: the others go back to [ ]
            item = parse_item(step.line)
            if step is not target and item is not None and item.marker == ">":
                step.line = Item(item.indent, " ", item.text).render()
        target.line = _marked(target.line, ">", work.lang)
        return f"start: {step_text(target.line, work.lang)}"

    def describe(self) -> str:
        return f"start step {self.step}"

    @property
    def adds_steps(self) -> bool:
        return False


@dataclass(frozen=True)
class PauseStep(Op):
    """Put a step back to `[ ]` (the stop guard's second way out); drops a blocking reason."""

    NAME = "pause"
    step: StepRef

    @classmethod
    def from_json(cls, read: _Fields) -> PauseStep:
        return cls(read.step())

    def apply(self, work: Work) -> str:
        target = work.find(self.step)
        target.line = _marked(target.line, " ", work.lang)
        return f"pause: {step_text(target.line, work.lang)}"

    def describe(self) -> str:
        return f"pause step {self.step}"

    @property
    def adds_steps(self) -> bool:
        return False


@dataclass(frozen=True)
class FinishStep(Op):
    NAME = "done"
    step: StepRef
    verify: str

    @classmethod
    def from_json(cls, read: _Fields) -> FinishStep:
        return cls(read.step(), read.text("verify"))

    def apply(self, work: Work) -> str:
        lang = work.lang
        target = work.find(self.step)
        verify = _one_line("a verification", self.verify)
        work.steps.remove(target)
        done = work.bodies["done"]
        done.append(f"- [x] {step_text(target.line, lang)}{lang.verify}{verify}")
        while len(done) > LINE_LIMIT:
            dropped = done.pop(0)
            work.notices.append(
                f"done was full: dropped its oldest line (it stays in history): {dropped}"
            )
        return f"done: {step_text(target.line, lang)}"

    def describe(self) -> str:
        return f"finish step {self.step}"

    @property
    def adds_steps(self) -> bool:
        return False


@dataclass(frozen=True)
class BlockStep(Op):
    NAME = "block"
    step: StepRef
    reason: str

    @classmethod
    def from_json(cls, read: _Fields) -> BlockStep:
        return cls(read.step(), read.text("reason"))

    def apply(self, work: Work) -> str:
        target = work.find(self.step)
        reason = _one_line("a reason", self.reason)
        target.line = _marked(target.line, "!", work.lang, reason)
        return f"block: {step_text(target.line, work.lang)}"

    def describe(self) -> str:
        return f"block step {self.step}: {short(self.reason)}"

    @property
    def adds_steps(self) -> bool:
        return False


@dataclass(frozen=True)
class AddStep(Op):
    NAME = "todo"
    text: str

    @classmethod
    def from_json(cls, read: _Fields) -> AddStep:
        return cls(read.text("text"))

    def apply(self, work: Work) -> str:
        text = _one_line("a step", self.text)
        work.steps.extend(work.new_steps([f"- [ ] {text}"]))
        return f"todo: {text}"

    def describe(self) -> str:
        return f"add step: {short(self.text)}"

    @property
    def adds_steps(self) -> bool:
        return True


# ---- reading an op from JSON ---------------------------------------------------------------


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
        f"unknown section {shown(name)}",
        hint="sections: " + ", ".join(KEYS),
    )


def shown(value: object, width: int = 40) -> str:
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
        raise UsageError(f"a step is a number from 1 or the step's text, not {shown(value)}")
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
    raise UsageError(f"a step is a number from 1 or the step's text, not {shown(value)}")


def op_from_json(index: int, op: object) -> Op:
    """The `index`th op of a patch from its JSON object, by its `op` name."""
    if not isinstance(op, dict):
        raise UsageError(f"op {index} is not an object")
    kind = op.get("op")
    cls = OPS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise UsageError(f"op {index}: unknown op {shown(kind)}", hint="ops: " + ", ".join(OPS))
    return cls.from_json(_Fields(index, op))


class _Fields:
    """The fields of one op's JSON object, each checked as it is read; a message names the op
    by its place in the patch and its name."""

    def __init__(self, index: int, op: dict[str, object]) -> None:
        self.op = op
        self.where = f"op {index} ({op.get('op')})"

    def text(self, name: str) -> str:
        value = self.op.get(name)
        if not isinstance(value, str):
            raise UsageError(f"{self.where}: {name!r} must be a string")
        return _encodable(f"{self.where}: {name!r}", value)

    def section(self) -> str:
        return section_key(self.text("section"))

    def step(self) -> StepRef:
        value = self.op.get("step")
        if isinstance(value, str):
            _encodable(f"{self.where}: 'step'", value)
        return step_ref(value)


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


# ---- the scratch copy ops change ----------------------------------------------------------


class _Step:
    """A step line being patched (mutable scratch, so not a record type)."""

    __slots__ = ("line", "origin")

    def __init__(self, origin: int, line: str) -> None:
        # The step's number for this patch: its place in next_steps before the patch; steps the
        # patch adds continue the count (so `--todo a --todo b --start 1` on an empty list works).
        self.origin = origin
        self.line = line


class Work:
    """The mutable scratch copy a patch is applied to; discarded if anything fails."""

    def __init__(self, doc: Document) -> None:
        self.lang: Language = doc.lang
        self.bodies: dict[str, list[str]] = {k: list(doc.section(k)) for k in KEYS}
        self.steps = [_Step(i, line) for i, line in enumerate(doc.steps(), start=1)]
        self.notices: list[str] = []
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
            raise PatchError(f"no step in next_steps starts with {shown(ref)}")
        raise PatchError(
            f"{len(prefixed)} steps start with {shown(ref)}; give more of the text or N"
        )

    def document(self, base: Document) -> Document:
        doc = base
        self.bodies["next_steps"] = [s.line for s in self.steps]
        for key in KEYS:
            doc = doc.with_section(key, self.bodies[key])
        return doc


def _marked(line: str, marker: str, lang: Language, reason: str | None = None) -> str:
    """A step line with `marker` (`>`, ` ` or `!`): its blocking reason dropped, `reason`
    appended when given; a line that is not an item yet becomes one."""
    item = parse_item(line)
    body, _ = cut_suffix(item.text if item else line.strip(), lang.reason)
    text = body.rstrip() if reason is None else f"{body.rstrip()}{lang.reason}{reason}"
    return Item(item.indent if item else "", marker, text).render()


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
            out.append(line if is_bullet(line) else f"- {stripped}")
        elif parse_item(line) is not None:
            out.append(line)
        elif _BARE_MARKER.match(stripped):
            out.append(f"- {stripped}")
        else:
            body = stripped[2:].lstrip() if is_bullet(stripped) else stripped
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


def short(text: str, width: int = 48) -> str:
    """`text` on one line of at most `width` characters (descriptions, messages)."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"
