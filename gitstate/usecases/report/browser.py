"""Opening a written page in the user's browser, as `git help --web` does (docs/report.md).

`web.browser` names the browser; `browser.<name>.cmd` (run by the shell, the page's path
appended) or `browser.<name>.path` says how to start it, else the name itself is the program.
Without `web.browser`: `open` on macOS, else `xdg-open`.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from gitstate.errors import Failure
from gitstate.usecases.workspace import Workspace

WAIT = 10.0  # seconds a launcher may take to hand the page over; a browser left running is fine


def command(ws: Workspace, page: Path) -> list[str]:
    """The argv that opens `page`."""
    config = ws.store.config_value
    name = config("web.browser")
    if name:
        cmd = config(f"browser.{name}.cmd")
        if cmd:
            return ["/bin/sh", "-c", f'{cmd} "$@"', cmd, str(page)]
        program = config(f"browser.{name}.path") or name
    else:
        program = "open" if sys.platform == "darwin" else "xdg-open"
    if shutil.which(program) is None:
        raise Failure(
            f"cannot open the page: {program} is not on PATH",
            hint=f"open {page} yourself, or set web.browser (git config web.browser firefox)",
        )
    return [program, str(page)]


def open_page(ws: Workspace, page: Path) -> None:
    argv = command(ws, page)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        raise Failure(f"cannot start {shlex.join(argv[:1])}: {exc.strerror}") from None
    try:
        code = proc.wait(WAIT)
    except subprocess.TimeoutExpired:
        return  # a browser that stays in the foreground: it has the page
    if code != 0:
        raise Failure(
            f"{argv[0]} exited with {code}; the page is at {page}",
            hint="set web.browser to your browser: git config web.browser firefox",
        )
