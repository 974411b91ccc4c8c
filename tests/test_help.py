"""`help [COMMAND]`, the command list's summaries, and what `patch --help` lists (issue 14)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import click
import pytest
from support import run_tool

from gitstate.cli import main, summary
from gitstate.document.language import KEYS, LANGUAGES
from gitstate.document.patch_ops import OPS


def _squashed(text: str) -> str:
    """`text` without white space: click wraps a summary wherever the terminal needs it."""
    return "".join(text.split())


def _commands(group: click.Group, ctx: click.Context) -> list[tuple[str, click.Command]]:
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append((name, command))
    return found


def test_help_alone_is_the_overview(cli: Any) -> None:
    result = cli("help")
    assert result.exit_code == 0
    assert result.stdout == cli("--help").stdout
    assert "Commands:" in result.stdout and "help" in result.stdout


@pytest.mark.parametrize("path", [["patch"], ["memory"], ["memory", "search"], ["job", "run"]])
def test_help_command_prints_its_help_text(cli: Any, path: list[str]) -> None:
    result = cli("help", *path)
    assert result.exit_code == 0
    assert result.stdout == cli(*path, "--help").stdout
    usage = result.stdout.splitlines()[0]  # CliRunner names the program `main`
    assert usage.startswith("Usage: ") and f" {' '.join(path)} " in usage


@pytest.mark.parametrize(
    ("path", "message", "hint"),
    [
        (["nope"], "no such command: nope", "git agy-state help lists the commands"),
        (["memory", "nope"], "no such command: memory nope", "git agy-state help memory"),
        (["patch", "x"], "no such command: patch x", "git agy-state help patch"),
    ],
)
def test_help_for_an_unknown_command_is_a_usage_error(
    cli: Any, path: list[str], message: str, hint: str
) -> None:
    result = cli("help", *path)
    assert result.exit_code == 64
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0] == f"error: {message}"
    assert lines[1].startswith(f"hint: {hint}")


def test_a_usage_error_hints_at_a_help_that_works(tmp_path: Path) -> None:
    # `git agy-state --help` is git's `git help agy-state`: a man page, present only when a
    # wheel was installed. `help` always is.
    top = run_tool("no-such-command", cwd=tmp_path)
    assert top.returncode == 64
    assert "hint: git agy-state help" in top.stderr.splitlines()
    sub = run_tool("patch", "--no-such-option", cwd=tmp_path)
    assert sub.returncode == 64
    assert "hint: git agy-state patch --help" in sub.stderr.splitlines()


def _lists(ctx: click.Context) -> list[tuple[click.Group, click.Context]]:
    """The root and every group below it, each with its context."""
    found = [(main, ctx)]
    for name, command in _commands(main, ctx):
        if isinstance(command, click.Group):
            found.append((command, click.Context(command, info_name=name, parent=ctx)))
    return found


def test_every_command_list_says_each_summary_whole(cli: Any) -> None:
    root = click.Context(main, info_name="git agy-state")
    for group, ctx in _lists(root):
        path = ctx.command_path.split()[2:]
        shown = cli(*path, "--help").stdout
        listed = shown.split("Commands:", 1)[1]
        assert "..." not in listed, ctx.command_path
        for name, command in _commands(group, ctx):
            line = summary(command)
            assert line, f"{ctx.command_path} {name} has no summary"
            assert line == " ".join((command.help or "").split("\n\n")[0].split())
            assert _squashed(line) in _squashed(listed), f"{ctx.command_path} {name}"


def test_patch_help_lists_every_key_in_every_language(cli: Any) -> None:
    shown = cli("patch", "--help").stdout
    for key in KEYS:
        row = next(line for line in shown.splitlines() if line.split()[:1] == [key])
        for lang in LANGUAGES.values():
            assert lang.heading(key) in row, (key, lang.code)


def test_patch_help_lists_every_op_with_its_fields(cli: Any) -> None:
    shown = cli("patch", "--help").stdout
    rows = [line.strip() for line in shown.splitlines() if '"op": ' in line]
    assert len(rows) == len(OPS)
    for row, (name, cls) in zip(rows, OPS.items(), strict=True):
        assert row.startswith(f'{{"op": "{name}"')
        for field in fields(cls):
            assert f'"{field.name}": ' in row, (name, field.name)
