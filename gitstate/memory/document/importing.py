"""Importing a folder of Markdown (an Agent Brain's `~/.agent-brain/`, or notes) into the brain:
where each file goes, and how it merges with what the brain holds (docs/memory.md, "Import").
Pure: paths and texts in, paths and texts out.

Routing: the brain's own files (`MEMORY.md`, `USER.md`, `sessions/YYYY-MM-DD.md`,
`projects/NAME.md`) go to the same path; any other Markdown file becomes a project file named
after its path (`notes/pool.md` -> `projects/notes-pool.md`), so a notes folder lands in files
that are searched but never injected unasked. Skipped, and listed: STATE.md (the working state
lives in the project, never in the brain), hidden files and folders (`.env` holds Agent Brain's
cloud token; `.sync-manifest.json`, `.git`), Agent Brain's scratch `tmp/`, anything that is not
Markdown (`brain.db` is its derived index).

Merging has no base (the folder and the brain share no history), so it is the union the brain's
sync would make of unrelated histories, made idempotent: a session log is the union of its
blocks, identical blocks once, ordered by their time (merge.merge_log); any other file, section
by section, keeps the brain's entries and appends the folder's entries it lacks, a section only
the folder has going after the section it follows there. Importing the same folder again changes
nothing.

A name over the project name limit is cut and ends in a hash (files.project_slug); a session log
needs a real date (`sessions/2026-13-45.md` is a plain note); two sources routed to one brain
path are refused (`collisions`), never merged behind the user's back. Source names are shown
through `shown`: a newline or any control in a file name is printed escaped.
"""

from __future__ import annotations

from typing import NamedTuple

from gitstate.memory.document import files
from gitstate.memory.document.files import Section
from gitstate.memory.document.merge import keyed_sections, merge_log, section_order
from gitstate.memory.document.sessions import parse_log, render_log

MARKDOWN_SUFFIXES = (".md", ".markdown")
SCRATCH_DIR = "tmp"
STATE_FILE = "STATE.md"
# Lines Agent Brain writes into a file's preamble on every save or merge: never worth a copy.
_ARTIFACTS = ("> Last updated:", "<!-- merged from")


class Route(NamedTuple):
    path: str | None  # the brain path, None when skipped
    reason: str  # why skipped, or how routed ("as is", "a project file")


def route(relative: str) -> Route:
    """Where the file at `relative` (a `/`-separated path inside the folder) goes."""
    parts = relative.split("/")
    name = parts[-1]
    if any(part.startswith(".") for part in parts):
        if name == ".env" and len(parts) == 1:
            return Route(None, "Agent Brain's credentials: never imported")
        return Route(None, "hidden")
    if parts[0] == SCRATCH_DIR and len(parts) > 1:
        return Route(None, "Agent Brain's scratch folder")
    if relative == STATE_FILE:
        return Route(None, "STATE.md is never imported: the working state lives in the project")
    if not name.lower().endswith(MARKDOWN_SUFFIXES):
        return Route(None, "not Markdown")
    if files.is_memory_path(relative):
        return Route(relative, "as is")
    stem = relative.rsplit(".", 1)[0]
    if stem.startswith(files.PROJECTS_DIR + "/"):
        stem = stem[len(files.PROJECTS_DIR) + 1 :]
    return Route(files.project_path(files.project_slug(stem.replace("/", "-"))), "a project file")


def collisions(routes: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(brain path, first source, second source) for every two sources of (source, brain
    path) `routes` that go to one brain path."""
    first: dict[str, str] = {}
    found = []
    for source, path in routes:
        if path in first:
            found.append((path, first[path], source))
        else:
            first[path] = source
    return found


def shown(name: str) -> str:
    """A source name for a line of output: controls escaped, tab and newline too."""
    from gitstate.document.controls import escape

    return escape(name).replace("\t", "\\t").replace("\n", "\\n")


def skipped_folder(relative: str) -> str | None:
    """Why the folder at `relative` is not walked at all, or None to walk it."""
    name = relative.rsplit("/", 1)[-1]
    if name.startswith("."):
        return "hidden"
    if relative == SCRATCH_DIR:
        return "Agent Brain's scratch folder"
    return None


def merge(path: str, ours: str | None, theirs: str) -> str:
    """The brain's file at `path` (None: it has none) with the folder's text merged in. A new
    file is rendered as the brain renders it too (session blocks without the peer's `---`,
    one blank line after each section), so that importing it again finds nothing to add."""
    if path.startswith(files.SESSIONS_DIR + "/"):
        return _merge_log(path, ours or "", theirs)
    return _merge_sections(ours or "", theirs)


def _merge_log(path: str, ours: str, theirs: str) -> str:
    date = path[len(files.SESSIONS_DIR) + 1 : -len(".md")]
    merged = merge_log("", ours, theirs, date=date)
    our_pre, _ = parse_log(ours)
    their_pre, _ = parse_log(theirs)
    preamble = _union(_lines(our_pre), _preamble_lines(their_pre, our_pre), blank_gaps=True)
    kept, blocks = parse_log(merged)
    text = "\n".join(preamble)
    return merged if text.strip() == kept.strip() else render_log(text, blocks)


def _merge_sections(ours: str, theirs: str) -> str:
    mine = keyed_sections(files.parse_sections(ours))
    other = keyed_sections(files.parse_sections(theirs))
    result: list[Section] = []
    for key in section_order(list(mine), list(other)):
        o, t = mine.get(key), other.get(key)
        if o is None and t is not None:
            lines = t.lines
            if t.heading is None:
                lines = tuple(_preamble_lines("\n".join(t.lines), ""))
            result.append(Section(t.heading, lines))
        elif o is not None and t is None:
            result.append(o)
        elif o is not None and t is not None:
            theirs_lines = list(t.lines)
            if o.heading is None:
                theirs_lines = _preamble_lines("\n".join(t.lines), "\n".join(o.lines))
            result.append(Section(o.heading, tuple(_union(list(o.lines), theirs_lines))))
    if not result or result[0].heading is not None:
        result.insert(0, Section(None, ()))
    return files.render_sections(result)


def _lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n") if text.strip() else []


def _preamble_lines(theirs: str, ours: str) -> list[str]:
    """The folder's preamble without Agent Brain's artifacts, and without its title when the
    brain's file has one (a file has one title)."""
    has_title = any(line.startswith("# ") for line in _lines(ours))
    kept = []
    for line in _lines(theirs):
        if line.startswith(_ARTIFACTS) or (has_title and line.startswith("# ")):
            continue
        kept.append(line)
    return kept


def _union(ours: list[str], theirs: list[str], blank_gaps: bool = True) -> list[str]:
    """Our lines, then each entry of theirs (a line and its indented continuation) we lack; a
    blank line of theirs before an appended entry is kept, so paragraphs stay apart."""
    if not any(line.strip() for line in ours):
        return list(theirs)
    have = {tuple(entry) for entry in files.entries(ours)}
    out = list(ours)
    gap = False
    for entry in files.entries(theirs):
        if not any(line.strip() for line in entry):
            gap = True
            continue
        if tuple(entry) not in have:
            have.add(tuple(entry))
            if gap and blank_gaps and out and out[-1].strip():
                out.append("")
            out.extend(entry)
        gap = False
    return out


__all__ = ["Route", "merge", "route", "skipped_folder"]
