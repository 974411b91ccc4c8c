"""Writing memory: add (routed by layer), session (append a block, link it), edit, forget.

Routing (docs/memory.md): identity → USER.md, knowledge → a section of MEMORY.md, project →
projects/<name>.md; experience is written only by `session`, one new block at the end of today's
log, never an edit of a past one. Every write goes through usecases/brain.py:write (lock, checks,
commit, compare-and-swap, cache).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

from gitstate.errors import Failure, NotFound, UsageError
from gitstate.memory.document import files, sessions
from gitstate.memory.storage.brain import Brain
from gitstate.memory.storage.layout import work_tree_name
from gitstate.memory.usecases import brain as brain_uc
from gitstate.memory.usecases.brain import Written
from gitstate.storage.layout import Layout, discover
from gitstate.storage.snapshots import iso_time

MAX_EDIT_BYTES = 1024 * 1024
WRITE_LAYERS = ("knowledge", "identity", "project")
PROJECT_HINT = (
    f"--project NAME, where NAME matches [A-Za-z0-9._-]+, at most "
    f"{files.PROJECT_NAME_LIMIT} characters"
)


class Added(NamedTuple):
    written: Written
    path: str
    section: str
    added: bool  # False: the section already held that entry

    def as_json(self) -> dict[str, object]:
        return {
            **self.written.as_json(),
            "path": self.path,
            "section": self.section,
            "added": self.added,
        }


class Sessioned(NamedTuple):
    written: Written
    path: str
    anchor: str
    link: str
    project: str

    def as_json(self) -> dict[str, object]:
        return {
            **self.written.as_json(),
            "path": self.path,
            "anchor": self.anchor,
            "link": self.link,
            "project": self.project,
        }


class Forgotten(NamedTuple):
    written: Written | None  # None on a dry run
    removed: tuple[tuple[str, str], ...]  # (path, the text removed)

    def as_json(self) -> dict[str, object]:
        return {
            "commit": self.written.commit if self.written else None,
            "removed": [{"path": p, "text": t} for p, t in self.removed],
        }


# ---- names ------------------------------------------------------------------------------------


def default_project(start: Path | str | None = None) -> str:
    """The work tree's folder name (the main work tree's, from a linked one), else the
    current folder's."""
    return work_tree_name(discover(start), start)


def project_name(given: str | None) -> str:
    name = given if given is not None else default_project()
    if not files.valid_project(name):
        where = "" if given is not None else " (the work tree's folder name)"
        if len(name) > files.PROJECT_NAME_LIMIT:
            raise UsageError(
                f"{name[:40]!r}…{where} is not a project name: {len(name)} characters, "
                f"over {files.PROJECT_NAME_LIMIT}",
                hint=PROJECT_HINT,
            )
        raise UsageError(f"{name!r}{where} is not a project name", hint=PROJECT_HINT)
    return name


def layer_of(value: str, allowed: tuple[str, ...]) -> str:
    layer = files.layer_name(value)
    if layer is None or layer not in allowed:
        raise UsageError(f"--layer is one of {', '.join(allowed)}, not {value!r}")
    return layer


def _heading(section: str) -> str:
    text = section.strip().removeprefix("##").strip()
    if not text or "\n" in text or text.startswith("#"):
        raise UsageError(f"--section takes a heading's text, not {section!r}")
    return text


def _subject(text: str) -> str:
    first = " ".join(text.strip().split("\n", 1)[0].split())
    return first if len(first) <= 60 else first[:59] + "…"


# ---- add --------------------------------------------------------------------------------------


