"""The job records' storage side: taking back what a failed submission left (docs/jobs.md)."""

from __future__ import annotations

from conftest import Repo

from gitstate.jobs.storage import records
from gitstate.storage.layout import discover
from gitstate.storage.snapshots import Store


def _store(repo: Repo) -> Store:
    layout = discover(repo.path)
    assert layout is not None
    return Store(layout)


def test_a_seeded_chain_is_taken_back_and_only_once(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD").strip()
    repo.git("update-ref", "refs/agy/wt/j-abc/state", head)
    store = _store(repo)
    assert records.delete_chain(store, "j-abc") is True
    assert repo.git("for-each-ref", "refs/agy/wt/").strip() == ""
    assert records.delete_chain(store, "j-abc") is False


def test_a_symbolic_chain_ref_is_left_alone(repo: Repo) -> None:
    repo.git("symbolic-ref", "refs/agy/wt/j-abc/state", "refs/heads/main")
    store = _store(repo)
    assert records.delete_chain(store, "j-abc") is False
    assert repo.git("symbolic-ref", "refs/agy/wt/j-abc/state").strip() == "refs/heads/main"
