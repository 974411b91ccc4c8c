"""The `git agy-state` command line: a thin edge over the use cases.

Every failure leaves through `AgyGroup.main`: click's usage errors become UsageError (64), a
Ctrl-C Interrupted (130), and the error map (gitstate/error_map.py) says any exception as its
exit code and one `error:` line, or JSON; nothing here decides a code or a text of its own.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from gitstate import __version__
from gitstate.cli.output import report_error
from gitstate.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, AgyError, Interrupted, UsageError

# One module per command, named after it (`gitstate/cli/<name>.py` holds the click command
# `<name>`), loaded on first use so that running one command imports only what it needs (a save
# must not pay for log's difflib). Helper modules start with an underscore or are listed here.
NOT_COMMANDS = {"__init__", "__main__", "colour", "manpages", "output", "pager"}


def summary(command: click.Command) -> str:
    """The command's line in a command list: the first paragraph of its help, whole. Click would
    cut it at the column's width mid-phrase ("…"); its list wraps a long line instead."""
    if command.short_help:
        return " ".join(command.short_help.split())
    return " ".join((command.help or "").split("\n\n")[0].split())


def whole_summaries(command: click.Command) -> click.Command:
    """`command` (and every subcommand of a group) with its summary as its short help."""
    if command.short_help is None:
        command.short_help = summary(command)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            whole_summaries(sub)
    return command


def command_names() -> list[str]:
    folder = os.path.dirname(__file__)
    names = []
    for entry in os.listdir(folder):
        stem, ext = os.path.splitext(entry)
        if ext == ".py" and not stem.startswith("_") and stem not in NOT_COMMANDS:
            names.append(stem.replace("_", "-"))
    return sorted(names)


class AgyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(command_names()) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in command_names():
            return None
        module = importlib.import_module(f"gitstate.cli.{cmd_name.replace('-', '_')}")
        command = getattr(module, cmd_name.replace("-", "_"))
        assert isinstance(command, click.Command)
        return whole_summaries(command)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(args) if args is not None else sys.argv[1:]
        as_json = "--json" in argv
        try:
            code = super().main(
                args=argv,
                prog_name=prog_name or "git agy-state",
                complete_var=complete_var,
                standalone_mode=False,
                **extra,
            )
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else "")
            code = EXIT_OK
        except click.UsageError as exc:
            # `git agy-state --help` is git's `git help agy-state`, a man page only an installed
            # wheel has (docs/commands.md, "Help and man pages"); `help` is always there.
            hint = "git agy-state help"
            if exc.ctx is not None and exc.ctx.parent is not None:
                hint = f"{exc.ctx.command_path} --help"
            message = exc.format_message()
            code = report_error(UsageError(message[:1].lower() + message[1:], hint), as_json)
        except click.ClickException as exc:
            code = report_error(UsageError(exc.format_message()), as_json)
        except click.Abort:
            code = report_error(Interrupted("interrupted"), as_json)
        except BrokenPipeError:
            # The reader went away (git agy-state log | head): not our failure.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            code = EXIT_FAILURE
        except Exception as exc:
            if os.environ.get("AGY_DEBUG") and not isinstance(exc, AgyError):
                raise  # the traceback, also of an OS failure (its hint says where it happened)
            code = report_error(exc, as_json)
        if standalone_mode:
            sys.exit(code or EXIT_OK)
        return code


@click.group(cls=AgyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="git agy-state")
def main() -> None:
    """An AI coding agent's working memory, kept inside git.

    STATE.md at the root of the work tree is a view of the newest snapshot on refs/agy/state.
    `git agy-state help COMMAND` (or `git agy-state COMMAND --help`) says what a command does,
    and so does its man page (installed with the tool, an editable install too):

    \b
      man git-agy-state-COMMAND
    """


__all__ = ["EXIT_USAGE", "main"]