def add(
    layer: str,
    text: str,
    project: str | None = None,
    section: str | None = None,
    allow_secret: bool = False,
) -> Added:
    """One entry into the file and section its layer routes to."""
    layer = layer_of(layer, WRITE_LAYERS)
    if not text.strip():
        raise UsageError("nothing to add: TEXT is empty")
    if layer == "project":
        name = project_name(project)
        path, template = files.project_path(name), files.project_template(name)
        heading = _heading(section) if section else files.PROJECT_SECTION
    else:
        if project is not None:
            raise UsageError("--project goes with --layer project")
        path = files.MEMORY_FILE if layer == "knowledge" else files.USER_FILE
        template = files.MEMORY_TEMPLATE if layer == "knowledge" else files.USER_TEMPLATE
        heading = _heading(section) if section else files.DEFAULT_SECTIONS[layer]
    lines = files.entry_lines(text)
    outcome: list[bool] = []

    def change(brain: Brain, tip: str | None) -> dict[str, str | None]:
        current = brain.text(tip, path) or template
        new, added = files.add_entry(current, heading, lines)
        outcome[:] = [added]
        return {path: new}

    written = brain_uc.write(change, f"memory add ({layer}): {_subject(text)}", layer, allow_secret)
    return Added(written, path, heading, outcome[0] if outcome else False)


# ---- session ----------------------------------------------------------------------------------


