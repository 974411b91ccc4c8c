"""The pager, as git starts it (docs/commands.md, "Colour and the pager").

Only on a terminal, never for `--json`, not with `--no-pager`, not when git already pages us
(GIT_PAGER_IN_USE: `git -p agy-state log`, or `pager.agy-state` set, which git itself honours
for an external command). Which pager: `pager.agy-state.<command>`, then `pager.agy-state`
(a boolean turns paging on or off, any other value is the pager), then GIT_PAGER, core.pager,
PAGER, and `less`; `cat` or an empty value means none (`git --no-pager` sets GIT_PAGER=cat).
LESS defaults to FRX and LV to -c, as git sets them: a page that fits the screen is not held.

The pager is a child process the user configured, run through the shell as git runs it. Our
stdout becomes the pipe to it; at exit the pipe is closed and the pager waited for, so the
prompt comes back only after the user quits it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gitstate.cli.colour import stdout_is_terminal, when

if TYPE_CHECKING:
    import subprocess

    from gitstate.usecases.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_PAGER = "less"


def pager_option(func: F) -> F:
    return click.option(
        "--no-pager", "no_pager", is_flag=True, help="Do not pipe the output into a pager."
    )(func)


def command(name: str, config: Callable[[str], str | None], default_on: bool) -> str | None:
    """The pager to run for command `name`, or None for no pager."""
    if os.environ.get("GIT_PAGER_IN_USE"):
        return None
    chosen: str | None = None
    on = default_on
    for key in (f"pager.agy-state.{name}", "pager.agy-state"):
        raw = config(key)
        if raw is None:
            continue
        switch = when(raw)
        if switch is not None and switch != "always":
            on = switch == "auto"
        else:
            chosen, on = raw, True
        break
    if not on:
        return None
    if chosen is None:
        chosen = os.environ.get("GIT_PAGER")
    if chosen is None:
        chosen = config("core.pager")
    if chosen is None:
        chosen = os.environ.get("PAGER")
    if chosen is None:
        chosen = DEFAULT_PAGER
    chosen = chosen.strip()
    return None if chosen in ("", "cat") else chosen


def start(ws: Workspace, name: str, no_pager: bool, as_json: bool, default_on: bool = True) -> None:
    """Page the rest of this command's stdout when the user would have git page it."""
    if no_pager or as_json or not _stdout_is_tty():
        return
    pager = command(name, ws.store.config_value, default_on)
    if pager is None:
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    env["GIT_PAGER_IN_USE"] = "true"  # what git tells its pager's children too
    import subprocess  # only a command that pages pays for it

    sys.stdout.flush()
    try:
        child = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return  # as git: a pager that cannot start leaves the output on the terminal
    assert child.stdin is not None
    saved = os.dup(sys.stdout.fileno())
    os.dup2(child.stdin.fileno(), sys.stdout.fileno())
    child.stdin.close()
    os.environ["GIT_PAGER_IN_USE"] = "true"  # colour decided after this still sees a terminal
    atexit.register(_finish, child, saved)


def _stdout_is_tty() -> bool:
    return stdout_is_terminal() and not os.environ.get("GIT_PAGER_IN_USE")


def _finish(child: subprocess.Popen[bytes], saved: int) -> None:
    with contextlib.suppress(BrokenPipeError, ValueError):  # the user quit the pager early
        sys.stdout.flush()
    os.dup2(saved, sys.stdout.fileno())  # closes our end of the pipe: the pager sees its end
    os.close(saved)
    try:
        child.wait()
    except KeyboardInterrupt:  # Ctrl-C is the pager's to handle; wait for it still
        child.wait()
