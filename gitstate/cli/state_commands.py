"""State commands: init, save, patch, check, show, status, log, diff, checkout, restore.

Each command parses its options, calls one use case and prints the result; nothing more.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gitstate.cli.output import emit_json, note, problem_lines, say
from gitstate.document import patch as patch_mod
from gitstate.document.language import KEYS
from gitstate.document.model import parse
from gitstate.errors import EXIT_FAILURE, UsageError
from gitstate.storage.layout import discover
from gitstate.usecases import history
from gitstate.usecases import state as state_uc
from gitstate.usecases.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])


def json_option(func: F) -> F:
    """The one `--json` idiom: machine-readable output on stdout, a stable API."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")(func)


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "none"


def _report_written(result: state_uc.Written, as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(result.as_json())
        return
    for text in result.notices:
        note(f"note: {text}")
    if result.overwritten:
        note(f"note: the replaced STATE.md was kept in {result.overwritten}")
    if result.merged:
        note("note: merged STATE.md with snapshots written since it was checked out")
    if result.view_kept:
        note("warning: STATE.md changed while saving and was left as it is (git agy-state status)")
    if result.outcome == "saved":
        say(f"{verb} {_short(result.snapshot)}: {', '.join(result.sections) or 'no section'}")
    elif result.outcome == "unchanged":
        say(f"nothing to save: STATE.md equals the tip ({_short(result.snapshot)})")
    elif result.outcome == "nothing":
        say("nothing to save: there is no STATE.md")


@click.command()
@json_option
def init(as_json: bool) -> None:
    """Exclude STATE.md from commits and prepare the refs (optional: every command works without)."""
    ws = Workspace.open()
    done = state_uc.init(ws)
    if as_json:
        emit_json({"actions": done})
    elif done:
        for line in done:
            say(line)
    else:
        say("already initialized")


@click.command()
@click.option("-m", "--message", help="The snapshot's first line (default: what changed).")
@click.option("--allow-secret", is_flag=True, help="Save even if a line looks like a credential.")
@json_option
def save(message: str | None, allow_secret: bool, as_json: bool) -> None:
    """Snapshot STATE.md as a commit on refs/agy/state."""
    ws = Workspace.open()
    _report_written(state_uc.save(ws, message, allow_secret), as_json, "saved")


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
    --set, --remove, --add, --todo, --done, --block, --start.
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
    ops += [patch_mod.StartStep(patch_mod.step_ref(n)) for n in start]
    if not ops:
        raise UsageError("nothing to patch", hint="git agy-state patch --help lists the operations")
    ws = Workspace.open()
    result = state_uc.patch(ws, patch_mod.Patch(tuple(ops)), message, allow_secret)
    _report_written(result, as_json, "patched")


def _read_ops(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no such file: {source}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {source}: {exc}") from None


@click.command()
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
@json_option
def check(file: Path | None, as_json: bool) -> None:
    """Validate STATE.md (or FILE; with no view, the tip). Exit 1 when invalid."""
    ws = None if file is not None and _outside_repo() else Workspace.open()
    checked = history.check(ws, file)
    report = checked.report
    if report is None:
        if as_json:
            emit_json(
                {"valid": True, "language": None, "errors": [], "warnings": [], "source": "none"}
            )
        else:
            say(f"no STATE.md and no snapshot yet: nothing to check ({checked.path})")
        return
    if as_json:
        emit_json({**report.as_json(), "source": checked.source, "path": checked.path})
    else:
        where = checked.path if checked.source != "tip" else f"snapshot {_short(checked.path)}"
        if report.valid:
            say(f"STATE.md is valid ({report.language}): {where}")
        else:
            count = len(report.errors)
            say(f"STATE.md is invalid ({count} problem{'s' * (count != 1)}): {where}")
            for line in problem_lines(report.errors):
                say(line)
        for warning in problem_lines(report.warnings):
            note("warning:" + warning.removeprefix("  -"))
    if not report.valid:
        click.get_current_context().exit(EXIT_FAILURE)


def _outside_repo() -> bool:
    return discover() is None


@click.command()
@click.argument("rev", required=False)
@click.option("--section", metavar="KEY", help="Print only this section's lines.")
@json_option
def show(rev: str | None, section: str | None, as_json: bool) -> None:
    """Print a snapshot's STATE.md byte for byte (default: the tip)."""
    ws = Workspace.open()
    commit, data = history.show(ws, rev)
    if section is not None:
        key, lines = history.section_lines(data, section)
        if as_json:
            emit_json({"commit": commit, "section": key, "lines": lines})
        else:
            for line in lines:
                say(line)
        return
    if as_json:
        doc = parse(data.decode("utf-8"))
        emit_json(
            {
                "commit": commit,
                "language": doc.language,
                "stamp": doc.stamp,
                "sections": {k: list(doc.section(k)) for k in KEYS},
                "text": data.decode("utf-8"),
            }
        )
        return
    out = sys.stdout.buffer  # byte for byte, as git show REV:STATE.md
    out.write(data)
    out.flush()


@click.command()
@json_option
def status(as_json: bool) -> None:
    """Is STATE.md clean, dirty or missing; which snapshot; what is in progress."""
    ws = Workspace.open()
    info = history.status(ws)
    if as_json:
        emit_json(info)
        return
    view_text = {
        "clean": "clean",
        "dirty": "dirty (unsaved edits: git agy-state save)",
        "missing": "missing (git agy-state checkout writes it)" if info["tip"] else "missing",
    }[str(info["view"])]
    say(f"STATE.md: {view_text}")
    tip = info["tip"]
    if tip is None:
        say("snapshot: none yet")
    else:
        written = info["written_from"]
        if info["view"] == "missing" or written is None:
            say(f"tip: {_short(str(tip))}")
        elif info["is_tip"]:
            say(f"written from: {_short(str(written))} (the tip)")
        else:
            say(f"written from: {_short(str(written))} (the tip is now {_short(str(tip))})")
    if not info["valid"]:
        count = info["errors"]
        say(f"valid: no ({count} problem{'s' * (count != 1)}: git agy-state check)")
    if info["in_progress"]:
        say(f"in progress: {info['in_progress']}")
    say(f"phase: {info['phase']}")


@click.command()
@click.option("-n", "--max-count", "limit", type=click.IntRange(min=0), help="Show at most N.")
@click.option("-p", "--patch", "with_patch", is_flag=True, help="Show each snapshot's diff.")
@json_option
def log(limit: int | None, with_patch: bool, as_json: bool) -> None:
    """The snapshots of the chain, newest first."""
    ws = Workspace.open()
    snaps = history.log(ws, limit)
    if as_json:
        rows = []
        for snap in snaps:
            row = snap.as_json()
            if with_patch:
                row["diff"] = history.snapshot_diff(ws, snap)
            rows.append(row)
        emit_json(rows)
        return
    for snap in snaps:
        when = snap.time.replace("T", " ")[:16]
        say(f"{snap.commit[:12]} {when} {snap.phase:<9} {snap.subject}")
        if with_patch:
            text = history.snapshot_diff(ws, snap)
            if text:
                say(text.rstrip("\n"))
            say()


@click.command()
@click.argument("a", required=False)
@click.argument("b", required=False)
@json_option
def diff(a: str | None, b: str | None, as_json: bool) -> None:
    """Compare snapshots: tip → view; A → view; A → B."""
    ws = Workspace.open()
    result = history.diff(ws, a, b)
    if as_json:
        emit_json(result.as_json())
    elif result.text:
        click.echo(result.text, nl=False)


@click.command()
@click.argument("rev", required=False)
@click.option("-f", "--force", is_flag=True, help="Overwrite unsaved edits (they are kept).")
@json_option
def checkout(rev: str | None, force: bool, as_json: bool) -> None:
    """Write a snapshot's STATE.md into the work tree (default: the tip)."""
    ws = Workspace.open()
    result = state_uc.checkout(ws, rev, force)
    if as_json:
        emit_json(result.as_json())
        return
    if result.overwritten:
        note(f"note: the replaced STATE.md was kept in {result.overwritten}")
    say(f"STATE.md now holds snapshot {_short(result.snapshot)}")


@click.command()
@click.argument("rev")
@click.option("-f", "--force", is_flag=True, help="Overwrite unsaved edits (they are kept).")
@json_option
def restore(rev: str, force: bool, as_json: bool) -> None:
    """Make a new snapshot equal to REV (history is kept), and check it out."""
    ws = Workspace.open()
    result = state_uc.restore(ws, rev, force)
    if as_json:
        emit_json(result.as_json())
        return
    _report_written(result, as_json, "restored as")


COMMANDS = [init, save, patch, check, show, status, log, diff, checkout, restore]
