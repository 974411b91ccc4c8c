"""The task base travels on every snapshot, so post-commit never walks the chain (docs/hooks.md).

post-commit runs on every `git commit`: with a 100,000-snapshot task, walking back to the task's
first snapshot made each commit seconds slower. The `Agy-Task-Base` trailer carries the HEAD the
task began at; these tests pin where it comes from, that it is what post-commit reads, and that a
chain written before the trailer existed still works.
"""

from __future__ import annotations

from typing import Any

from conftest import Repo
from support import EN_SAMPLE

from gitstate.storage.layout import discover
from gitstate.storage.snapshots import FORMAT_VERSION, Store, compose_message
from gitstate.usecases.state.changed_files import refresh
from gitstate.usecases.state.writer import TASK_BASE, task_base
from gitstate.usecases.workspace import Workspace


def trailer(repo: Repo, rev: str = "refs/agy/state") -> str | None:
    body = repo.git("log", "-1", "--format=%B", rev)
    for line in body.splitlines():
        if line.startswith(f"{TASK_BASE}: "):
            return line.split(": ", 1)[1]
    return None


def test_every_snapshot_of_a_task_carries_where_it_began(repo: Repo, cli: Any) -> None:
    began = repo.git("rev-parse", "HEAD").strip()
    assert cli("patch", "--set", "goal=one", "--todo", "a", "--start", "1").exit_code == 0
    assert trailer(repo) == began
    repo.commit("x.txt", "x\n", "work")
    assert cli("patch", "--add", "open_issues=still going").exit_code == 0
    assert cli("phase", "PLANNING").exit_code == 0
    for rev in ("refs/agy/state", "refs/agy/state~1", "refs/agy/state~2"):
        assert trailer(repo, rev) == began, rev


def test_a_new_task_after_an_archive_begins_at_the_new_head(repo: Repo, cli: Any) -> None:
    assert cli("patch", "--set", "goal=first", "--todo", "a").exit_code == 0
    assert cli("archive").exit_code == 0
    later = repo.commit("y.txt", "y\n", "between tasks")
    assert cli("patch", "--set", "goal=second", "--todo", "b").exit_code == 0
    assert trailer(repo) == later


def test_before_any_commit_the_base_is_none(empty_repo: Repo, cli: Any) -> None:
    assert cli("patch", "--set", "goal=early", "--todo", "a").exit_code == 0
    assert trailer(empty_repo) == "none"
    layout = discover(empty_repo.path)
    assert layout is not None
    store = Store(layout)
    tip = store.tip()
    assert tip is not None and task_base(store, tip) is None


def test_post_commit_reads_the_trailer_not_the_history(repo: Repo, cli: Any) -> None:
    """The tip's trailer wins over what the first snapshot recorded: nothing walked it."""
    assert cli("patch", "--set", "goal=g", "--todo", "a").exit_code == 0
    repo.commit("early.txt", "e\n", "early")
    recorded_later = repo.commit("late.txt", "l\n", "late")
    layout = discover(repo.path)
    assert layout is not None
    store = Store(layout)
    tip = store.tip()
    assert tip is not None
    data = store.state_bytes(tip)
    assert data is not None
    forged = store.create_snapshot(
        data,
        [tip],
        compose_message(
            "forged base", [("Agy-Format", FORMAT_VERSION), (TASK_BASE, recorded_later)]
        ),
    )
    assert store.compare_and_swap(layout.state_ref, tip, forged, "test")
    ws = Workspace(layout)
    written = refresh(ws)
    assert written is not None
    lines = [
        line for line in repo.git("show", "refs/agy/state:STATE.md").splitlines()
        if line.startswith("- ")
    ]  # fmt: skip
    # Only late.txt changed since the recorded base; the walk would have said early.txt too.
    assert "- A late.txt" not in lines and "- A early.txt" not in lines


def test_a_chain_from_before_the_trailer_is_walked_once(repo: Repo, cli: Any) -> None:
    began = repo.git("rev-parse", "HEAD").strip()
    layout = discover(repo.path)
    assert layout is not None
    store = Store(layout)
    text = EN_SAMPLE.encode()
    old = store.create_snapshot(
        text, [], compose_message("old", [("Agy-Format", FORMAT_VERSION), ("Agy-Head", began)])
    )
    older_tip = store.create_snapshot(
        text, [old], compose_message("older", [("Agy-Format", FORMAT_VERSION)])
    )
    assert store.compare_and_swap(layout.state_ref, None, older_tip, "test")
    assert task_base(store, older_tip) == began
    repo.commit("z.txt", "z\n", "work")
    assert cli("patch", "--add", "open_issues=carried on").exit_code == 0
    assert trailer(repo) == began
