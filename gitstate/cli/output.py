"""How the CLI speaks: JSON on stdout for machines, text on stdout, diagnostics on stderr.

The one place text meets the terminal: everything `say`, `note` and `report_error` print has its
control characters escaped (document/controls.py, docs/format.md), since stored text may come
from a teammate, a remote or an agent. JSON is escaped by json.dumps, and `emit_json` also
writes DEL, C1 and the bidi controls as `\\u` escapes (json.dumps leaves those raw). What an
error says, and its exit code, come from gitstate/error_map.py; `report_error` only prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gitstate import error_map
from gitstate.document.controls import escape, escape_json
from gitstate.errors import AgyError
from gitstate.storage import gitconfig

if TYPE_CHECKING:
    from gitstate.storage.snapshots import Store

F = TypeVar("F", bound=Callable[..., Any])


def json_option(func: F) -> F:
    """The one `--json` idiom: machine-readable output on stdout, a stable API."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")(func)


def short(sha: str | None) -> str:
    """An id as git abbreviates it here (`core.abbrev`; longer where ambiguous: storage/abbrev.py).
    Every id a command prints goes through here; `--json` prints full ids."""
    if not sha:
        return "none"
    from gitstate.storage import abbrev  # here: a command that prints no id does not load it

    store = _store()
    if store is None:
        return sha[: abbrev.configured(gitconfig.get(None, "core.abbrev"))]
    return abbrev.short_id(store, sha)


def _store() -> Store | None:
    """The repository of the current directory, opened once per command run (kept in click's
    context, so each invocation sees its own repository and config); None outside one."""
    ctx = click.get_current_context(silent=True)
    meta: dict[str, Any] = ctx.meta if ctx is not None else {}
    if "agy.store" not in meta:
        from gitstate.usecases.workspace import Workspace

        try:
            meta["agy.store"] = Workspace.open().store
        except AgyError:
            meta["agy.store"] = None
    found: Store | None = meta["agy.store"]
    return found


def emit_json(value: Any) -> None:
    import json  # only --json output pays for it

    click.echo(escape_json(json.dumps(value, ensure_ascii=False, indent=2)))


def say(text: str = "", nl: bool = True) -> None:
    """Text for a human on stdout, control characters escaped."""
    click.echo(escape(text), nl=nl)


def note(text: str) -> None:
    """A diagnostic on stderr, control characters escaped."""
    click.echo(escape(text), err=True)


def report_error(exc: BaseException, as_json: bool) -> int:
    """Say `exc` as the error map has it (JSON on stdout, or lines on stderr); its exit code."""
    if as_json:
        code, body = error_map.as_json(exc)
        emit_json(body)
        return code
    code, lines = error_map.text(exc)
    click.echo("\n".join(lines), err=True)
    return code
