"""How the tool starts itself (agent hooks, the job supervisor): this interpreter in isolated mode.

`python -m gitstate` puts the current directory first on sys.path, and hooks and the supervisor run
inside the user's work tree, so a `gitstate/` folder on any checked-out branch would run in the
tool's place; PYTHONPATH and the user's site directory are the same hole from the environment.
`-I` closes all three (docs/security.md).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from gitstate.errors import Failure

ISOLATED = "-I"


def argv(module: str = "gitstate") -> list[str]:
    """The command line that runs `module` of this very installation, and nothing else."""
    return [sys.executable, ISOLATED, "-m", module]


def command(module: str = "gitstate") -> str:
    """`argv` as one shell word list, for settings files and hook scripts."""
    return words(argv(module))


# What the agent hooks' interpreter runs: the package's __main__ module, imported.
HOOK_CODE = "import gitstate.__main__"


def hook_argv() -> list[str]:
    """How the agent hooks run us: this interpreter, isolated, importing gitstate.__main__
    (docs/hooks.md, "Start-up cost").

    The same code as `argv()`, started without runpy: `-m` imports runpy, importlib.util and
    contextlib before the first line of ours, about a tenth of what an isolated interpreter that
    parses its JSON payload costs, on every agent turn. `-I` keeps the current directory off
    sys.path for `-c` as it does for `-m`, so `gitstate` is found in site-packages alone. No
    path to a file of the package is written: a reinstall onto another Python version moves
    site-packages, and a missing script makes the interpreter exit 2, which an agent CLI takes
    for a blocking answer; a missing package is exit 1, a failure the agent lets through, as
    with `-m`.
    """
    return [sys.executable, ISOLATED, "-c", HOOK_CODE]


def hook_command() -> str:
    """`hook_argv` as one shell word list, for the agents' settings files."""
    return words(hook_argv())


def words(argv: list[str]) -> str:
    return " ".join(shlex.quote(word) for word in argv)


def check(python: str = sys.executable, what: str = "hooks") -> None:
    """Refuse to install a command that would not find this installation in isolated mode.

    With `-I` a tool reachable only through PYTHONPATH or the user's site directory (`pip
    install --user`) is not found; writing a hook that then fails, or finds another copy, is
    worse than saying so now.
    """
    import gitstate

    want = os.path.realpath(gitstate.__file__)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTHON"))}
    try:
        proc = subprocess.run(
            [python, ISOLATED, "-c", "import gitstate.entry, gitstate; print(gitstate.__file__)"],
            cwd=os.path.realpath(os.sep),  # nowhere near a work tree
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        found = proc.stdout.strip()
        why = proc.stderr.strip().splitlines()[-1:] if proc.returncode else []
    except (OSError, subprocess.TimeoutExpired) as exc:
        found, why = "", [str(exc)]
    if found and os.path.realpath(found) != want:
        why = [f"it finds another copy, {found}"]
    if why or not found:
        raise Failure(
            f"{python} {ISOLATED} cannot import gitstate ({why[0] if why else 'no reason given'}); "
            f"the {what} run it that way, so none were installed",
            hint="install git-agy-state into a virtual environment or with pipx or uv tool "
            "(a --user install or PYTHONPATH is not seen in isolated mode), then install again",
        )
