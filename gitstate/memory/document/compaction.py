"""What `memory compact` may do to bring MEMORY.md back under its cap. Pure.

Mechanical moves only, each with a stable id the user confirms by name:
- drop: an entry of MEMORY.md unreferenced for 90 days (not written or changed in 90 days, and
  not quoted in a session of the last 90 days);
- move: an entry of MEMORY.md about one project (it links `[[projects/<name>]]` or names a known
  project) goes to that project's file, section Context;
- archive: a project unreferenced for 60 days (no session of it, no change to its file) gets the
  `[ARCHIVED]` prefix on its title.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from gitstate.memory.document import files

DROP_DAYS = 90
ARCHIVE_DAYS = 60
DAY = 86400
# Sections of MEMORY.md whose entries are about projects on purpose.
_KEEP_PROJECT_SECTIONS = {"projects overview"}
_NAME_MIN = 4  # shorter project names ("api", "cli") are too common to spot in prose


class Candidate(NamedTuple):
    id: str
    kind: str  # drop, move, archive
    path: str  # the file the entry (or title) is in
    text: str  # the entry's lines, or the project's title
    target: str | None  # move: the project file it goes to
    reason: str

    def as_json(self) -> dict[str, object]:
        return self._asdict()


class History(NamedTuple):
    line_since: dict[str, int]  # a MEMORY.md line -> when it was written (or last changed)
    project_touched: dict[str, int]  # a project -> its file's last change
    project_sessions: dict[str, int]  # a project -> its newest session block
    recent_sessions: str  # the session text of the last DROP_DAYS days, casefolded
    horizon: int  # how far back the history was read (older changes are not known apart)


def _id(kind: str, path: str, text: str) -> str:
    return hashlib.sha1(f"{kind}\0{path}\0{text}".encode()).hexdigest()[:8]


def _core(entry: str) -> str:
    first = entry.strip().split("\n", 1)[0]
    return re.sub(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", "", first).strip()


def _project_of(entry: str, projects: list[str]) -> str | None:
    link = re.search(r"\[\[projects/([A-Za-z0-9._-]+)\]\]", entry)
    if link and link.group(1) in projects:
        return link.group(1)
    for name in projects:
        if len(name) >= _NAME_MIN and re.search(rf"(?<![\w/-]){re.escape(name)}(?![\w-])", entry):
            return name
    return None


def plan(
    memory: str, project_files: dict[str, str], history: History, now: float
) -> list[Candidate]:
    """Every candidate, in file order (entries), then projects by name."""
    found: list[Candidate] = []
    projects = sorted(project_files)
    drop_before = now - DROP_DAYS * DAY
    for section in files.parse_sections(memory):
        if section.heading is None:
            continue
        keep_projects = section.heading.casefold() in _KEEP_PROJECT_SECTIONS
        for entry in files.entries(section.lines):
            text = "\n".join(entry)
            if not text.strip() or not re.match(r"^(?:[-*+]|\d+[.)])\s", entry[0]):
                continue
            project = None if keep_projects else _project_of(text, projects)
            if project is not None:
                found.append(
                    Candidate(
                        _id("move", files.MEMORY_FILE, text),
                        "move",
                        files.MEMORY_FILE,
                        text,
                        files.project_path(project),
                        f"project detail: belongs in {files.project_path(project)}",
                    )
                )
                continue
            since = max((history.line_since.get(line, int(now)) for line in entry), default=0)
            core = _core(text).casefold()
            quoted = bool(core) and core in history.recent_sessions
            if since < drop_before and not quoted:
                days = int((now - since) // DAY)
                found.append(
                    Candidate(
                        _id("drop", files.MEMORY_FILE, text),
                        "drop",
                        files.MEMORY_FILE,
                        text,
                        None,
                        f"unreferenced for {days} days",
                    )
                )
    archive_before = now - ARCHIVE_DAYS * DAY
    for name in projects:
        text = project_files[name]
        title = next((line for line in text.split("\n") if line.startswith("# ")), "")
        if title[2:].startswith(files.ARCHIVED_PREFIX):
            continue
        last = max(history.project_touched.get(name, 0), history.project_sessions.get(name, 0))
        if last < archive_before:
            known = last > history.horizon
            days = int((now - (last if known else history.horizon)) // DAY)
            found.append(
                Candidate(
                    _id("archive", files.project_path(name), title),
                    "archive",
                    files.project_path(name),
                    title or f"# Project: {name}",
                    None,
                    f"unreferenced for {'' if known else 'over '}{days} days",
                )
            )
    return found


def apply(memory: str, project_files: dict[str, str], chosen: list[Candidate]) -> dict[str, str]:
    """The files the chosen candidates change: path -> new text."""
    out: dict[str, str] = {}
    for candidate in chosen:
        if candidate.kind in ("drop", "move"):
            current = out.get(files.MEMORY_FILE, memory)
            out[files.MEMORY_FILE] = _remove_entry(current, candidate.text)
        if candidate.kind == "move" and candidate.target:
            name = candidate.target[len(files.PROJECTS_DIR) + 1 : -len(".md")]
            current = out.get(candidate.target, project_files.get(name, ""))
            lines = candidate.text.split("\n")
            out[candidate.target], _ = files.add_entry(current, files.PROJECT_SECTION, lines)
        if candidate.kind == "archive":
            name = candidate.path[len(files.PROJECTS_DIR) + 1 : -len(".md")]
            current = out.get(candidate.path, project_files.get(name, ""))
            out[candidate.path] = files.set_title_prefix(current, files.ARCHIVED_PREFIX)
    return out


def _remove_entry(text: str, entry: str) -> str:
    sections = files.parse_sections(text)
    for index, section in enumerate(sections):
        kept: list[str] = []
        gone = False
        for lines in files.entries(section.lines):
            if not gone and "\n".join(lines) == entry:
                gone = True
                continue
            kept.extend(lines)
        if gone:
            sections[index] = files.Section(section.heading, tuple(kept))
            return files.render_sections(sections)
    return text
