"""The state patch ΔΣ: a few typed ops (document/patch_ops.py) applied whole to a Document, or
not at all.

Step numbers refer to next_steps as it was before the patch (so `--done 1 --start 2` means what
it says); a step can also be named by a unique prefix of its text. The result must validate,
otherwise PatchError and the input document is untouched (values are immutable anyway).
"""

from __future__ import annotations

import json
from typing import NamedTuple

from gitstate.document.language import Language
from gitstate.document.model import MAX_BYTES, Document, render
from gitstate.document.patch_ops import (
    OPS,
    AddLine,
    AddStep,
    BlockStep,
    FinishStep,
    Op,
    PauseStep,
    RemoveLine,
    SetSection,
    StartStep,
    StepRef,
    Work,
    op_from_json,
    section_key,
    short,
    step_ref,
)
from gitstate.document.validate import LIMIT_CODES, Problem, check_result, check_text
from gitstate.errors import InvalidDocument, PatchError, UsageError

# Bounds on a patch (docs/format.md, "Patches"): a patch is a few small ops. Without them a
# crafted patch costs time quadratic in its size (each op may scan every line).
MAX_OPS = 100
MAX_TEXT = MAX_BYTES  # the texts of one patch together, in UTF-8 bytes: they must fit a document


class Patch(NamedTuple):
    ops: tuple[Op, ...]

    def describe(self) -> str:
        """A one-line summary for the snapshot's commit message."""
        return "; ".join(op.describe() for op in self.ops)


class Applied(NamedTuple):
    document: Document
    changed: tuple[str, ...]  # section keys that changed
    notices: tuple[str, ...] = ()  # things the user should hear (a dropped line)
    summary: str = ""  # what the patch did, with step texts: the snapshot's first line


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
        raise UsageError(f"patch is not valid JSON: {short(str(exc), 80)}") from None
    ops = doc.get("ops") if isinstance(doc, dict) else doc
    if not isinstance(ops, list) or not ops:
        raise UsageError('a patch is {"ops": [...]} with at least one op')
    if len(ops) > MAX_OPS:
        raise UsageError(f"a patch holds at most {MAX_OPS} ops, not {len(ops)}")
    return Patch(tuple(op_from_json(i, op) for i, op in enumerate(ops, start=1)))


def check_bounds(patch: Patch) -> None:
    """UsageError when the patch is bigger than any patch can usefully be: more than MAX_OPS
    ops, or texts that together could not fit in a document."""
    if len(patch.ops) > MAX_OPS:
        raise UsageError(f"a patch holds at most {MAX_OPS} ops, not {len(patch.ops)}")
    total = sum(
        len(text.encode("utf-8", "surrogatepass")) for op in patch.ops for text in op.texts()
    )
    if total > MAX_TEXT:
        raise UsageError(
            f"the patch's texts come to {total} bytes, more than a STATE.md may hold (1 MiB)"
        )


# ---- applying ----------------------------------------------------------------------------


def apply(doc: Document, patch: Patch, user: Language | None = None) -> Applied:
    """Apply every op in order; the result validates or PatchError/InvalidDocument is raised
    (UsageError for a patch past check_bounds). The result is checked as its bytes will be
    stored: the byte limit and UTF-8 too, not only the rules of the text."""
    check_bounds(patch)
    work = Work(doc)
    summary = [op.apply(work) for op in patch.ops]
    result = work.document(doc)
    report = check_result(render(result), user)  # messages in the user's language
    if not report.valid and not _shrinks_only(doc, report.errors):
        raise InvalidDocument(
            "the patch would leave STATE.md invalid; nothing was changed",
            report.errors,
            hint="a patch must leave a valid document (git agy-state check shows the rules)",
        )
    return Applied(result, result.changed_keys(doc), tuple(work.notices), "; ".join(summary))


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


__all__ = [
    "OPS",
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
    "StepRef",
    "apply",
    "check_bounds",
    "from_json",
    "op_from_json",
    "section_key",
    "step_ref",
]
