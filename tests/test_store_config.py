"""Store holds one config wrapper for its life (snapshots.Store.config): it must still read
every value as a fresh `repo.config` would — a change made by git meanwhile, its own writes,
a removed key, and `git -c` values over all of them."""

from __future__ import annotations

import pytest
from conftest import Repo

from gitstate.storage.layout import discover
from gitstate.storage.snapshots import Store


def _store(repo: Repo) -> Store:
    layout = discover(repo.path)
    assert layout is not None
    return Store(layout)


def test_a_change_git_makes_meanwhile_is_read(repo: Repo) -> None:
    store = _store(repo)
    assert store.config_value("agy.language") is None
    repo.git("config", "agy.language", "de")
    assert store.config_value("agy.language") == "de"
    repo.git("config", "agy.language", "fr")
    assert store.config_value("agy.language") == "fr"
    repo.git("config", "--unset", "agy.language")
    assert store.config_value("agy.language") is None


def test_its_own_writes_are_read_back_and_seen_by_git(repo: Repo) -> None:
    store = _store(repo)
    store.set_config("agy.maxConcurrent", "5")
    assert store.config_value("agy.maxconcurrent") == "5"
    assert repo.git("config", "agy.maxConcurrent").strip() == "5"
    assert store.config is store.config  # one wrapper, not one per lookup


def test_command_line_values_still_win(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(repo)
    repo.git("config", "core.abbrev", "9")
    assert store.config_value("core.abbrev") == "9"
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.abbrev'='12'")
    assert store.config_value("core.abbrev") == "12"
