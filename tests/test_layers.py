"""The layer contracts (.importlinter; docs/architecture.md, "Layers") hold, and they bite.

`lint-imports` runs from the repository root in its own process, so the README's one test
command checks the layers too (.ci/run also runs it on its own). The second test plants one
forbidden import per contract in a copy of the package and expects that contract, by name, to
break: a contract whose module names matched nothing would pass for ever and check nothing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter", reason="import-linter is in the test extras (pyproject.toml)")

ROOT = Path(__file__).resolve().parent.parent
# lint-imports' own console entry point, run by this interpreter: no PATH lookup, and with
# `-c` the working directory comes first on sys.path, so a copy of the package is the one read.
LINT = [
    sys.executable,
    "-c",
    "from importlinter.cli import lint_imports_command; lint_imports_command()",
    "--no-cache",
    "--no-logo",
]


def lint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LINT, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=300
    )


def test_the_contracts_hold() -> None:
    proc = lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# (module to write into the copy, the line it gets, the contract that must then break)
PLANTED = [
    ("gitstate/document/model.py", "import pygit2", "pygit2-only-in-storage"),
    ("gitstate/storage/lock.py", "import click", "click-only-in-cli"),
    ("gitstate/storage/lock.py", "import gitstate.usecases.workspace", "core-layers"),
    ("gitstate/agents/base.py", "import gitstate.usecases.workspace", "core-layers"),
    ("gitstate/cli/error.py", "import gitstate.cli.decide", "cli-commands"),
    ("gitstate/cli/output.py", "import gitstate.cli.archive", "cli-commands"),
    ("gitstate/memory/document/core.py", "import gitstate.jobs.document", "slices-independent"),
    ("gitstate/jobs/storage/doorbell.py", "import gitstate.jobs.usecases", "slices-layers"),
    (
        "gitstate/memory/usecases/read.py",
        "import gitstate.usecases.sync",
        "slices-use-only-core-primitives",
    ),
    ("gitstate/errors.py", "import gitstate.memory", "lower-layers-know-no-slice"),
    # Reached through a module of storage's own that imports pygit2 (written below).
    (
        "gitstate/hooks/frame.py",
        "import gitstate.storage.planted",
        "hook-path-imports-no-pygit2-click",
    ),
    (
        "gitstate/agents/claude.py",
        "import gitstate.storage.planted",
        "hook-path-imports-no-pygit2-click",
    ),
    (
        "gitstate/memory/storage/fts.py",
        "import gitstate.storage.planted",
        "memory-search-path-imports-no-pygit2-click",
    ),
]


@pytest.mark.parametrize(
    ("module", "line", "contract"), PLANTED, ids=[f"{p[2]}:{p[0]}" for p in PLANTED]
)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    copy = tmp_path / "gitstate"
    shutil.copytree(ROOT / "gitstate", copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    (copy / "storage" / "planted.py").write_text("import pygit2\n", encoding="utf-8")
    target = tmp_path / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    proc = lint(tmp_path, "--contract", contract)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # The planted import itself is named: the copy was read, and this contract caught it.
    importer = module.removesuffix(".py").replace("/", ".")
    imported = line.split()[-1]
    assert f"{importer} -> {imported}" in proc.stdout, proc.stdout + proc.stderr
