"""hooks/json_wire.py against json itself: the agent hooks' JSON through `_json` alone must read
and write exactly what json.loads and json.dumps(ensure_ascii=False, separators=(",", ":")) do."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gitstate
from gitstate.hooks import json_wire

PACKAGE_ROOT = str(Path(gitstate.__file__).resolve().parent.parent)

# What a hook answers with: str keys, no floats (none of our shapes has one).
ANSWERS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
# What a payload may hold: floats too (finite: NaN is never equal to itself).
PAYLOADS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
SPACE = st.text(alphabet=" \t\n\r", max_size=3)


def with_json(function: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", repr(function(text))  # repr: NaN is equal to no NaN
    except RecursionError:
        return "deep", None
    except ValueError:
        return "broken", None


@given(ANSWERS)
def test_dumps_writes_what_json_dumps_writes(value: object) -> None:
    assert json_wire.dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(PAYLOADS, SPACE, SPACE, st.booleans())
def test_loads_reads_what_json_loads_reads(
    value: object, before: str, after: str, indent: bool
) -> None:
    text = before + json.dumps(value, ensure_ascii=bool(indent), indent=2 if indent else None)
    text += after
    assert with_json(json_wire.loads, text) == with_json(json.loads, text)


@given(st.text(alphabet='{}[]",:0123456789.eE+-tnrufalsNIy \t\n\r\x0c\\u\ufeffab', max_size=30))
def test_loads_refuses_what_json_refuses(text: str) -> None:
    assert with_json(json_wire.loads, text) == with_json(json.loads, text)


def test_a_document_deeper_than_the_stack_is_a_recursion_error_as_for_json() -> None:
    with pytest.raises(RecursionError):
        json_wire.loads("[" * 200_000)


@pytest.mark.parametrize("value", [1.5, {1: "a"}, {"a"}, b"x", object()])
def test_dumps_refuses_what_a_hook_never_answers_with(value: object) -> None:
    with pytest.raises(TypeError):
        json_wire.dumps(value)


def test_dumps_refuses_a_cycle_instead_of_recursing_forever() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError):
        json_wire.dumps(loop)


BROKEN = ["{", '{"a"', '{"a":', '{"a":1', '{"a":1,', '"abc', '"\\x"', "[1,", "nul", "[1 2]", "1 2"]


def probe(body: str, *, without_c_codec: bool = False) -> list[object]:
    """What `body` appends to `said`, run in an isolated interpreter where nothing has imported
    json (or, `without_c_codec`, where `_json` cannot be imported)."""
    code = (
        f"import sys; sys.path.insert(0, {PACKAGE_ROOT!r})\n"
        + ("sys.modules['_json'] = None\n" if without_c_codec else "")
        + "from gitstate.hooks import json_wire\n"
        "said = []\n"
        "def loaded():\n"
        "    return sorted(m for m in ('json', 're', 'enum', 'collections') if m in sys.modules)\n"
        f"{body}\n"
        "print(repr(said))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    said: list[object] = ast.literal_eval(proc.stdout)
    return said


ROUND_TRIP = f"""\
said.append(json_wire.dumps(json_wire.loads(' {{"a": [1, true, null, "é"]}} ')))
said.append(loaded())
for text in {BROKEN!r}:
    try:
        json_wire.loads(text)
        said.append('value')
    except ValueError:
        said.append('broken')
"""


def test_without_json_loaded_it_stays_unloaded_and_broken_documents_are_value_errors() -> None:
    """A hook process never imports json for a good payload. For a broken one the C scanner
    builds its error from json.decoder: Python 3.12 on imports it for that, 3.10 and 3.11 only
    look it up and, not finding it, fail with SystemError; either way it must be a ValueError."""
    said = probe(ROUND_TRIP)
    assert said == ['{"a":[1,true,null,"é"]}', [], *["broken"] * len(BROKEN)]


def test_without_the_c_codec_it_is_json_itself() -> None:
    said = probe(ROUND_TRIP, without_c_codec=True)
    assert said == ['{"a":[1,true,null,"é"]}', ["collections", "enum", "json", "re"]] + [
        "broken"
    ] * len(BROKEN)
