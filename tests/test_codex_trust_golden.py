"""Codex's hook trust hash, pinned to what the real Codex computes (docs/agents.md, "Codex").

gitstate/agents/codex_trust.py `handler_hash` and the fake (tests/fakes/fake_codex.py
`trust_hash`, its own code, not ours) both reconstruct an undocumented formula; each is checked
here against hashes the real CLI reported, so neither is tested against itself.

Provenance: codex-cli 0.171.0 (/tmp/codex/node_modules/.bin/codex), 2026-12-02, `codex
app-server` over stdio JSON-RPC (`initialize`, `initialized`, then `hooks/list` with `cwds`:
[a git repository]) with CODEX_HOME=/tmp/N2codex/home holding exactly this hooks.json:

    {"hooks":{"SessionStart":[{"matcher":"startup|resume|clear|compact","hooks":[{"type":
    "command","command":"git agy-state hook codex session-start","timeout":10}]}],"Stop":[{
    "hooks":[{"type":"command","command":"git agy-state hook codex stop"}]}],
    "UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo 中文 état",
    "statusMessage":"Loading state"}]}]}}

Each hook's `currentHash` (and `key`) as reported is below. The third covers what the first
experiment left open: a non-ASCII command (hashed as UTF-8, not \\u escapes) and a set
statusMessage (it enters the hash), with no timeout (600) and no matcher.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest

from gitstate.agents import codex_trust

HOOKS_FILE = Path("/tmp/N2codex/home/hooks.json")


class Golden(NamedTuple):
    event: str
    matcher: str | None
    handler: dict[str, Any]
    key: str  # hooks/list `key`
    hash: str  # hooks/list `currentHash`


GOLDEN = [
    Golden(
        "SessionStart",
        "startup|resume|clear|compact",
        {"type": "command", "command": "git agy-state hook codex session-start", "timeout": 10},
        f"{HOOKS_FILE}:session_start:0:0",
        "sha256:e5b18d031fe49ee44f1ad747e1a29cae5b252ed83ecdef1d006ee4c1be088147",
    ),
    Golden(
        "Stop",
        None,
        {"type": "command", "command": "git agy-state hook codex stop"},
        f"{HOOKS_FILE}:stop:0:0",
        "sha256:be1233f7d0f5674ba173548c2030bd5b1dde60cb86d4b3ade262235ed646d73a",
    ),
    Golden(
        "UserPromptSubmit",
        None,
        {"type": "command", "command": "echo 中文 état", "statusMessage": "Loading state"},
        f"{HOOKS_FILE}:user_prompt_submit:0:0",
        "sha256:c4b644859726a4ceafa0b5a7756fa140f581a0fded2e68677f9d228e67722a45",
    ),
]


def fake_codex() -> ModuleType:
    path = Path(__file__).parent / "fakes" / "fake_codex.py"
    spec = importlib.util.spec_from_file_location("fake_codex_golden", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda g: g.event)
def test_handler_hash_is_the_real_codex_current_hash(golden: Golden) -> None:
    assert codex_trust.handler_hash(golden.event, golden.matcher, golden.handler) == golden.hash


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda g: g.event)
def test_the_fake_codex_trust_hash_is_the_real_codex_current_hash(golden: Golden) -> None:
    fake = fake_codex()
    assert fake.trust_hash(golden.event, golden.matcher, golden.handler) == golden.hash


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda g: g.event)
def test_trust_keys_name_events_as_the_real_codex_does(golden: Golden) -> None:
    # Each golden hook is the only handler of its event's only group: indices 0 and 0.
    assert f"{HOOKS_FILE}:{codex_trust.snake(golden.event)}:0:0" == golden.key


def test_a_changed_command_or_timeout_is_not_the_golden_hash() -> None:
    # The hash covers what Codex says needs trust again; a formula ignoring them would pass above.
    g = GOLDEN[0]
    for change in ({"command": g.handler["command"] + " "}, {"timeout": 11}):
        assert codex_trust.handler_hash(g.event, g.matcher, {**g.handler, **change}) != g.hash
    assert codex_trust.handler_hash(g.event, "startup", g.handler) != g.hash
