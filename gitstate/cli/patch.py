"""`git agy-state patch`: change the state with a small patch (flags or JSON ops), and save it."""

from __future__ import annotations

import os
import sys
from dataclasses import fields

import click

from gitstate.cli.output import json_option
from gitstate.cli.render.written import report_written
from gitstate.document import patch as patch_mod
from gitstate.document.language import KEYS, LANGUAGES
from gitstate.document.patch_ops import OPS
from gitstate.errors import UsageError
from gitstate.storage import view
from gitstate.usecases.state import patch as patch_uc
from gitstate.usecases.workspace import Workspace

# What `--ops` reads at most (docs/format.md, "Patches"): a patch whose texts fill a 1 MiB
# STATE.md still fits when every character is JSON-escaped (`\uXXXX` pairs cost at most three
# times a character's UTF-8 bytes), with room for the ops around them.
OPS_LIMIT = 4 * 1024 * 1024


def _pairs(values: tuple[str, ...], flag: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        key, sep, text = _arg(value, flag).partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"{flag} takes KEY=TEXT, not {value[:40]!r}", hint="e.g. --add open_issues=…"
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
    return [(_arg(n, flag), _arg(t, with_)) for n, t in zip(steps, texts, strict=True)]


def _arg(value: str, flag: str) -> str:
    """An argument as text: bytes that are not UTF-8 reach Python as lone surrogates, which no
    document can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            f"{flag}: the argument is not UTF-8 text",
            hint="pass UTF-8 text, or the ops as a JSON file with --ops",
        ) from None
    return value


def _keys_and_ops() -> str:
    """The KEY names and the `--ops` JSON ops, from the tables the patch reads (language.KEYS
    and patch_ops.OPS), so that the help can never list a key or an op the tool lacks."""
    width = max(map(len, KEYS))
    keys = [
        f"  {key:<{width}}  " + " | ".join(lang.heading(key) for lang in LANGUAGES.values())
        for key in KEYS
    ]
    placeholder = {"section": "KEY", "step": "N"}
    ops = [
        "  {"
        + ", ".join(
            [f'"op": "{name}"']
            + [f'"{f.name}": {placeholder.get(f.name, "TEXT")}' for f in fields(cls)]
        )
        + "}"
        for name, cls in OPS.items()
    ]
    return "\n\n".join(
        [
            "\b\nKEY is a section key, or its heading in any language ("
            + ", ".join(LANGUAGES)
            + "):\n"
            + "\n".join(keys),
            '\b\n--ops FILE holds {"ops": [OP, …]}, applied in order; each OP is one of:\n'
            + "\n".join(ops)
            + "\nN is a step's number in next_steps, or the start of its text.",
        ]
    )


@click.command(epilog=_keys_and_ops())
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
    ops += [patch_mod.AddStep(_arg(t, "--todo")) for t in todo]
    ops += [
        patch_mod.FinishStep(patch_mod.step_ref(n), v)
        for n, v in _paired(done, verify, "--done", "--verify")
    ]
    ops += [
        patch_mod.BlockStep(patch_mod.step_ref(n), r)
        for n, r in _paired(block, reason, "--block", "--reason")
    ]
    ops += [patch_mod.PauseStep(patch_mod.step_ref(_arg(n, "--pause"))) for n in pause]
    ops += [patch_mod.StartStep(patch_mod.step_ref(_arg(n, "--start"))) for n in start]
    if not ops:
        raise UsageError("nothing to patch", hint="git agy-state patch --help lists the operations")
    ws = Workspace.open()
    result = patch_uc.patch(ws, patch_mod.Patch(tuple(ops)), message, allow_secret)
    report_written(result, as_json, "patched")


def _read_ops(source: str) -> str:
    """The text of `--ops FILE|-`: stdin, or a regular file (never a FIFO or a device, which
    could block or never end), at most OPS_LIMIT bytes, UTF-8 (docs/format.md, "Patches")."""
    where = "stdin" if source == "-" else source
    data = _read_stdin() if source == "-" else _read_regular(source)
    if len(data) > OPS_LIMIT:
        raise UsageError(
            f"the patch on {where} is over {OPS_LIMIT // (1024 * 1024)} MiB; refusing to read more",
            hint="a patch holds a few small ops; all its texts must fit in a 1 MiB STATE.md",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"the patch on {where} is not UTF-8 text (line {line})") from None


def _read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise UsageError("--ops -: there is no stdin to read (it is closed)")
    try:
        data = stream.read(OPS_LIMIT + 1)
    except OSError as exc:
        raise UsageError(f"cannot read stdin: {exc.strerror or exc}") from None
    if data is None:  # a non-blocking stdin with nothing in it yet
        raise UsageError("cannot read stdin: it would block")
    return bytes(data)


def _read_regular(path: str) -> bytes:
    """At most OPS_LIMIT + 1 bytes of a regular file (a link to one is followed: the user named
    it), through the one bounded, non-blocking reader (storage/view.py): a FIFO, device or
    /dev/zero is refused at once, never opened for reading."""
    try:
        data = view.read_regular(os.path.realpath(path), OPS_LIMIT + 1)
    except ValueError as exc:  # a NUL in the path
        raise UsageError(f"cannot read {path}: {exc}") from None
    except view.NotRegular as exc:
        if exc.what.startswith("unreadable: "):
            raise UsageError(f"cannot read {path}: {exc.what[len('unreadable: ') :]}") from None
        raise UsageError(
            f"--ops {path}: it is {exc.what}, not a regular file",
            hint="--ops reads a regular file, or - for stdin: … | git agy-state patch --ops -",
        ) from None
    if data is None:
        raise UsageError(f"no such file: {path}")
    return data
