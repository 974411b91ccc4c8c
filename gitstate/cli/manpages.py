"""The man pages, written from the click commands: one source, the commands' own help text.

git-agy-state(1) is the overview; every top-level command has its page, git-agy-state-NAME(1),
and a group's page holds its subcommands, as git-remote(1) holds `git remote add`. setup.py runs
`write` when a wheel is built and installs the pages under share/man/man1, where `man` and
`git help agy-state` (which `git agy-state --help` becomes) look (docs/commands.md, "Help and man
pages"). `python -m gitstate.cli.manpages DIR` writes them by hand.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterator

import click

from gitstate import __version__
from gitstate.cli import main, summary

TOOL = "git agy-state"
MANUAL = "Git Agy-State Manual"


def page_name(path: tuple[str, ...]) -> str:
    """The page of the top-level command `path[0]` (the overview's for none)."""
    return "-".join(["git-agy-state", *path[:1]])


def _escape(text: str) -> str:
    """Text as roff reads it literally: a backslash is an escape, `-` a hyphen that is not the
    ASCII one an option is typed with, and a line starting with `.` or `'` a request. Other
    characters than ASCII are named (`\\[u76EE]`): roff reads them so without preconv too."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return "\n".join(
        "\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n")
    )


def _paragraphs(text: str) -> Iterator[str]:
    """Click's help text as roff paragraphs: `\\b` keeps a paragraph's lines as they are
    (click's own mark for that), the others are filled by roff."""
    for block in inspect.cleandoc(text).split("\n\n"):  # a docstring keeps its indent
        if block.startswith("\b"):
            lines = block[1:].strip("\n")
            yield ".PP\n.nf\n" + _escape(lines) + "\n.fi"
        elif block.strip():
            yield ".PP\n" + _escape(" ".join(block.split()))


def _root() -> click.Context:
    return click.Context(main, info_name=TOOL, **main.context_settings)


def _context(path: tuple[str, ...]) -> tuple[click.Command, click.Context]:
    command: click.Command = main
    context = _root()
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(context, name)
        assert found is not None, name
        command = found
        context = click.Context(command, info_name=name, parent=context)
    return command, context


def _synopsis(command: click.Command, context: click.Context) -> str:
    pieces = " ".join(command.collect_usage_pieces(context))
    return f".nf\n\\fB{_escape(context.command_path)}\\fR {_escape(pieces)}\n.fi"


def _options(command: click.Command, context: click.Context) -> list[str]:
    out = []
    for param in command.get_params(context):
        record = param.get_help_record(context)
        if record is None:
            continue
        names, text = record
        out.append(f".TP\n\\fB{_escape(names)}\\fR\n{_escape(' '.join(text.split()))}")
    return out


def _body(command: click.Command, context: click.Context) -> list[str]:
    parts = list(_paragraphs(command.help or ""))
    options = _options(command, context)
    if options:
        parts += [".PP\nOptions:", ".RS", *options, ".RE"]
    if command.epilog:
        parts += list(_paragraphs(command.epilog))
    return parts


def _subcommands(path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    command, context = _context(path)
    if isinstance(command, click.Group):
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                yield (*path, name)
                yield from _subcommands((*path, name))


def _header(name: str, line: str) -> list[str]:
    return [
        f'.TH "{name.upper()}" "1" "" "{TOOL} {__version__}" "{MANUAL}"',
        ".SH NAME",
        f"{_escape(name)} \\- {_escape(line)}",
    ]


def command_page(name: str) -> str:
    """git-agy-state-NAME(1): the command's help, and every subcommand's if it is a group."""
    command, context = _context((name,))
    parts = [*_header(page_name((name,)), summary(command)), ".SH SYNOPSIS"]
    subs = list(_subcommands((name,)))
    leaves = [path for path in subs if not isinstance(_context(path)[0], click.Group)]
    if leaves:
        parts += [_synopsis(*_context(path)) for path in leaves]
    else:
        parts.append(_synopsis(command, context))
    parts += [".SH DESCRIPTION", *_body(command, context)]
    if subs:
        parts.append(".SH COMMANDS")
        for path in subs:
            sub, sub_context = _context(path)
            parts += [f'.SS "{_escape(" ".join(path))}"', _synopsis(sub, sub_context)]
            parts += _body(sub, sub_context)
    parts += [".SH SEE ALSO", "\\fBgit\\-agy\\-state\\fR(1)"]
    return "\n".join(parts) + "\n"


def overview_page() -> str:
    """git-agy-state(1): what the tool is, and every command with its page."""
    context = _root()
    parts = [
        *_header("git-agy-state", summary(main)),
        ".SH SYNOPSIS",
        ".nf",
        "\\fBgit agy\\-state\\fR [\\-\\-version] [\\-h | \\-\\-help] \\fICOMMAND\\fR [\\fIARGS\\fR]",
        "\\fBgit agy\\-state help\\fR [\\fICOMMAND\\fR]...",
        ".fi",
        ".SH DESCRIPTION",
        *_paragraphs((main.help or "").split("\n\n", 1)[-1]),
        ".SH COMMANDS",
    ]
    for name in main.list_commands(context):
        command = main.get_command(context, name)
        if command is None or command.hidden:
            continue
        parts.append(f".TP\n\\fB{_escape(page_name((name,)))}\\fR(1)\n{_escape(summary(command))}")
    parts += [
        ".SH SEE ALSO",
        "\\fBgit\\fR(1); \\fBgit agy\\-state help\\fR \\fICOMMAND\\fR prints a command's page"
        " as its \\fB\\-\\-help\\fR does.",
    ]
    return "\n".join(parts) + "\n"


def pages() -> dict[str, str]:
    """Every page by its file name (`git-agy-state-patch.1`), the overview first."""
    context = _root()
    found = {"git-agy-state.1": overview_page()}
    for name in main.list_commands(context):
        command = main.get_command(context, name)
        if command is not None and not command.hidden:
            found[page_name((name,)) + ".1"] = command_page(name)
    return found


def write(folder: str) -> list[str]:
    """Write every page into `folder` (made if missing); their paths, the overview first."""
    os.makedirs(folder, exist_ok=True)
    written = []
    for file_name, text in pages().items():
        path = os.path.join(folder, file_name)
        with open(path, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        written.append(path)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m gitstate.cli.manpages DIR")
    for written_path in write(sys.argv[1]):
        print(written_path)
