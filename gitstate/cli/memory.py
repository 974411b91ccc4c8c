"""`git agy-state memory …`: long-term memory in a git brain repository (docs/memory.md).

A thin edge: each subcommand parses its options, calls one use case, prints. Use cases are
imported inside the commands so that `memory search` pays only for what it runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from gitstate.cli.output import emit_json, json_option, note, say, short
from gitstate.document.language import counted
from gitstate.errors import Failure, NotFound, UsageError

LAYER_HELP = "knowledge (MEMORY.md), identity (USER.md) or project (projects/NAME.md)."


def _created(brain: str, created: bool) -> None:
    if created:
        note(f"note: created the brain at {brain}")


def _warnings(warnings: tuple[str, ...] | list[str]) -> None:
    for text in warnings:
        note(f"warning: {text}")


def _text(words: tuple[str, ...]) -> str:
    """TEXT as words, or `-`: read it from stdin."""
    if words == ("-",):
        from gitstate.memory.usecases.write import MAX_EDIT_BYTES

        return _decoded(_stdin_bytes(MAX_EDIT_BYTES), "the text on stdin")
    return " ".join(words)


def _stdin_bytes(limit: int) -> bytes:
    """At most `limit` bytes of stdin, and one more to know it is over (an endless stdin such as
    /dev/zero is read no further; docs/memory.md)."""
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise UsageError(f"stdin holds more than {limit // 1024} KiB; nothing changed")
    return data


def _decoded(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{where} is not UTF-8 text (byte {exc.start + 1})") from None


@click.group()
def memory() -> None:
    """Long-term memory kept in a git brain repository (AGY_BRAIN).

    MEMORY.md (knowledge), USER.md (identity), sessions/DATE.md (experience, append-only) and
    projects/NAME.md live on refs/agy/memory; search uses a derived SQLite FTS5 index.
    """


@memory.command("init")
@json_option
def init_cmd(as_json: bool) -> None:
    """Create the brain (idempotent: the same root commit on every machine)."""
    from gitstate.memory.usecases.brain import open_brain

    brain, created = open_brain(create=True)
    tip = brain.tip()
    if as_json:
        emit_json({"brain": str(brain.layout.path), "tip": tip, "created": created})
        return
    verb = "created the brain" if created else "the brain is ready"
    say(f"{verb} at {brain.layout.path} (refs/agy/memory at {short(tip)})")


@memory.command("add")
@click.option("--layer", required=True, metavar="LAYER", help=LAYER_HELP)
@click.option(
    "--project", metavar="NAME", help="With --layer project (default: the work tree's folder name)."
)
@click.option(
    "--section", metavar="HEADING", help="The `## ` heading to add under (created if missing)."
)
@click.option("--allow-secret", is_flag=True, help="Write even if a line looks like a credential.")
@json_option
@click.argument("text", nargs=-1, required=True)
def add_cmd(
    layer: str,
    project: str | None,
    section: str | None,
    allow_secret: bool,
    as_json: bool,
    text: tuple[str, ...],
) -> None:
    """Add TEXT (or `-` for stdin) to the file its layer routes to."""
    from gitstate.memory.usecases import write as memory_write

    done = memory_write.add(layer, _text(text), project, section, allow_secret)
    if as_json:
        emit_json(done.as_json())
    elif done.added:
        say(f"added to {done.path} § {done.section} ({short(done.written.commit)})")
    else:
        say(f"already in {done.path} § {done.section}: nothing changed")
    if not as_json:
        _created(done.written.brain, done.written.created)
        _warnings(done.written.warnings)


@memory.command("session")
@click.option("--summary", required=True, help="What the session achieved (1-3 sentences).")
@click.option("--project", metavar="NAME", help="Default: the work tree's folder name.")
@click.option(
    "--decision", "decisions", multiple=True, metavar="D", help="A key decision (repeatable)."
)
@click.option("--learned", multiple=True, metavar="L", help="A learning (repeatable).")
@click.option("--next", "next_steps", multiple=True, metavar="N", help="A next step (repeatable).")
@click.option("--workspace", metavar="PATH", help="Default: the work tree (or current folder).")
@click.option("--allow-secret", is_flag=True, help="Write even if a line looks like a credential.")
@json_option
def session_cmd(
    summary: str,
    project: str | None,
    decisions: tuple[str, ...],
    learned: tuple[str, ...],
    next_steps: tuple[str, ...],
    workspace: str | None,
    allow_secret: bool,
    as_json: bool,
) -> None:
    """Append a `## Session HH:MM:SS` block to today's log and link it from the project."""
    from gitstate.memory.usecases import write as memory_write

    done = memory_write.session(
        summary, project, decisions, learned, next_steps, workspace, allow_secret=allow_secret
    )
    if as_json:
        emit_json(done.as_json())
        return
    say(f"appended {done.path}#{done.anchor} ({short(done.written.commit)})")
    say(f"linked from projects/{done.project}.md as {done.link}")
    _created(done.written.brain, done.written.created)


