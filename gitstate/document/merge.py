"""Three-way merge of two states against their merge base (docs/sync.md). Pure and deterministic.

Line by line within each section: a change on one side is taken; the same change on both is
taken once; both sides adding lines at the same place keeps both (ours first); both changing the
same lines differently is a conflict that keeps both, the other side's lines prefixed
`(sync conflict <label>) `, plus a blocked step telling the agent to resolve it. A step finished
on one side is one move across next_steps and done, so it ends done whatever the other side did
to it; done keeps its newest five lines; at most one `[>]` survives, the newer side's. Nothing
either side wrote is dropped otherwise: a result over the size limits is still returned, with the
sections named in `over_limit`.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

from gitstate.document.language import KEYS, Language
from gitstate.document.model import Document, Item, parse_item, render, step_text
from gitstate.document.validate import LIMIT_CODES, LINE_LIMIT, check_text

CONFLICT_PREFIX = "(sync conflict {label}) "


class Merged(NamedTuple):
    document: Document
    conflicts: tuple[str, ...]  # section keys where both sides changed the same lines
    over_limit: tuple[str, ...]  # section keys over their size limit after the merge

    @property
    def clean(self) -> bool:
        return not self.conflicts


class _Hunk(NamedTuple):
    start: int  # base range [start, end) replaced by `lines`
    end: int
    lines: tuple[str, ...]
    side: str  # "o" or "t"


def _hunks(base: list[str], side: list[str], tag: str) -> list[_Hunk]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [
        _Hunk(i1, i2, tuple(side[j1:j2]), tag)
        for op, i1, i2, j1, j2 in matcher.get_opcodes()
        if op != "equal"
    ]


def _apply(base: list[str], start: int, end: int, hunks: list[_Hunk]) -> list[str]:
    """One side's version of base[start:end], its hunks (all inside the range) applied."""
    out: list[str] = []
    pos = start
    for hunk in sorted(hunks, key=lambda h: (h.start, h.end)):
        out.extend(base[pos : hunk.start])
        out.extend(hunk.lines)
        pos = hunk.end
    out.extend(base[pos:end])
    return out


def _overlaps(hunk: _Hunk, start: int, end: int) -> bool:
    if hunk.start < end:
        return True
    # Two insertions at the same point belong together (they are ordered, not conflicting).
    return hunk.start == hunk.end == start == end


def merge_lines(
    base: list[str], ours: list[str], theirs: list[str], label: str
) -> tuple[list[str], bool]:
    """Three-way merge of two line lists; (lines, whether a true conflict was kept)."""
    if ours == theirs or theirs == base:
        return list(ours), False
    if ours == base:
        return list(theirs), False
    events = sorted(
        _hunks(base, ours, "o") + _hunks(base, theirs, "t"), key=lambda h: (h.start, h.end)
    )
    result: list[str] = []
    conflict = False
    pos = 0
    index = 0
    while index < len(events):
        group = [events[index]]
        start, end = events[index].start, events[index].end
        index += 1
        while index < len(events) and _overlaps(events[index], start, end):
            end = max(end, events[index].end)
            group.append(events[index])
            index += 1
        result.extend(base[pos:start])
        mine = [h for h in group if h.side == "o"]
        other = [h for h in group if h.side == "t"]
        if not other:
            result.extend(_apply(base, start, end, mine))
        elif not mine:
            result.extend(_apply(base, start, end, other))
        else:
            o_text = _apply(base, start, end, mine)
            t_text = _apply(base, start, end, other)
            extra = [line for line in t_text if line not in o_text]
            if o_text == t_text or not extra:
                result.extend(o_text)
            elif start == end:  # both only added lines here: keep both, ours first
                result.extend(o_text + extra)
            else:
                prefix = CONFLICT_PREFIX.format(label=label)
                result.extend(o_text + [prefix + line for line in extra])
                conflict = True
        pos = end
    result.extend(base[pos:])
    return result, conflict


