"""`git agy-state patch`: change the state with a small patch (flags or JSON ops), and save it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gitstate.cli.output import json_option, report_written
from gitstate.document import patch as patch_mod
from gitstate.errors import UsageError
from gitstate.usecases import patch as patch_uc
from gitstate.usecases.workspace import Workspace


def _pairs(values: tuple[str, ...], flag: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"{flag} takes KEY=TEXT, not {value!r}", hint="e.g. --add open_issues=…"
            )
        pairs.append((patch_mod.section_key(key), text))
    return pairs


def _paired(
    steps: tuple[str, ...], texts: tuple[str, ...], flag: str, with_: str
) -> list[tuple[str, str]]:
    if len(steps) != len(texts):
        raise UsageError(
            f"each {flag} needs its own {with_} ({len(steps)} {flag}, {len(texts)} {with_})"
        )
    return list(zip(steps, texts, strict=True))


@click.command()
@click.option(
    "--ops", "ops_file", metavar="FILE|-", help='A JSON patch {"ops": [...]}; - reads stdin.'
)
@click.option("--set", "set_", multiple=True, metavar="KEY=TEXT", help="Replace a section.")
@click.option("--add", multiple=True, metavar="KEY=TEXT", help="Add a line to a section.")
@click.option("--remove", multiple=True, metavar="KEY=TEXT", help="Remove the line matching TEXT.")
@click.option("--todo", multiple=True, metavar="TEXT", help="Add a step `- [ ] TEXT`.")
@click.option(
    "--start", multiple=True, metavar="N", help="Start step N (or the step starting with N)."
)
@click.option("--pause", multiple=True, metavar="N", help="Put step N back to [ ].")
@click.option("--done", multiple=True, metavar="N", help="Finish step N; needs --verify.")
@click.option("--verify", multiple=True, metavar="TEXT", help="How step N was verified.")
@click.option("--block", multiple=True, metavar="N", help="Block step N; needs --reason.")
@click.option("--reason", multiple=True, metavar="TEXT", help="Why step N is blocked.")
@click.option("-m", "--message", help="The snapshot's first line.")
@click.option("--allow-secret", is_flag=True, help="Save even if a line looks like a credential.")
@json_option
def patch(
    ops_file: str | None,
    set_: tuple[str, ...],
    add: tuple[str, ...],
    remove: tuple[str, ...],
    todo: tuple[str, ...],
    start: tuple[str, ...],
    pause: tuple[str, ...],
    done: tuple[str, ...],
    verify: tuple[str, ...],
    block: tuple[str, ...],
    reason: tuple[str, ...],
    message: str | None,
    allow_secret: bool,
    as_json: bool,
) -> None:
    """Change the state with a small patch, and save it.

    Steps count from 1 in next_steps as it was before the patch. Flags apply in this order:
    --set, --remove, --add, --todo, --done, --block, --pause, --start.
    """
    ops: list[patch_mod.Op] = []
    if ops_file is not None:
        ops.extend(patch_mod.from_json(_read_ops(ops_file)).ops)
    ops += [patch_mod.SetSection(k, t) for k, t in _pairs(set_, "--set")]
    ops += [patch_mod.RemoveLine(k, t) for k, t in _pairs(remove, "--remove")]
    ops += [patch_mod.AddLine(k, t) for k, t in _pairs(add, "--add")]
    ops += [patch_mod.AddStep(t) for t in todo]
    ops += [
        patch_mod.FinishStep(patch_mod.step_ref(n), v)
        for n, v in _paired(done, verify, "--done", "--verify")
    ]
    ops += [
        patch_mod.BlockStep(patch_mod.step_ref(n), r)
        for n, r in _paired(block, reason, "--block", "--reason")
    ]
    ops += [patch_mod.PauseStep(patch_mod.step_ref(n)) for n in pause]
    ops += [patch_mod.StartStep(patch_mod.step_ref(n)) for n in start]
    if not ops:
        raise UsageError("nothing to patch", hint="git agy-state patch --help lists the operations")
    ws = Workspace.open()
    result = patch_uc.patch(ws, patch_mod.Patch(tuple(ops)), message, allow_secret)
    report_written(result, as_json, "patched")


def _read_ops(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no such file: {source}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {source}: {exc}") from None
