"""`git agy-state help [COMMAND]...`: a command's help text, or the overview.

`git agy-state --help` is git's: it becomes `git help agy-state`, which shows the man page an
installed wheel carries (docs/commands.md, "Help and man pages"). This command needs no man page:
it prints the text `COMMAND --help` prints, from the same click command.
"""

from __future__ import annotations

import click

from gitstate.errors import UsageError


@click.command(name="help")
@click.argument("names", nargs=-1, metavar="[COMMAND]...")
def help(names: tuple[str, ...]) -> None:  # the command's name; no builtin is needed here
    """Print what COMMAND does (its --help text); with none, the overview and every command.

    A group's subcommand is named after it: `help memory search`."""
    context = click.get_current_context().find_root()
    for depth, name in enumerate(names):
        group = context.command
        found = group.get_command(context, name) if isinstance(group, click.Group) else None
        if found is None:
            asked = " ".join(names[: depth + 1])
            hint = "git agy-state help lists the commands"
            if depth:
                hint = f"git agy-state help {' '.join(names[:depth])} lists its subcommands"
            raise UsageError(f"no such command: {asked}", hint=hint)
        context = click.Context(found, info_name=name, parent=context)
    click.echo(context.get_help())
