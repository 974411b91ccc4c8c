"""The hermetic seal every test runs in, and the fixtures that make real repositories.

Temporary HOME and XDG dirs, no system or global git config (for git and for libgit2), a fixed
author and date, no editor, UTC. Repositories come from pytest-git's `GitRepo`, served here as
the `git_repo` fixture (see `_import_pytest_git`).
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pygit2
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Hypothesis' per-example deadline and its too_slow health check are timing assertions in
# disguise: on a loaded two-core machine they fail tests whose logic holds. The suite asserts no
# timings, so neither applies anywhere; explicit @settings still set the rest (examples…).
hypothesis_settings.register_profile(
    "agy-state", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("agy-state")

AUTHOR_DATE = "2026-01-02T03:04:05+00:00"


def _import_pytest_git() -> ModuleType:
    """pytest-git (and pytest-shutil under it) declare their fixtures with `@pytest.yield_fixture`,
    deprecated since pytest 6.2 and gone in pytest 10, where importing them fails and, as
    auto-loaded plugins, takes the whole run down. pyproject.toml keeps both plugins from loading
    (`-p no:git_repo -p no:workspace`); here they are imported with `yield_fixture` standing for
    `fixture` ("they are the same", says pytest), so no deprecated API is called and the import
    works on pytest 10 too. Only their `GitRepo` class is used, by the fixture below."""
    had = "yield_fixture" in vars(pytest)
    saved = vars(pytest).get("yield_fixture")
    pytest.yield_fixture = pytest.fixture  # type: ignore[attr-defined]
    try:
        return importlib.import_module("pytest_git")
    finally:
        if had:
            pytest.yield_fixture = saved  # type: ignore[attr-defined]
        else:
            del pytest.yield_fixture  # type: ignore[attr-defined]


_pytest_git = _import_pytest_git()


@pytest.fixture
def git_repo() -> Iterator[Any]:
    """pytest-git's `git_repo`: an empty repository (`git init`) in a temporary workspace,
    removed afterwards; `.workspace` is its path, `.api` a GitPython handle, `.uri` its URL."""
    with _pytest_git.GitRepo() as repo:
        yield repo


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(("GIT_", "AGY_", "CLAUDE_", "GEMINI_", "CODEX_")):
            monkeypatch.delenv(name)
    empty = home / ".empty"
    empty.mkdir()
    (home / ".gitconfig").write_text("")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_AUTHOR_NAME": "A U Thor",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_AUTHOR_DATE": AUTHOR_DATE,
        "GIT_COMMITTER_NAME": "A U Thor",
        "GIT_COMMITTER_EMAIL": "author@example.com",
        "GIT_COMMITTER_DATE": AUTHOR_DATE,
        "GIT_EDITOR": "false",
        "EDITOR": "false",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    # libgit2 reads its config search path once; point it at the sealed home for this test.
    levels = pygit2.enums.ConfigLevel
    pygit2.settings.search_path[levels.GLOBAL] = str(home)
    pygit2.settings.search_path[levels.XDG] = str(home / ".config")
    pygit2.settings.search_path[levels.SYSTEM] = str(empty)
    return home


# A test that asserts which modules a child process imports (by convention named
# *loads_neither* or *imports_neither*) cannot hold in a child that coverage measures: coverage
# imports typing and sqlite3 itself. Under `coverage run` (pyproject.toml) such children go
# unmeasured, and the test still judges them.
IMPORT_PROBE = re.compile(r"(loads|imports)_neither")


@pytest.fixture(autouse=True)
def unmeasured_import_probes(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if IMPORT_PROBE.search(request.node.name):
        monkeypatch.delenv("COVERAGE_PROCESS_CONFIG", raising=False)


@dataclass
class Repo:
    """A real repository in a temp dir (pytest-git), with shortcuts for driving git."""

    path: Path

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        proc = subprocess.run(
            ["git", *args],
            cwd=self.path,
            capture_output=True,
            text=True,
            input=input,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def commit(self, name: str = "file.txt", text: str = "hello\n", message: str = "c") -> str:
        (self.path / name).write_text(text)
        self.git("add", name)
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    @property
    def view(self) -> Path:
        return self.path / "STATE.md"

    def ref(self, name: str = "refs/agy/state") -> str | None:
        out = self.git("rev-parse", "--verify", "-q", name, check=False).strip()
        return out or None


@pytest.fixture
def empty_repo(git_repo: Any, hermetic: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Repo]:
    """A repository with no commit yet; the current directory is its work tree."""
    repo = Repo(Path(git_repo.workspace))
    # What `git symbolic-ref HEAD refs/heads/main` writes on an unborn branch, one git process
    # fewer per test (tests/test_fixtures.py holds it to git's).
    (repo.path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    monkeypatch.chdir(repo.path)
    yield repo


def initial_commit(path: Path) -> str:
    """`git add README && git commit -m initial` done in process with libgit2: the same blob,
    tree, commit (byte for byte: the fixed author and date), index entry and reflog line as
    git's, without three git processes per test that asks for `repo` (a third of the suite).
    tests/test_fixtures.py holds it to what git itself makes."""
    (path / "README").write_text("readme\n")
    git = pygit2.Repository(str(path))
    git.index.add("README")
    git.index.write()
    when = int(datetime.fromisoformat(AUTHOR_DATE).timestamp())
    who = pygit2.Signature("A U Thor", "author@example.com", when, 0)
    tree = git.index.write_tree()
    commit = str(git.create_commit("HEAD", who, who, "initial\n", tree, []))
    (path / ".git" / "COMMIT_EDITMSG").write_text("initial\n")  # as git commit leaves it
    return commit


@pytest.fixture
def repo(empty_repo: Repo) -> Repo:
    """A repository on branch main with one commit (README, "initial")."""
    initial_commit(empty_repo.path)
    return empty_repo


@pytest.fixture
def cli() -> Any:
    """Run `git agy-state ARGS…` in process (click's CliRunner); stdout and stderr apart."""
    from gitstate.cli import main

    def run(*args: str, input: str | bytes | None = None) -> Result:
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    return run
