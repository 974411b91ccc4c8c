"""The text-level TOML table editor Codex's config.toml needs (gitstate/agents/toml_table.py):
our table in and out, everything else byte for byte; a file it cannot read is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitstate.agents import toml_table
from gitstate.agents.toml_table import Unparsable

KEY = ("mcp_servers", "agy-state")
VALUES = {
    "command": "git",
    "args": ["agy-state", "mcp", "--repo", '/tmp/中文 | "q"'],
    "env": {"AGY_X": "1"},
}

FILES = [
    "",
    "\n",
    'model = "o3"',
    'model = "o3"\n',
    'model = "o3"\n\n\n',
    '# comment\nmodel = "o3"\n\n[projects."/x"]\ntrust_level = "trusted"\n',
    '[mcp_servers.other]\ncommand = "x"\n',
    '[mcp_servers.other]\ncommand = "x"\n\n[features]\nhooks = true',
    'text = """\n[mcp_servers.agy-state]\n"""\n',
    "[a]\r\nb = 1\r\n",
]


@pytest.mark.parametrize("text", FILES)
def test_insert_then_remove_gives_back_the_file_byte_for_byte(text: str) -> None:
    added = toml_table.upsert(text, KEY, VALUES, "config.toml")
    data = toml_table.loads(added, "t")
    assert data["mcp_servers"]["agy-state"] == VALUES
    assert toml_table.remove(added, KEY, "config.toml") == text


@pytest.mark.parametrize("text", FILES)
def test_replacing_the_table_touches_only_it(text: str) -> None:
    added = toml_table.upsert(text, KEY, VALUES, "config.toml")
    changed = toml_table.upsert(added, KEY, {"command": "/venv/bin/git-agy-state"}, "c")
    assert toml_table.loads(changed, "t")["mcp_servers"]["agy-state"] == {
        "command": "/venv/bin/git-agy-state"
    }
    assert toml_table.remove(changed, KEY, "config.toml") == text


def test_a_table_in_the_middle_is_replaced_in_place_with_its_sub_tables() -> None:
    text = (
        'model = "o3"\n\n[mcp_servers.agy-state]\ncommand = "old"\n\n'
        '[mcp_servers.agy-state.env]\nA = "1"\n\n[features]\nhooks = true\n'
    )
    new = toml_table.upsert(text, KEY, {"command": "git"}, "c")
    assert (
        new
        == 'model = "o3"\n\n[mcp_servers.agy-state]\ncommand = "git"\n\n[features]\nhooks = true\n'
    )
    assert toml_table.remove(new, KEY, "c") == 'model = "o3"\n\n[features]\nhooks = true\n'


def test_removing_what_is_not_there_changes_nothing() -> None:
    text = '[mcp_servers.other]\ncommand = "x"\n'
    assert toml_table.remove(text, KEY, "c") is text


def test_an_explicit_parent_table_stays_when_ours_goes() -> None:
    text = '[mcp_servers]\n\n[mcp_servers.agy-state]\ncommand = "git"\n'
    assert toml_table.remove(text, KEY, "c") == "[mcp_servers]\n"


def test_a_file_that_is_not_toml_is_refused() -> None:
    with pytest.raises(Unparsable, match="not valid TOML"):
        toml_table.upsert("model = \n", KEY, VALUES, "/h/.codex/config.toml")


def test_an_edit_that_would_change_more_than_our_table_is_refused() -> None:
    # The table is defined by dotted keys under [mcp_servers]: a header of ours would clash.
    text = '[mcp_servers]\nagy-state.command = "x"\n'
    with pytest.raises(Unparsable, match="safely"):
        toml_table.upsert(text, KEY, VALUES, "c")
    # A line of a multi-line array that reads as a header alone: the block would end there.
    text = '[mcp_servers.agy-state]\nargs = [\n["x"]\n]\n'
    with pytest.raises(Unparsable, match="safely"):
        toml_table.remove(text, KEY, "c")


def test_get_reads_the_table() -> None:
    added = toml_table.upsert("", KEY, VALUES, "c")
    assert toml_table.get(added, KEY, "c") == VALUES
    assert toml_table.get("", KEY, "c") is None


safe_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=20
)


@given(
    st.lists(st.tuples(st.from_regex(r"[a-z]{1,5}", fullmatch=True), safe_text), max_size=4),
    safe_text,
)
def test_any_strings_round_trip(pairs: list[tuple[str, str]], value: str) -> None:
    lines = "".join(f"{k} = {toml_table._value(v)}\n" for k, v in dict(pairs).items())
    added = toml_table.upsert(lines, KEY, {"command": value, "args": [value]}, "c")
    assert toml_table.loads(added, "t")["mcp_servers"]["agy-state"] == {
        "command": value,
        "args": [value],
    }
    assert toml_table.remove(added, KEY, "c") == lines
