"""The project as users install it: a wheel of this checkout in a fresh venv, for every bench.

An editable install adds a finder `.pth` that every interpreter start runs (it doubles `python
-c pass`), so the benches time subprocesses from a regular install instead, as pipx or uv make
it: `pip wheel --no-deps` of a copy of the checkout, then a new venv and `pip install` of that
wheel (pip resolves pygit2 and click from its configured index and cache). Standard library only.

    from install import build
    tool = build(root)            # once per bench run, into its temporary directory
                                  # (build(root, source) for another checkout: --source)
    tool.cli                      # [<venv>/bin/git-agy-state]: what `git agy-state …` runs
    tool.hook_argv                # [<venv>/bin/python, -I, -m, gitstate]: what git hooks run
    tool.agent_hook_argv()        # what agent hooks run: [<venv>/bin/python, -I, -c, import …]
    tool.python                   # <venv>/bin/python, for baselines in the same venv
    tool.environ(env)             # a sealed env for its subprocesses (no bytecode prefix)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
# Never copied into the build: VCS data, environments, caches, and setuptools' own build/
# directory, whose stale files (a module since moved or deleted) would end up in the wheel.
SKIP = (
    ".git", ".venv", ".ci-venv", "build", "dist", "*.egg-info", "__pycache__", ".mypy_cache",
    ".ruff_cache", ".hypothesis", ".import_linter_cache", ".coverage*", "tests", "bench",
)  # fmt: skip
PIP_TIMEOUT = 900  # seconds for one pip call: a cold cache may download pygit2's wheel


@dataclass(frozen=True)
class Install:
    """A venv holding the wheel: the commands agents, git and users run from it."""

    venv: Path
    wheel: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def script(self) -> Path:
        return self.venv / "bin" / "git-agy-state"

    @property
    def cli(self) -> list[str]:
        """The console script, which `git agy-state …` finds on PATH."""
        return [str(self.script)]

    @property
    def hook_argv(self) -> list[str]:
        """What `install --git` writes into the git hooks (gitstate/storage/githooks.py): the
        venv's interpreter in isolated mode, the package as a module."""
        return [str(self.python), "-I", "-m", "gitstate"]

    def agent_hook_argv(self) -> list[str]:
        """What `install --agent` writes into the agents' settings, asked of the install itself
        (gitstate/storage/launcher.py:hook_argv: `-c 'import gitstate.__main__'`, no
        runpy); an older checkout (`--source`) without that function wrote `hook_argv`."""
        ask = (
            "import json\n"
            "try:\n    from gitstate.storage.launcher import hook_argv\n"
            "except ImportError:\n    print('null')\n"
            "else:\n    print(json.dumps(hook_argv()))"
        )
        proc = subprocess.run(
            [str(self.python), "-I", "-c", ask], capture_output=True, text=True, check=True
        )
        found = json.loads(proc.stdout)
        return list(found) if found else self.hook_argv

    def environ(self, env: dict[str, str]) -> dict[str, str]:
        """`env` for this install's processes: its bin first on PATH (hooks that call
        `git-agy-state` find this one) and no PYTHONPYCACHEPREFIX, so the interpreter reads the
        bytecode pip compiled at install time, as it does for users."""
        out = {k: v for k, v in env.items() if k != "PYTHONPYCACHEPREFIX"}
        out["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
        out["VIRTUAL_ENV"] = str(self.venv)
        return out


def _run(argv: list[str], cwd: Path) -> None:
    # The caller's environment, not the sealed one: pip needs its config and cache in the real
    # HOME. PYTHON* variables are dropped so nothing leaks into the build or the venv.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    proc = subprocess.run(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=PIP_TIMEOUT, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed (exit {proc.returncode}):\n{proc.stderr}")


def add_source_option(parser: argparse.ArgumentParser) -> None:
    """`--source DIR`: time another checkout (a `git worktree` of an older commit gives the
    "before" table of a before/after pair); the fixtures are still built by this one."""
    parser.add_argument(
        "--source",
        metavar="DIR",
        type=Path,
        default=CHECKOUT,
        help="the checkout to build into the wheel and time (default: the bench's own)",
    )


def build(root: Path, source: Path = CHECKOUT, python: str = sys.executable) -> Install:
    """Build a wheel of `source` (uncommitted edits included) and install it into a new venv
    under `root`; about 25 s with a warm pip cache. `python` makes the venv and the wheel."""
    started = time.perf_counter()
    copy = root / "install-src"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns(*SKIP), symlinks=True)
    wheels = root / "install-wheel"
    _run([python, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(copy)], root)
    built = sorted(wheels.glob("*.whl"))
    if len(built) != 1:
        raise SystemExit(f"expected one wheel in {wheels}, found {[p.name for p in built]}")
    venv = root / "install-venv"
    _run([python, "-m", "venv", str(venv)], root)
    tool = Install(venv, built[0])
    _run([str(tool.python), "-m", "pip", "install", "-q", str(tool.wheel)], root)
    if not tool.script.exists():
        raise SystemExit(f"the wheel installed no console script at {tool.script}")
    shutil.rmtree(copy)
    elapsed = time.perf_counter() - started
    print(
        f"[bench] installed {tool.wheel.name} of {source} into a fresh venv in {elapsed:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    return tool
