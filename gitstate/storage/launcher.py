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
    return " ".join(shlex.quote(word) for word in argv(module))


def check() -> None:
    """Refuse to install a command that would not find this installation in isolated mode.

    A `pip install --user` lives in the user's site directory, which `-I` leaves out; writing a
    hook that then fails (or finds another copy) is worse than saying so now.
    """
    import gitstate

    want = os.path.realpath(gitstate.__file__)
    try:
        proc = subprocess.run(
            [sys.executable, ISOLATED, "-c", "import gitstate; print(gitstate.__file__)"],
            cwd=os.path.realpath(os.sep),  # nowhere near a work tree
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Failure(f"cannot run {sys.executable}: {exc}") from None
    found = proc.stdout.strip()
    if proc.returncode != 0 or not found or os.path.realpath(found) != want:
        raise Failure(
            f"{sys.executable} {ISOLATED} does not import this git-agy-state "
            f"({want}); hooks that run it would fail or run other code",
            hint="install it into a virtual environment, or with `pipx install` / `uv tool install`",
        )
