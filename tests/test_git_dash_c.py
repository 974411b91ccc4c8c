"""Config given with `git -c` (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT) wins over every file,
as in git (docs/commands.md, "Colour and the pager"; issue 14). The environment is the one git
itself hands a subcommand, taken from a real `git -c … <alias>`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from test_cli_reads_like_git import first_ids, start
from test_cli_terminal import ESC, YELLOW, chain, pager_script, run_on_terminal  # noqa: F401

from gitstate.storage import cmdconfig


def git_passes(repo: Repo, *pairs: str) -> str:
    """GIT_CONFIG_PARAMETERS as git sets it for `git -c PAIR … subcommand`."""
    args = [a for pair in pairs for a in ("-c", pair)]
    shown = repo.git(*args, "-c", "alias.agy-env=!printenv GIT_CONFIG_PARAMETERS", "agy-env")
    return shown.rstrip("\n")


def test_the_parameters_parse_as_git_writes_them(repo: Repo) -> None:
    text = git_passes(repo, "Color.UI=never", "a.b", "x.y=it's", "s.Sub.K=", "q.r=a b=c")
    found = cmdconfig.overrides({"GIT_CONFIG_PARAMETERS": text})
    assert found["color.ui"] == "never"
    assert found["a.b"] == "true"  # `-c key` alone is a boolean true
    assert found["x.y"] == "it's"
    assert found["s.Sub.k"] == ""  # subsection as written, the name lower case
    assert found["q.r"] == "a b=c"
    # the older form, one quoted word per entry, and the later entry winning
    old = cmdconfig.overrides({"GIT_CONFIG_PARAMETERS": "'core.abbrev=9' 'core.abbrev=11'"})
    assert old == {"core.abbrev": "11"}
    both = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.abbrev",
        "GIT_CONFIG_VALUE_0": "5",
        "GIT_CONFIG_PARAMETERS": "'core.abbrev'='6'",
    }
    assert cmdconfig.value("core.abbrev", both) == "6"  # as git: -c after the COUNT entries
    assert cmdconfig.value("core.abbrev", {"GIT_CONFIG_PARAMETERS": "'unterminated"}) is None


def test_abbrev_from_git_dash_c_and_the_count_form(
    repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    start(cli)
    tip = repo.ref()
    assert tip is not None
    repo.git("config", "core.abbrev", "12")  # the file says 12; the command line wins
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", git_passes(repo, "core.abbrev=10"))
    assert first_ids(cli("log", "--oneline").stdout)[0] == tip[:10]
    assert f"written from: {tip[:10]} (the tip)" in cli("status").stdout
    monkeypatch.delenv("GIT_CONFIG_PARAMETERS")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.abbrev")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "no")
    assert first_ids(cli("log", "--oneline").stdout)[0] == tip
    monkeypatch.delenv("GIT_CONFIG_COUNT")
    assert first_ids(cli("log", "--oneline").stdout)[0] == tip[:12]


def test_colour_off_with_git_dash_c_on_a_terminal(chain: Repo) -> None:  # noqa: F811
    assert YELLOW in run_on_terminal(chain, "log", "--no-pager")[1]
    never = {"GIT_CONFIG_PARAMETERS": git_passes(chain, "color.ui=never")}
    assert ESC not in run_on_terminal(chain, "log", "--no-pager", env=never)[1]
    chain.git("config", "color.ui", "never")
    always = {"GIT_CONFIG_PARAMETERS": git_passes(chain, "color.ui=always")}
    assert YELLOW in run_on_terminal(chain, "log", "--no-pager", env=always)[1]
    counted = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "color.ui",
        "GIT_CONFIG_VALUE_0": "auto",
    }
    assert YELLOW in run_on_terminal(chain, "log", "--no-pager", env=counted)[1]


def test_the_pager_from_git_dash_c(chain: Repo, tmp_path: Path) -> None:  # noqa: F811
    pager, paged, _env = pager_script(tmp_path)
    chain.git("config", "core.pager", "false")  # the file's pager would fail; -c wins
    env = {"GIT_CONFIG_PARAMETERS": git_passes(chain, f"core.pager={pager}")}
    code, shown = run_on_terminal(chain, "log", env=env)
    assert code == 0, shown
    assert "patch: todo: ship it" in paged.read_text()
    assert "ship it" not in shown
