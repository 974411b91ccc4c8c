"""Patch ops are one type per op (issue 11): every op the registry knows has its JSON form, its
description and its effect, and an op name the registry lacks is a usage error that moves
nothing, through the CLI too.

A new op class joins `OPS` by being defined; the sample table below must then name it, or
test_every_op_has_a_sample fails, so every op is round-tripped and applied here.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from hypothesis import given
from hypothesis import strategies as st
from strategies import fragment

from gitstate.document.language import EN, KEYS, LANGUAGES
from gitstate.document.model import render, template
from gitstate.document.patch import (
    OPS,
    AddLine,
    AddStep,
    BlockStep,
    FinishStep,
    Op,
    Patch,
    PauseStep,
    RemoveLine,
    SetSection,
    StartStep,
    apply,
    from_json,
    op_from_json,
)
from gitstate.errors import EXIT_USAGE, PatchError, UsageError
from gitstate.usecases.state import patch as patch_uc

# One op of each kind: its JSON object and the op it reads as.
SAMPLES: dict[str, tuple[dict[str, object], Op]] = {
    "set": ({"op": "set", "section": "goal", "text": "ship it"}, SetSection("goal", "ship it")),
    "add": (
        {"op": "add", "section": "open_issues", "text": "- the cache is cold"},
        AddLine("open_issues", "- the cache is cold"),
    ),
    "remove": (
        {"op": "remove", "section": "open_issues", "match": "flaky"},
        RemoveLine("open_issues", "flaky"),
    ),
    "start": ({"op": "start", "step": 1}, StartStep(1)),
    "pause": ({"op": "pause", "step": "run the"}, PauseStep("run the")),
    "done": (
        {"op": "done", "step": 1, "verify": "pytest passes"},
        FinishStep(1, "pytest passes"),
    ),
    "block": (
        {"op": "block", "step": 2, "reason": "waiting for review"},
        BlockStep(2, "waiting for review"),
    ),
    "todo": ({"op": "todo", "text": "write the docs"}, AddStep("write the docs")),
}

BASE = (
    template(EN, "2026-09-09 23:40")
    .with_section("goal", ["make the suite green"])
    .with_section("open_issues", ["- the test is flaky"])
    .with_section("next_steps", ["- [ ] write the test", "- [>] run the suite"])
)


def _subclasses(cls: type) -> set[type]:
    found: set[type] = set()
    sub: type
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def test_the_registry_holds_every_op_class_by_its_json_name() -> None:
    assert set(OPS.values()) == _subclasses(Op)
    assert all(name == cls.NAME for name, cls in OPS.items())
    # The order the unknown-op hint lists them in (the order the classes are defined).
    assert list(OPS) == ["set", "add", "remove", "start", "pause", "done", "block", "todo"]


@pytest.mark.parametrize("cls", list(OPS.values()), ids=list(OPS))
def test_every_op_class_is_concrete(cls: type[Op]) -> None:
    """Each op has its own from_json, apply and describe: none is left abstract."""
    assert not inspect.isabstract(cls)
    for method in ("from_json", "apply", "describe"):
        assert method in cls.__dict__, f"{cls.__name__} lacks {method}"


def test_every_op_has_a_sample() -> None:
    assert set(SAMPLES) == set(OPS)


# Whether each op puts steps into next_steps (a patch with one never finishes the task,
# docs/archive.md); a new op must be named here too.
ADDS_STEPS: list[tuple[Op, bool]] = [
    (SetSection("next_steps", "- [ ] a step"), True),
    (SetSection("next_steps", "  \n "), False),  # empties it
    (SetSection("goal", "ship it"), False),
    (AddLine("next_steps", "another step"), True),
    (AddLine("next_steps", " "), False),
    (AddLine("open_issues", "- the cache is cold"), False),
    (RemoveLine("next_steps", "write"), False),
    (StartStep(1), False),
    (PauseStep(1), False),
    (FinishStep(1, "pytest passes"), False),
    (BlockStep(1, "waiting for review"), False),
    (AddStep("write the docs"), True),
]


def test_every_op_says_whether_it_adds_steps() -> None:
    assert {type(op) for op, _ in ADDS_STEPS} == set(OPS.values())
    for cls in OPS.values():
        assert "adds_steps" in cls.__dict__, f"{cls.__name__} does not say whether it adds steps"
    for op, adds in ADDS_STEPS:
        assert op.adds_steps is adds, op
        assert patch_uc.adds_steps(Patch((StartStep(1), op))) is adds, op


@pytest.mark.parametrize("name", list(SAMPLES))
def test_json_to_op_to_json_round_trips(name: str) -> None:
    data, op = SAMPLES[name]
    assert type(op) is OPS[name]
    assert op_from_json(1, data) == op
    assert op.as_json() == data
    assert from_json(json.dumps({"ops": [op.as_json()]})) == Patch((op,))


# Any well-formed op's JSON, by the field rules of Op: sections as keys or headings, steps as
# numbers or text, everything else any text (spaces, newlines and CJK included).
_sections = st.sampled_from(KEYS) | st.sampled_from(
    [h for lang in LANGUAGES.values() for h in lang.headings]
)
_steps = st.integers(1, 10**6) | fragment.filter(lambda text: not text.isdecimal())
_values = {"section": _sections, "step": _steps}


@st.composite
def op_json(draw: st.DrawFn) -> dict[str, object]:
    name = draw(st.sampled_from(list(SAMPLES)))
    data, _ = SAMPLES[name]
    return {
        "op": name,
        **{field: draw(_values.get(field, st.text())) for field in data if field != "op"},
    }


@given(op_json())
def test_any_op_read_from_json_survives_as_json(data: dict[str, object]) -> None:
    op = op_from_json(1, data)
    assert type(op) is OPS[str(data["op"])]
    assert op_from_json(1, op.as_json()) == op
    assert json.loads(json.dumps(op.as_json())) == op.as_json()


@pytest.mark.parametrize("name", list(SAMPLES))
def test_every_op_describes_itself_in_one_line(name: str) -> None:
    _, op = SAMPLES[name]
    line = op.describe()
    assert line and "\n" not in line
    assert Patch((op, op)).describe() == f"{line}; {line}"


@pytest.mark.parametrize("name", list(SAMPLES))
def test_every_op_applies_and_says_what_it_did(name: str) -> None:
    _, op = SAMPLES[name]
    result = apply(BASE, Patch((op,)))
    assert result.changed
    assert result.summary and "\n" not in result.summary
    assert render(BASE) != render(result.document)


def test_ops_of_different_kinds_with_the_same_fields_differ() -> None:
    """Why ops are frozen dataclasses, not NamedTuples: a tuple compares by its fields only."""
    kinds: list[tuple[Op, Op]] = [
        (SetSection("goal", "x"), AddLine("goal", "x")),
        (StartStep(1), PauseStep(1)),
    ]
    for one, other in kinds:
        assert one != other
    assert len({SetSection("goal", "x"), AddLine("goal", "x")}) == 2


def test_a_step_op_that_cannot_apply_is_a_patch_error() -> None:
    with pytest.raises(PatchError, match="there is no step 9"):
        apply(BASE, Patch((StartStep(9),)))


@pytest.mark.parametrize(
    "op",
    [
        {"op": "nope"},
        {"op": "Set"},
        {"op": 3},
        {"op": ["set"]},  # not a name at all (and not hashable)
        {"op": {"set": 1}},
        {"op": None},
        {"section": "goal", "text": "no op name"},
    ],
)
def test_an_unknown_op_is_one_usage_error_naming_every_op(op: dict[str, object]) -> None:
    with pytest.raises(UsageError) as info:
        from_json(json.dumps([{"op": "todo", "text": "fine"}, op]))
    error = info.value
    assert error.exit_code == EXIT_USAGE
    assert error.message.startswith("op 2: unknown op ")
    assert "\n" not in error.message
    assert error.hint == "ops: " + ", ".join(OPS)


def test_an_op_class_without_a_name_or_with_a_taken_one_is_refused() -> None:
    before = dict(OPS)
    with pytest.raises(TypeError, match="has no NAME"):

        class Nameless(AddStep):  # NAME is inherited, not its own
            pass

    with pytest.raises(TypeError, match="'todo' is AddStep's NAME"):

        class Twin(AddStep):
            NAME = "todo"

    assert before == OPS


def test_an_unknown_op_through_the_cli_moves_nothing(repo: Repo, cli: Any, tmp_path: Path) -> None:
    started = cli("patch", "--set", "goal=ship it", "--todo", "write the test")
    assert started.exit_code == 0, started.stderr
    refs = repo.git("for-each-ref", "--format=%(objectname) %(refname)", "refs/agy")
    view = repo.view.read_bytes()
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps({"ops": [{"op": "todo", "text": "x"}, {"op": "rename"}]}))

    result = cli("patch", "--ops", str(ops))

    assert result.exit_code == EXIT_USAGE, result.stderr
    assert result.stderr.splitlines() == [
        "error: op 2: unknown op 'rename'",
        "hint: ops: set, add, remove, start, pause, done, block, todo",
    ]
    assert repo.git("for-each-ref", "--format=%(objectname) %(refname)", "refs/agy") == refs
    assert repo.view.read_bytes() == view