@memory.command("show")
@click.argument("file", required=False)
@click.option("--layer", metavar="LAYER", help="knowledge, identity, project or experience.")
@click.option("--project", metavar="NAME", help="The project (default: the work tree's).")
@json_option
def show_cmd(file: str | None, layer: str | None, project: str | None, as_json: bool) -> None:
    """Print FILE, a layer, or the memory core uncut (USER.md, the project, MEMORY.md,
    today's and yesterday's sessions)."""
    from gitstate.memory.usecases import read as memory_read

    shown = memory_read.show(layer, file, project)
    if as_json:
        emit_json(shown.as_json())
        return
    if len(shown.files) == 1 and (file or layer not in (None, "experience")):
        say(shown.files[0][1], nl=False)
        return
    for index, (path, text) in enumerate(shown.files):
        say(("\n" if index else "") + f"==> {path} <==")
        say(text, nl=False)


@memory.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", default=10, show_default=True, help="At most this many results.")
@json_option
def search_cmd(query: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Full-text search (every word must match; Chinese words are found inside sentences)."""
    # Most invocations never get here: gitstate/entry.py runs them through this module's
    # click-free twin, gitstate/memory/search_cli.py, which prints the same `render`.
    from gitstate.memory.search_cli import render
    from gitstate.memory.usecases import search as memory_search

    text = " ".join(query)
    click.echo(render(memory_search.search(text, limit), text, as_json), nl=False)


@memory.command("index")
@click.option("--rebuild", is_flag=True, help="Start from an empty index.")
@json_option
def index_cmd(rebuild: bool, as_json: bool) -> None:
    """Bring the search index to the tip of refs/agy/memory (it is derived, never merged)."""
    from gitstate.memory.search_cli import render_index  # and its click-free twin: see search
    from gitstate.memory.usecases import search as memory_search

    click.echo(render_index(memory_search.reindex(rebuild), as_json), nl=False)


@memory.command("edit")
@click.argument("file")
@click.option("--allow-secret", is_flag=True, help="Write even if a line looks like a credential.")
@json_option
def edit_cmd(file: str, allow_secret: bool, as_json: bool) -> None:
    """Replace FILE with new text from stdin, or edit it in $EDITOR; checked, scanned, committed."""
    from gitstate.memory.usecases import read as memory_read
    from gitstate.memory.usecases import write as memory_write

    path = memory_write.check_path(file)
    if sys.stdin.isatty():
        try:
            current = memory_read.show(path=path).files[0][1]
        except NotFound:  # a new file (or a new brain): start empty
            current = ""
        data = _through_editor(path, current)
    else:
        data = _stdin_bytes(memory_write.MAX_EDIT_BYTES)
    written = memory_write.edit(path, data, allow_secret)
    if as_json:
        emit_json(written.as_json())
        return
    if written.commit is None:
        say(f"{path} unchanged")
    else:
        say(f"wrote {path} ({short(written.commit)})")
    _created(written.brain, written.created)
    _warnings(written.warnings)


def _through_editor(path: str, text: str) -> bytes:
    import subprocess  # here: every other memory command, search above all, goes without
    import tempfile

    from gitstate.memory.usecases.write import MAX_EDIT_BYTES

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="agy-memory-") as folder:
        target = Path(folder) / path.replace("/", "-")
        target.write_text(text, encoding="utf-8")
        proc = subprocess.run(["sh", "-c", f'{editor} "$1"', "sh", str(target)], check=False)
        if proc.returncode != 0:
            raise Failure(f"the editor ({editor}) exited with {proc.returncode}; nothing changed")
        with open(target, "rb") as handle:  # bounded: memory_write.edit refuses what is over
            return handle.read(MAX_EDIT_BYTES + 1)


@memory.command("forget")
@click.option(
    "--layer", required=True, metavar="LAYER", help="knowledge, identity, project or experience."
)
@click.option("--project", metavar="NAME", help="With --layer project (default: the work tree's).")
@click.option("--dry-run", is_flag=True, help="Only list what would go.")
@json_option
@click.argument("match", nargs=-1, required=True)
def forget_cmd(
    layer: str, project: str | None, dry_run: bool, as_json: bool, match: tuple[str, ...]
) -> None:
    """Remove the entries containing MATCH (experience: whole session blocks)."""
    from gitstate.memory.usecases import write as memory_write

    done = memory_write.forget(layer, " ".join(match), project, dry_run)
    if as_json:
        emit_json(done.as_json())
        return
    verb = "would remove" if dry_run else "removed"
    for path, text in done.removed:
        first, *rest = text.split("\n")
        more = f" (+{counted(len(rest), 'line')})" if rest else ""
        say(f"{verb} from {path}: {first}{more}")
    if done.written is not None and done.written.commit:
        say(f"committed {short(done.written.commit)}")


@memory.command("compact")
@click.option(
    "--apply", "apply_ids", multiple=True, metavar="ID", help="Apply this candidate (repeatable)."
)
@click.option("--all", "apply_all", is_flag=True, help="Apply every candidate.")
@json_option
def compact_cmd(apply_ids: tuple[str, ...], apply_all: bool, as_json: bool) -> None:
    """List what can leave MEMORY.md (and projects to archive); apply the ones you confirm."""
    from gitstate.memory.usecases import compact as memory_compact

    done = memory_compact.compact(apply_ids, apply_all)
    if as_json:
        emit_json(done.as_json())
        return
    if done.written is not None:
        say(f"applied {counted(len(done.applied), 'candidate')} ({short(done.written.commit)})")
        say(f"MEMORY.md: {counted(done.written.memory_lines, 'line')}")
        return
    if not done.candidates:
        say("nothing to compact")
        return
    for c in done.candidates:
        where = f"{c.path} → {c.target}" if c.target else c.path
        first = c.text.split("\n", 1)[0]
        say(f"[{c.id}] {c.kind:<7} {where}: {first}  ({c.reason})")
    say("apply with: git agy-state memory compact --apply ID … (or --all)")


@memory.command("sync")
@click.argument("remote", required=False)
@json_option
def sync_cmd(remote: str | None, as_json: bool) -> None:
    """Fetch the brain from REMOTE (remembered), merge, push fast-forward only."""
    from gitstate.memory.usecases import sync as memory_sync

    done = memory_sync.sync(remote)
    if as_json:
        emit_json(done.as_json())
        return
    actions = {"up-to-date": "up to date", "ahead": "ahead of the remote"}
    say(f"refs/agy/memory: {actions.get(done.action, done.action)} ({short(done.commit)})")
    for merged in done.merged:
        both = f" (both sides changed: {', '.join(merged.both)})" if merged.both else ""
        say(f"  {merged.path}: {merged.how}{both}")
    say(f"pushed to {done.remote}" if done.pushed else f"{done.remote} already has it")
    if done.warning:
        note(f"warning: {done.warning}")


@memory.command("status")
@json_option
def status_cmd(as_json: bool) -> None:
    """The brain: where, its tip, MEMORY.md against its cap, the remote, index and cache."""
    from gitstate.memory.usecases import read as memory_read

    found = memory_read.status()
    if as_json:
        emit_json(found)
        return
    if not found["exists"]:
        say(f"no brain at {found['brain']} (git agy-state memory init)")
        return
    say(f"brain: {found['brain']} (refs/agy/memory at {short(str(found['tip']))})")
    say(
        f"MEMORY.md: {found['memory_lines']}/{found['limit']} lines; "
        f"{found['sessions']} session logs, {found['projects']} projects"
    )
    say(f"remote: {found['remote'] or 'none (git agy-state memory sync URL)'}")
    index = found["index"]
    assert isinstance(index, dict)
    state = "current" if index["current"] else "behind (caught up at the next search)"
    say(f"index: {index['chunks']} chunks, {state}")
    say(f"injection: {found['inject']}, {found['budget']} bytes")
    if found["warning"]:
        note(f"warning: {found['warning']}")


@memory.command("import")
@click.argument("path", type=click.Path(file_okay=True, dir_okay=True, path_type=str))
@click.option("--dry-run", is_flag=True, help="Only list what would be imported, and where.")
@click.option("--allow-secret", is_flag=True, help="Import even if a line looks like a credential.")
@json_option
def import_cmd(path: str, dry_run: bool, allow_secret: bool, as_json: bool) -> None:
    """Import a folder of Markdown (an Agent Brain's ~/.agent-brain) in one commit, merged."""
    from gitstate.memory.document.importing import shown
    from gitstate.memory.usecases import importing

    done = importing.import_folder(path, dry_run, allow_secret)
    if as_json:
        emit_json(done.as_json())
        return
    for planned in done.files:
        where = planned.path
        if planned.source != planned.path:
            where += f" <- {shown(planned.source)}"
        verb = f"would be {planned.action}" if dry_run else planned.action
        say(f"{'unchanged' if planned.action == 'unchanged' else verb}: {where}")
    for skipped in done.skipped:
        say(f"skipped: {shown(skipped.source)} ({skipped.reason})")
    files, changed = counted(len(done.files), "file"), counted(len(done.changed), "brain file")
    if dry_run:
        say(f"would import {files} into {changed}")
    elif done.written is None or done.written.commit is None:
        say(f"nothing to import: the brain holds all of {files}")
    else:
        say(f"imported {files} into {changed} ({short(done.written.commit)})")
        _created(done.written.brain, done.written.created)
        _warnings(done.written.warnings)


__all__ = ["memory"]
