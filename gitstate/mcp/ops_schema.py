"""The JSON schema of `state_patch`'s ops, derived from the ops themselves (document/patch_ops.py
OPS): each op is an object with its JSON name in `op` and its fields, so a new op class is a new
branch of the schema with nothing else to edit. The schema tells an agent what to send; the
patch's own reader (document/patch.py from_json) stays the judge, with its typed errors.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from gitstate.document.language import KEYS
from gitstate.document.patch import MAX_OPS
from gitstate.document.patch_ops import OPS

SECTION = {
    "type": "string",
    "description": "A section key (" + ", ".join(KEYS) + ") or any language's heading.",
}
STEP = {
    "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}],
    "description": "A step of next_steps: its number (from 1, as before the patch) or the "
    "text it starts with.",
}


def op_schema(name: str) -> dict[str, Any]:
    """One op's object schema: `op` fixed to its name, every field required."""
    cls = OPS[name]
    names = [f.name for f in fields(cls)]
    properties: dict[str, Any] = {"op": {"type": "string", "enum": [name]}}
    for field in names:
        if field == "section":
            properties[field] = SECTION
        elif field == "step":
            properties[field] = STEP
        else:
            properties[field] = {"type": "string"}
    example = cls.__name__  # e.g. SetSection: the class name says what the op does
    return {
        "type": "object",
        "title": example,
        "properties": properties,
        "required": ["op", *names],
    }


def ops_schema() -> dict[str, Any]:
    """The `ops` argument: a list of 1 to MAX_OPS ops, applied in order (docs/format.md)."""
    return {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_OPS,
        "items": {"anyOf": [op_schema(name) for name in OPS]},
        "description": "The ops of `git agy-state patch --ops`, applied in order: "
        + ", ".join(OPS)
        + ". Steps count from 1 in next_steps as it was before the patch.",
    }
