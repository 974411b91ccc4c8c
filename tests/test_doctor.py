"""`doctor`: sound repositories pass; each kind of damage is found and named, nothing changed."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from conftest import Repo


def checks(cli: Any) -> tuple[int, dict[str, dict[str, Any]]]:
    result = cli("doctor", "--json")
    body = json.loads(result.stdout)
    return result.exit_code, {c["name"]: c for c in body["checks"]}


def test_a_fresh_repository_is_sound(repo: Repo, cli: Any) -> None:
    code, found = checks(cli)
    assert code == 0
    assert found["state chain"]["status"] == "ok"
    assert found["STATE.md"]["status"] == "ok"
    assert "doctor" not in repo.git("status", "--porcelain")


def test_a_working_repository_is_sound(repo: Repo, cli: Any) -> None:
    cli("init")
    cli("patch", "--set", "goal=G", "--todo", "a", "--start", "1")
    code, found = checks(cli)
    assert code == 0, found
    assert found["refs/agy/state"]["status"] == "ok"
    assert found["STATE.md"]["detail"] == "clean"
    assert "ok" in cli("doctor").stdout


def test_an_invalid_view_fails(repo: Repo, cli: Any) -> None:
    cli("patch", "--todo", "a")
    repo.view.write_text("garbage\n")
    code, found = checks(cli)
    assert code == 1
    assert found["STATE.md"]["status"] == "fail"
    assert found["STATE.md"]["hint"] == "git agy-state check"


def test_a_missing_reflog_and_a_foreign_commit_fail(repo: Repo, cli: Any) -> None:
    cli("patch", "--todo", "a")
    (repo.path / ".git" / "logs" / "refs" / "agy" / "state").unlink()
    repo.git("update-ref", "refs/agy/state", "HEAD")  # a code commit, not a snapshot
    code, found = checks(cli)
    assert code == 1
    detail = found["refs/agy/state"]["detail"]
    assert "no Agy-Format trailer" in detail


def test_leftovers_of_a_killed_writer_are_warnings(repo: Repo, cli: Any) -> None:
    cli("patch", "--todo", "a")
    lock = repo.path / ".git" / "refs" / "agy" / "state.lock"
    lock.write_text("x")
    old = time.time() - 60
    os.utime(lock, (old, old))
    (repo.path / ".STATE.md.agy-1-2.tmp").write_text("half")
    code, found = checks(cli)
    assert code == 0  # warnings do not fail
    assert found["ref locks"]["status"] == "warn"
    assert found["temp files"]["status"] == "warn"
    assert lock.exists()  # doctor changes nothing


def test_partial_git_hooks_and_a_missing_identity_warn(repo: Repo, cli: Any) -> None:
    cli("install", "--git")
    (repo.path / ".git" / "hooks" / "post-checkout").unlink()
    repo.git("remote", "add", "origin", str(repo.path / "nowhere.git"))
    _, found = checks(cli)
    assert found["git hooks"]["status"] == "warn"
    assert "post-checkout" in found["git hooks"]["detail"]
    assert found["remote"]["status"] == "warn"  # no user.email in the sealed config
    repo.git("config", "user.email", "me@example.com")
    repo.git("config", "agy.remote", "origin")  # no agy remote is advice (tests/test_push_scope.py)
    _, found = checks(cli)
    assert found["remote"]["status"] == "ok"
    assert "me-example.com" in found["remote"]["detail"]


def test_outside_a_repository(tmp_path: Any, cli: Any, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("doctor").exit_code == 6