def _finished(base: Document, side: Document) -> set[str]:
    """Steps of the base that this side moved from next_steps to done."""
    lang = base.lang
    still = {step_text(line, lang) for line in side.steps()}
    done_before = {step_text(line, lang) for line in base.section("done")}
    done_now = {step_text(line, lang) for line in side.section("done")}
    return {
        text
        for text in (step_text(line, lang) for line in base.steps())
        if text not in still and text in done_now and text not in done_before
    }


def _without(steps: tuple[str, ...], finished: set[str], lang: Language) -> list[str]:
    return [line for line in steps if step_text(line, lang) not in finished]


def _one_in_progress(lines: list[str], newer: Document) -> list[str]:
    """Keep the newer side's `[>]` (or the first one); the others go back to `[ ]`."""
    started = [i for i, line in enumerate(lines) if (parse_item(line) or _NOT).marker == ">"]
    if len(started) <= 1:
        return lines
    newer_lines = set(newer.steps())
    keep = next((i for i in started if lines[i] in newer_lines), started[0])
    out = list(lines)
    for i in started:
        if i != keep:
            item = parse_item(out[i])
            assert item is not None
            out[i] = Item(item.indent, " ", item.text).render()
    return out


_NOT = Item("", "", "")


def merge_documents(
    base: Document,
    ours: Document,
    theirs: Document,
    *,
    label: str,
    stamp: str,
    theirs_newer: bool = False,
) -> Merged:
    """Merge `theirs` into `ours` against `base`. `label` names the other side in conflict
    markers (a short commit id); `stamp` is the merge time for the title."""
    lang = ours.lang
    finished_o, finished_t = _finished(base, ours), _finished(base, theirs)
    bodies: dict[str, list[str]] = {}
    conflicts: list[str] = []
    for key in KEYS:
        b, o, t = list(base.section(key)), list(ours.section(key)), list(theirs.section(key))
        if key == "next_steps":
            # A step finished on one side is finished: drop what the other side did to it.
            o = _without(tuple(o), finished_t, lang)
            t = _without(tuple(t), finished_o, lang)
        lines, conflicted = merge_lines(b, o, t, label)
        if conflicted:
            conflicts.append(key)
        bodies[key] = lines
    if len(bodies["done"]) > LINE_LIMIT:
        bodies["done"] = bodies["done"][-LINE_LIMIT:]  # the newest five; the rest is in history
    bodies["next_steps"] = _one_in_progress(bodies["next_steps"], theirs if theirs_newer else ours)
    for key in conflicts:
        step = lang.message("resolve_step", heading=lang.heading(key))
        reason = lang.message("resolve_reason", label=label)
        line = Item("", "!", f"{step}{lang.reason}{reason}").render()
        if line not in bodies["next_steps"]:
            bodies["next_steps"].append(line)
    preamble, _ = merge_lines(
        list(base.preamble), list(ours.preamble), list(theirs.preamble), label
    )
    merged = Document(ours.language, stamp, tuple(tuple(bodies[k]) for k in KEYS), tuple(preamble))
    # with_section normalises (blank lines out, trailing spaces off) like every other edit.
    for key in KEYS:
        merged = merged.with_section(key, bodies[key])
    report = check_text(render(merged))
    over = tuple(
        key
        for key in KEYS
        if any(p.section == key and p.code in LIMIT_CODES for p in report.errors)
    )
    return Merged(merged, tuple(conflicts), over)


def merge_sections(base: Document, ours: Document, theirs: Document) -> Merged:
    """Section-level merge used while a view is saved over a moved tip: a section changed on
    both sides is reported as a conflict instead of being merged line by line."""
    result = theirs
    conflicts = []
    for key in KEYS:
        b, o, t = base.section(key), ours.section(key), theirs.section(key)
        if o in (b, t):
            continue
        if t == b:
            result = result.with_section(key, o)
        else:
            conflicts.append(key)
    if ours.preamble != base.preamble and theirs.preamble == base.preamble:
        result = Document(result.language, result.stamp, result.sections, ours.preamble)
    return Merged(result, tuple(conflicts), ())
