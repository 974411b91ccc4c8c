"""`git agy-state view`: a task's history as one self-contained HTML page (docs/report.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gitstate.cli.output import emit_json, json_option, say
from gitstate.storage import private
from gitstate.usecases.report import browser, collect, html
from gitstate.usecases.workspace import Workspace

PAGES_DIR = "pages"  # not "view": that is the view record's file (storage/view.py)


@click.command()
@click.argument("archive", metavar="[ARCHIVE]", required=False)
@click.option("--out", "out", metavar="FILE", help="Write the page here (- for stdout).")
@click.option("--open", "open_", is_flag=True, help="Open the page in the browser (web.browser).")
@json_option
def view(archive: str | None, out: str | None, open_: bool, as_json: bool) -> None:
    """Write the current task's history (or an archived task's) as an HTML page."""
    ws = Workspace.open()
    report = collect.collect(ws, archive)
    page = html.render(report).encode("utf-8")
    if out == "-":
        if open_:
            raise click.UsageError("--open needs a file: give --out FILE or leave --out out")
        sys.stdout.buffer.write(page)
        sys.stdout.buffer.flush()
        return
    if out is None:
        folder = private.make_dir(ws.layout.agy_dir / PAGES_DIR)
        # An archive's name is a ref's tail: a received one may hold "/", never ".." (git).
        path = folder / f"{report.task.replace('/', '-')}.html"
        private.write_file(path, page)
    else:
        path = Path(out).absolute()
        path.write_bytes(page)
    if open_:
        browser.open_page(ws, path)
    if as_json:
        emit_json({"path": str(path), "task": report.task, "snapshots": len(report.entries)})
    else:
        say(str(path))
