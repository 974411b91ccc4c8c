"""storage/gitconfig.py: the hooks' config reader parses as the regular expressions it replaced.

The two patterns below are the reader's former grammar, kept here as the oracle: the hand
parser must split every line the same way (section, subsection as written, rest; key, value).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from gitstate.storage import gitconfig
from gitstate.storage.hooklayout import HookLayout

SECTION_RE = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
ENTRY_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")

EDGE_LINES = [
    "[agy]",
    "  [ agy ]  ",
    '[agy "sub"]',
    '[agy  "s\\"u]b"] key = v',
    '[agy"sub"]',
    '[agy "sub]',
    '[agy "sub\\',
    '[agy "a\\\\"] x',
    "[a.b-c]x=1",
    "[]",
    "[ ]",
    "[agy",
    "[agy x]",
    "\u00a0[agy]\u3000rest",
    "key",
    "key  ",
    "key x",
    "key=",
    "key = value ; c",
    "  Key-2=v",
    "2key=v",
    "-key=v",
    "\u0130key=v",
    "k\u00e9y=v",
    "=v",
    "",
]
ALPHABET = ["[", "]", '"', "\\", " ", "\t", "\u00a0", "=", "a", "Z", "0", ".", "-", "_", "é", "#"]


def oracle_header(line: str) -> tuple[str, str, str] | None:
    match = SECTION_RE.match(line)
    return None if match is None else (match.group(1), match.group(2) or "", match.group(3))


def oracle_entry(line: str) -> tuple[str, str | None] | None:
    match = ENTRY_RE.match(line)
    return None if match is None else (match.group(1), match.group(2))


def lines() -> list[str]:
    chooser = random.Random(13)
    found = list(EDGE_LINES)
    for _ in range(4000):
        found.append("".join(chooser.choice(ALPHABET) for _ in range(chooser.randint(0, 12))))
    for _ in range(2000):  # header-shaped: more of them reach the subsection rules
        body = "".join(chooser.choice(ALPHABET) for _ in range(chooser.randint(0, 8)))
        found.append(f'{chooser.choice(["", " "])}[agy{chooser.choice(["", " ", "  "])}"{body}')
    return found


def test_header_and_entry_split_lines_as_the_former_patterns() -> None:
    found = lines()
    # The sample reaches every rule: headers with and without a subsection, entries with and
    # without a value, and lines that are neither.
    headers = [oracle_header(line) for line in found]
    entries = [oracle_entry(line) for line in found]
    assert sum(1 for h in headers if h is not None and h[1]) > 10
    assert sum(1 for h in headers if h is not None and not h[1]) > 10
    assert sum(1 for e in entries if e is not None and e[1] is not None) > 10
    assert sum(1 for e in entries if e is not None and e[1] is None) > 10
    differ = [
        line
        for line in found
        if gitconfig._header(line) != oracle_header(line)
        or gitconfig._entry(line) != oracle_entry(line)
    ]
    assert differ == []


def test_several_keys_in_one_pass_equal_one_key_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\temail = me@example.com\n[agy]\n\tlanguage = en\n")
    gitdir = tmp_path / "repo" / ".git"
    gitdir.mkdir(parents=True)
    (gitdir / "config").write_text(
        '[agy]\n\tinjectBudget = 2k\n\tLanguage = zh-TW ; comment\n[agy "x"]\n\tflag\n'
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    layout = HookLayout(str(tmp_path / "repo"), str(gitdir), str(gitdir), None)
    keys = ("user.email", "agy.injectBudget", "agy.language", "agy.x.flag", "agy.none")
    many = gitconfig.get_many(layout, keys)
    assert many == {key: gitconfig.get(layout, key) for key in keys}
    assert many == {
        "user.email": "me@example.com",
        "agy.injectBudget": "2k",
        "agy.language": "zh-TW",
        "agy.x.flag": "true",
        "agy.none": None,
    }
    assert gitconfig.as_int(many["agy.injectBudget"], 0) == 2048
    # The pathlib Layout reads the same files.
    assert gitconfig.get_many(layout.to_layout(), keys) == many