def session(
    summary: str,
    project: str | None = None,
    decisions: tuple[str, ...] = (),
    learned: tuple[str, ...] = (),
    next_steps: tuple[str, ...] = (),
    workspace: str | None = None,
    now: float | None = None,
    parts: tuple[tuple[str, tuple[str, ...]], ...] = (),
    allow_secret: bool = False,
) -> Sessioned:
    """Append a block to today's log and link it from the project's file."""
    if not summary.strip():
        raise UsageError("--summary is empty")
    name = project_name(project)
    when = time.time() if now is None else now
    local = time.localtime(when)
    date = time.strftime("%Y-%m-%d", local)
    clock = time.strftime("%H:%M:%S", local)
    stamp = iso_time(int(when), (local.tm_gmtoff or 0) // 60)
    if workspace is None:
        layout = discover()
        workspace = str(layout.workdir) if layout and layout.workdir else str(Path.cwd())
    sections = [
        *[(title, list(items)) for title, items in parts],
        ("Key Decisions", list(decisions)),
        ("Learnings", list(learned)),
        ("Next Steps", [f"[ ] {n.strip()}" for n in next_steps if n.strip()]),
    ]
    block = sessions.render_block(clock, name, stamp, summary, name, workspace, sections)
    log_path = files.session_path(date)
    project_path = files.project_path(name)
    link = sessions.link(date, clock)
    entry = files.entry_lines(f"{date}: {_subject(summary)} {link}")

    def change(brain: Brain, tip: str | None) -> dict[str, str | None]:
        log = sessions.append(brain.text(tip, log_path) or "", date, block)
        current = brain.text(tip, project_path) or files.project_template(name)
        linked, _ = files.add_entry(current, files.TIMELINE_SECTION, entry)
        return {log_path: log, project_path: linked}

    written = brain_uc.write(
        change, f"memory session ({name}): {_subject(summary)}", "experience", allow_secret
    )
    return Sessioned(written, log_path, sessions.anchor(clock), link, name)


# ---- edit -------------------------------------------------------------------------------------


def check_path(path: str) -> str:
    clean = path.strip().removeprefix("./")
    if not files.is_memory_path(clean):
        raise UsageError(
            f"{path!r} is not a memory file",
            hint="FILE is MEMORY.md, USER.md, projects/NAME.md or sessions/YYYY-MM-DD.md",
        )
    return clean


def edit(path: str, data: bytes, allow_secret: bool = False) -> Written:
    """Replace a memory file with new text, checked and scanned; a session log may only grow."""
    path = check_path(path)
    if len(data) > MAX_EDIT_BYTES:
        raise Failure(f"the new {path} is over {MAX_EDIT_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise Failure(f"the new {path} is not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise Failure(f"the new {path} is binary (it holds a NUL byte)")
    if not text.strip():
        raise UsageError(
            f"the new {path} is empty", hint="git agy-state memory forget removes entries"
        )
    if not text.endswith("\n"):
        text += "\n"

    def change(brain: Brain, tip: str | None) -> dict[str, str | None]:
        if path.startswith(files.SESSIONS_DIR + "/"):
            _keep_blocks(brain.text(tip, path) or "", text)
        return {path: text}

    return brain_uc.write(change, f"memory edit {path}", None, allow_secret)


def _keep_blocks(old: str, new: str) -> None:
    """Past session blocks are never edited: each must still be there, as it was."""
    _, before = sessions.parse_log(old)
    _, after = sessions.parse_log(new)
    kept = {block.text for block in after}
    for block in before:
        if block.text not in kept:
            raise Failure(
                f"session blocks are never edited: `{block.text.splitlines()[0]}` changed or went",
                hint="add a new block (git agy-state memory session), or drop a whole block: "
                "git agy-state memory forget --layer experience MATCH",
            )


# ---- forget -----------------------------------------------------------------------------------


def forget(
    layer: str,
    match: str,
    project: str | None = None,
    dry_run: bool = False,
) -> Forgotten:
    """Remove the entries (experience: whole session blocks) that contain MATCH."""
    layer = layer_of(layer, files.LAYERS)
    if not match.strip():
        raise UsageError("MATCH is empty")
    if layer == "project":
        paths: list[str] | None = [files.project_path(project_name(project))]
    elif project is not None:
        raise UsageError("--project goes with --layer project")
    else:
        paths = {"knowledge": [files.MEMORY_FILE], "identity": [files.USER_FILE]}.get(layer)
    removed: list[tuple[str, str]] = []

    def change(brain: Brain, tip: str | None) -> dict[str, str | None]:
        removed.clear()
        targets = paths
        if targets is None:
            prefix = files.SESSIONS_DIR + "/"
            targets = sorted(p for p in brain.listing(tip) if p.startswith(prefix))
        out: dict[str, str | None] = {}
        for path in targets:
            text = brain.text(tip, path)
            if text is None:
                continue
            if path.startswith(files.SESSIONS_DIR + "/"):
                new, gone = _forget_blocks(text, match)
            else:
                new, gone = files.remove_entries(text, match)
            removed.extend((path, g) for g in gone)
            if gone:
                out[path] = new
        if not removed:
            raise NotFound(f"nothing in the {layer} layer contains {match!r}")
        return out

    if dry_run:
        brain, _ = brain_uc.open_brain()
        change(brain, brain.tip())
        return Forgotten(None, tuple(removed))
    written = brain_uc.write(change, f"memory forget ({layer}): {_subject(match)}", layer)
    return Forgotten(written, tuple(removed))


def _forget_blocks(text: str, match: str) -> tuple[str, list[str]]:
    preamble, blocks = sessions.parse_log(text)
    needle = match.casefold()
    gone = [b for b in blocks if needle in b.text.casefold()]
    if not gone:
        return text, []
    kept = [b for b in blocks if b not in gone]
    return sessions.render_log(preamble, kept), [b.text for b in gone]


# ---- the archive tie-in -----------------------------------------------------------------------


def record_archived_task(
    layout: Layout, goal: str, done: tuple[str, ...], key_data: tuple[str, ...], ref: str
) -> Sessioned | None:
    """A session block summarising an archived task, when a brain exists (else nothing).
    Credentials are redacted, never refused: the archive must not fail on the brain's account."""
    if not brain_uc.exists():
        return None
    from gitstate import secrets

    def clean(text: str) -> str:
        return secrets.redact(text)[0]

    name = files.project_slug(work_tree_name(layout))
    summary = clean(f"Archived task: {goal or 'task'} ({ref})")
    parts = (
        ("Done", tuple(clean(line) for line in done if line.strip())),
        ("Key Data", tuple(clean(line) for line in key_data if line.strip())),
    )
    workspace = str(layout.workdir) if layout.workdir else None
    return session(summary, name, workspace=workspace, parts=parts, allow_secret=True)
