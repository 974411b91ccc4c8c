"""Git is touched only in storage (issue 11; docs/architecture.md): no use case and no edge
assembles a git command line of its own.

Import contracts (.importlinter) cannot say this: gitcli is a storage module the use cases may
import (for its typed questions), and what is forbidden is one call, `gitcli.run(…)` with a git
subcommand. So this test reads the source: any call of gitcli.run / gitcli.run_in, and any
subprocess call whose argv starts with "git", outside storage fails it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "gitstate"
# The layers above storage, in the core and in both slices, and the edges.
ABOVE_STORAGE = ("usecases", "memory/usecases", "jobs/usecases", "cli", "hooks")
_GITCLI_RUNNERS = frozenset({"run", "run_in"})
_SUBPROCESS_CALLS = frozenset({"run", "Popen", "call", "check_call", "check_output"})
# Calls still to be moved behind storage, each named by file and line text. This list may only
# shrink: a new entry is a new git command line outside storage.
KNOWN: frozenset[tuple[str, str]] = frozenset()


def _is_git_argv(node: ast.expr) -> bool:
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return False
    first = node.elts[0]
    return isinstance(first, ast.Constant) and first.value == "git"


def git_calls(source: str) -> list[tuple[int, str]]:
    """(line, what) for each git command line the source builds itself."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("gitcli"):
            for alias in node.names:
                if alias.name in _GITCLI_RUNNERS:
                    found.append((node.lineno, f"imports gitcli.{alias.name}"))
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        if not isinstance(owner, ast.Name):
            continue
        name = node.func.attr
        if owner.id == "gitcli" and name in _GITCLI_RUNNERS:
            found.append((node.lineno, f"gitcli.{name}(…)"))
        elif (
            owner.id == "subprocess"
            and name in _SUBPROCESS_CALLS
            and node.args
            and _is_git_argv(node.args[0])
        ):
            found.append((node.lineno, f"subprocess.{name}(['git', …])"))
    return found


def _sources() -> list[Path]:
    files = [p for sub in ABOVE_STORAGE for p in sorted((ROOT / sub).rglob("*.py"))]
    assert files, "the layers above storage hold no Python files: wrong root?"
    return files


def test_no_git_command_line_above_storage() -> None:
    offending = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for lineno, what in git_calls(text):
            rel = path.relative_to(ROOT.parent).as_posix()
            if (rel, lines[lineno - 1].strip()) in KNOWN:
                continue
            offending.append(f"{rel}:{lineno}: {what}")
    assert not offending, (
        "git command lines outside storage (ask a storage function by intent instead):\n"
        + "\n".join(offending)
    )


@pytest.mark.parametrize(
    "planted",
    [
        'gitcli.run(ws.layout, "merge-base", "--", a, b)',
        'gitcli.run_in(path, path, "fetch", "--", remote)',
        'subprocess.run(["git", "diff", "--name-status"], check=True)',
        'subprocess.Popen(("git", "push"))',
        "from gitstate.storage.gitcli import run",
    ],
)
def test_the_check_sees_a_planted_git_call(planted: str) -> None:
    assert git_calls(planted)


@pytest.mark.parametrize(
    "harmless",
    [
        "gitcli.config(ws.layout, 'user.email')",
        "subprocess.run(['ps', '-o', 'ppid='])",
        "network.push(ws.layout, remote, specs)",
    ],
)
def test_the_check_passes_storage_questions_and_other_programs(harmless: str) -> None:
    assert not git_calls(harmless)
