"""Three-way merge of two brains against their merge base (docs/memory.md). Pure and deterministic.

File by file: a file changed on one side takes that side. Changed on both: a session log is the
union of its blocks (identical blocks once, ordered by time; a block of the base that one side
dropped stays dropped), any other memory file merges section by section (a section changed on
one side takes that side; on both, the union of its lines, line order kept as merge_lines keeps
it). A file deleted on one side and changed on the other keeps the changed one. Nothing either
side wrote is lost; sizes are never checked here (a merge is never refused).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import NamedTuple

from gitstate.document.merge import CONFLICT_PREFIX, merge_lines
from gitstate.memory.document.files import (
    SESSIONS_DIR,
    Section,
    is_memory_path,
    parse_sections,
    render_sections,
)
from gitstate.memory.document.sessions import Block, parse_log, render_log

_UNION_LABEL = (
    "\x00union"  # merge_lines marks the other side's lines of a true conflict; we keep them plain
)


class FileMerge(NamedTuple):
    path: str
    how: str  # ours, theirs, sessions (block union), sections (section merge), kept (ours: not mergeable)
    both: tuple[str, ...] = ()  # headings changed on both sides (their lines were united)


class TreeMerge(NamedTuple):
    files: dict[str, bytes]  # the merged tree: path -> content
    merged: tuple[FileMerge, ...]  # every file whose result is not simply ours


def union_lines(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    """merge_lines, where both sides changing the same lines keeps both sets of lines, plain."""
    lines, _ = merge_lines(base, ours, theirs, _UNION_LABEL)
    prefix = CONFLICT_PREFIX.format(label=_UNION_LABEL)
    return [line.removeprefix(prefix) for line in lines]


def merge_sections(base: str, ours: str, theirs: str) -> tuple[str, tuple[str, ...]]:
    """A Markdown file merged section by section; (text, headings changed on both sides)."""
    b, o, t = (
        keyed_sections(parse_sections(base)),
        keyed_sections(parse_sections(ours)),
        keyed_sections(parse_sections(theirs)),
    )
    order = section_order(list(o), list(t))
    result: list[Section] = []
    both: list[str] = []
    for key in order:
        bb, oo, tt = b.get(key), o.get(key), t.get(key)
        body: tuple[str, ...] | None
        if oo == tt or tt == bb:
            body = oo.lines if oo is not None else None
        elif oo == bb or oo is None:
            body = tt.lines if tt is not None else None
        elif tt is None:
            body = oo.lines
        else:
            body = tuple(union_lines(list(bb.lines) if bb else [], list(oo.lines), list(tt.lines)))
            both.append(oo.heading if oo.heading is not None else "(preamble)")
        if body is None:
            continue
        heading = oo.heading if oo is not None else (tt.heading if tt is not None else None)
        result.append(Section(heading, body))
    if not result or result[0].heading is not None:
        result.insert(0, Section(None, ()))
    return render_sections(result), tuple(both)


def keyed_sections(sections: list[Section]) -> dict[tuple[str, int], Section]:
    """Sections by (normalized heading, occurrence): a heading may repeat in a hand-edited file."""
    keyed: dict[tuple[str, int], Section] = {}
    seen: dict[str, int] = {}
    for section in sections:
        name = (
            "\x00preamble"
            if section.heading is None
            else " ".join(section.heading.split()).casefold()
        )
        seen[name] = seen.get(name, -1) + 1
        keyed[(name, seen[name])] = section
    return keyed


def section_order(
    ours: list[tuple[str, int]], theirs: list[tuple[str, int]]
) -> list[tuple[str, int]]:
    """Ours in order; a section only theirs has goes after the one it follows there."""
    order = list(ours)
    for index, key in enumerate(theirs):
        if key in order:
            continue
        previous = next((k for k in reversed(theirs[:index]) if k in order), None)
        order.insert(order.index(previous) + 1 if previous is not None else 0, key)
    return order


def merge_log(base: str, ours: str, theirs: str, date: str = "") -> str:
    """The union of two session logs' blocks, ordered by time."""
    _, base_blocks = parse_log(base)
    our_pre, our_blocks = parse_log(ours)
    their_pre, their_blocks = parse_log(theirs)
    in_base = {block.text for block in base_blocks}
    in_ours = {block.text for block in our_blocks}
    in_theirs = {block.text for block in their_blocks}
    kept: list[Block] = []
    seen: set[str] = set()
    for block in our_blocks + their_blocks:
        if block.text in seen:
            continue
        seen.add(block.text)
        if block.text in in_base and not (block.text in in_ours and block.text in in_theirs):
            continue  # one side forgot it on purpose
        kept.append(block)
    kept.sort(key=lambda block: _when(block, date))  # stable: ties keep ours first
    return render_log(our_pre if our_pre.strip() else their_pre, kept)


def _when(block: Block, date: str) -> float:
    """Seconds since the epoch; a block without `**Time**:` counts its clock as UTC on `date`."""
    text = (block.time or "").replace("Z", "+00:00")
    for candidate in (text, f"{date}T{block.clock}"):
        try:
            when = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return when.timestamp()
    return float("inf")


def merge_trees(
    base: dict[str, bytes], ours: dict[str, bytes], theirs: dict[str, bytes]
) -> TreeMerge:
    """Both trees merged against `base` (empty for unrelated histories)."""
    files: dict[str, bytes] = {}
    merged: list[FileMerge] = []
    for path in sorted(set(ours) | set(theirs) | set(base)):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        both: tuple[str, ...]
        if o == t or t == b:
            result, how, both = o, "ours", ()
        elif o == b:
            result, how, both = t, "theirs", ()
        elif o is None or t is None:  # deleted on one side, changed on the other: keep it
            result, how, both = (t, "theirs", ()) if o is None else (o, "ours", ())
        elif not is_memory_path(path):
            result, how, both = o, "kept", ()
        else:
            tb, to, tt = ((x or b"").decode("utf-8", "replace") for x in (b, o, t))
            if path.startswith(SESSIONS_DIR + "/"):
                date = path[len(SESSIONS_DIR) + 1 : -len(".md")]
                text, how, both = merge_log(tb, to, tt, date=date), "sessions", ()
            else:
                text, both = merge_sections(tb, to, tt)
                how = "sections"
            result = text.encode()
        if result is not None:
            files[path] = result
        if how != "ours":
            merged.append(FileMerge(path, how, both))
    return TreeMerge(files, tuple(merged))


__all__ = [
    "FileMerge",
    "TreeMerge",
    "keyed_sections",
    "merge_log",
    "merge_sections",
    "merge_trees",
    "section_order",
]
