"""The console script's entry point: agent hooks take a fast path around click.

`git agy-state hook inject|stop-guard|pre-compact` runs on every agent turn; importing click
(and, through the commands, pygit2) would cost more than the hook itself. So would it for
`memory search` (and `memory index`), which gitstate/memory/search_cli.py runs in their usual
forms. Everything else goes to the click command line.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def leave(code: int) -> NoReturn:
    """Exit with `code` once the answer is written, without the interpreter's last garbage
    collection: at shutdown CPython collects every generation but the permanent one, which
    gc.freeze() moves everything into. That collection finds nothing a hook left (its files are
    closed, stdout is flushed at exit either way) and costs about a tenth of the hook floor
    (docs/hooks.md, "Start-up cost")."""
    import gc

    gc.freeze()
    sys.exit(code)


def main() -> None:
    argv = sys.argv[1:]
    if (
        len(argv) >= 2
        and argv[0] == "hook"
        and argv[1] in ("inject", "stop-guard", "pre-compact")
        and not {"-h", "--help"} & set(argv)
    ):
        from gitstate.hooks.agent import run

        leave(run(argv[1:]))
    if argv[:1] == ["memory"] and argv[1:2] in (["search"], ["index"]):  # no click needed
        from gitstate.memory.search_cli import run as memory_run

        code = memory_run(argv[1], argv[2:])
        if code is not None:
            sys.exit(code)
    from gitstate.cli import main as cli_main

    cli_main()
