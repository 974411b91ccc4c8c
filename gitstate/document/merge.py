"""Three-way merge of two documents against their common base, section by section.

A section changed on one side only takes that side; changed the same way on both is taken once;
changed differently on both is a conflict, reported (never resolved by dropping a side).
"""

from __future__ import annotations

from dataclasses import dataclass

from gitstate.document.language import KEYS
from gitstate.document.model import Document


@dataclass(frozen=True)
class Merged:
    document: Document
    conflicts: tuple[str, ...]  # keys changed differently on both sides

    @property
    def clean(self) -> bool:
        return not self.conflicts


def merge_sections(base: Document, ours: Document, theirs: Document) -> Merged:
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
    return Merged(result, tuple(conflicts))
