"""Colour in human output, as git decides it (docs/commands.md, "Colour and the pager").

`--color[=WHEN]` / `--no-color` first; then `NO_COLOR` (no-color.org), which only an explicit
`always` in the config overrides (a `color.ui = auto` many people keep is no request for colour);
then `color.agy-state`, then `color.ui`; unset means `auto`: colour when stdout is a terminal
(or a pager git started for us, GIT_PAGER_IN_USE) whose TERM is not `dumb`. JSON is never
coloured: commands ask here only for their human output.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gitstate.document.controls import escape

if TYPE_CHECKING:
    from gitstate.usecases.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])

# git's default colour slots (git-config(1), color.diff.* and color.decorate.*).
SLOTS = {
    "commit": "33",  # commit ids: yellow
    "meta": "1",  # diff headers: bold
    "frag": "36",  # @@ hunk headers: cyan
    "old": "31",  # removed lines: red
    "new": "32",  # added lines: green
    "phase": "1;36",  # decorations, as git's HEAD: bold cyan
    "clean": "32",
    "dirty": "31",
    "heading": "1",
    "graph": "31",
}
_BOOLEAN = {"true": "auto", "yes": "auto", "on": "auto", "1": "auto", "auto": "auto"}
_BOOLEAN.update({"false": "never", "no": "never", "off": "never", "0": "never"})
_BOOLEAN.update({"always": "always", "never": "never"})


def colour_options(func: F) -> F:
    """`--color[=WHEN]` (WHEN: always, never, auto; bare: always) and `--no-color`, as git log;
    the command gets `colour_option`: the WHEN asked for, or None."""

    @functools.wraps(func)
    def combined(*args: Any, **kwargs: Any) -> Any:
        if kwargs.pop("no_colour"):
            kwargs["colour_option"] = "never"
        return func(*args, **kwargs)

    with_no = click.option("--no-color", "no_colour", is_flag=True, help="As --color=never.")
    return click.option(
        "--color",
        "colour_option",
        type=click.Choice(["always", "never", "auto"]),
        is_flag=False,
        flag_value="always",
        default=None,
        metavar="[=WHEN]",
        help="Colour: always (a bare --color), never, or auto (on a terminal).",
    )(with_no(combined))  # type: ignore[return-value]


def when(raw: str | None) -> str | None:
    """A config value as always/never/auto (git's booleans: true means auto); None if unset or
    not one of them."""
    return None if raw is None else _BOOLEAN.get(raw.strip().lower())


def stdout_is_terminal() -> bool:
    if os.environ.get("GIT_PAGER_IN_USE", "").lower() in ("true", "1", "yes"):
        return True
    try:
        return os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a captured stream has no descriptor
        return False


def wanted(option: str | None, config: Callable[[str], str | None]) -> bool:
    """Whether to colour, from the option and the config (see the module's note)."""
    if option is not None:
        choice = option
    else:
        configured = when(config("color.agy-state")) or when(config("color.ui"))
        if os.environ.get("NO_COLOR") and configured != "always":
            return False
        choice = configured or "auto"
    if choice != "auto":
        return choice == "always"
    return stdout_is_terminal() and os.environ.get("TERM") != "dumb"


class Paint:
    """Builds lines of escaped text with colour around some pieces (or none, when off)."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, slot: str, text: str) -> str:
        """`text` escaped (document/controls.py), in the colour of `slot` when on."""
        shown = escape(text)
        if not self.on or not shown:
            return shown
        return f"\033[{SLOTS[slot]}m{shown}\033[m"

    def plain(self, text: str) -> str:
        return escape(text)


def choose(ws: Workspace, option: str | None) -> Paint:
    return Paint(wanted(option, ws.store.config_value))


def echo(line: str = "", nl: bool = True) -> None:
    """Print a line built by Paint (already escaped): click must keep its colour codes."""
    click.echo(line, nl=nl, color=True)
