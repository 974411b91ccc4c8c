"""The memory files of the brain as text (docs/memory.md): MEMORY.md, USER.md, projects/<name>.md.

Pure: no git, no I/O, and no `typing` at run time (the agent hook cuts these files into sections
at session start). A file is a preamble and `## ` sections; entries are the lines of a section (a
bullet and its indented continuation lines make one entry). The templates are frozen: `memory
init` commits them with a fixed author and time so every machine starts from the same root.
"""

from __future__ import annotations

import re
from collections import namedtuple

MEMORY_FILE = "MEMORY.md"
USER_FILE = "USER.md"
SESSIONS_DIR = "sessions"
PROJECTS_DIR = "projects"
LINE_LIMIT = 500  # MEMORY.md, counted as `wc -l` does
WARN_AT = 400
FORMAT_VERSION = "1"
FORMAT_TRAILER = "Agy-Memory-Format"

LAYERS = ("knowledge", "identity", "project", "experience")
LAYER_ALIASES = {"session": "experience", "sessions": "experience", "user": "identity"}
# The section an `add` goes to when no --section is given.
DEFAULT_SECTIONS = {"knowledge": "Technical Knowledge", "identity": "Coding Preferences"}
PROJECT_SECTION = "Context"
TIMELINE_SECTION = "Timeline"
ARCHIVED_PREFIX = "[ARCHIVED] "

PROJECT_RE = re.compile(r"^[A-Za-z0-9._-]+$")
# Characters of a project name (ASCII, so bytes too): projects/<name>.md and the cache's files
# stay far below a file system's 255-byte name limit (docs/memory.md, "Files and routing").
PROJECT_NAME_LIMIT = 100
DATE_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_PATH_RE = re.compile(
    r"^(?:MEMORY\.md|USER\.md|projects/[A-Za-z0-9._-]+\.md|sessions/[0-9]{4}-[0-9]{2}-[0-9]{2}\.md)$"
)
_BULLET_RE = re.compile(r"^(?:[-*+] |\d+[.)] |\| |#|>)")

MEMORY_TEMPLATE = """\
# Agent Brain — Long-Term Memory

Durable facts worth knowing in 30 days and in any project. Session detail goes to sessions/,
project detail to projects/.

## Technical Knowledge

## Projects Overview

## Cross-Project Patterns

## Environment

## Important Decisions
"""

USER_TEMPLATE = """\
# User Profile

Who the user is and how they like to work, from repeated observation.

## Identity

## Coding Preferences

## Communication Style

## Workflow Habits

## Pet Peeves
"""


def project_template(name: str) -> str:
    return (
        f"# Project: {name}\n\n"
        f"## {PROJECT_SECTION}\n\n"
        "## Key Architecture Decisions\n\n"
        f"## {TIMELINE_SECTION}\n\n"
        "## Known Issues\n"
    )


def project_path(name: str) -> str:
    return f"{PROJECTS_DIR}/{name}.md"


def session_path(date: str) -> str:
    return f"{SESSIONS_DIR}/{date}.md"


def is_memory_path(path: str) -> bool:
    """One of the files the brain holds (no other path is read, written or shown): a tree from
    anywhere (a sync, an older version) with an over-long project name or a date no calendar
    has is left out of the cache and the index."""
    if not _PATH_RE.match(path):
        return False
    if path.startswith(PROJECTS_DIR + "/"):
        return valid_project(path[len(PROJECTS_DIR) + 1 : -len(".md")])
    if path.startswith(SESSIONS_DIR + "/"):
        return real_date(path[len(SESSIONS_DIR) + 1 : -len(".md")])
    return True


def valid_project(name: str) -> bool:
    return (
        len(name) <= PROJECT_NAME_LIMIT and bool(PROJECT_RE.match(name)) and name not in (".", "..")
    )


_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def real_date(date: str) -> bool:
    """YYYY-MM-DD naming a day that exists (no datetime import: the hook path reads this)."""
    if not DATE_RE.match(date):
        return False
    year, month, day = int(date[:4]), int(date[5:7]), int(date[8:])
    if not 1 <= month <= 12 or not 1 <= day <= _MONTH_DAYS[month - 1]:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return not (month == 2 and day == 29 and not leap)


def project_slug(name: str) -> str:
    """A valid project name made from any folder name (the archive tie-in never refuses); one
    over PROJECT_NAME_LIMIT is cut and ends in a short hash of the whole name, so two long
    names that share a beginning stay two projects."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    if len(slug) > PROJECT_NAME_LIMIT:
        import hashlib  # only here: the hook path never needs it

        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        slug = slug[: PROJECT_NAME_LIMIT - len(digest) - 1].rstrip("-.") + "-" + digest
    return slug or "project"


def layer_name(value: str) -> str | None:
    low = value.strip().lower()
    low = LAYER_ALIASES.get(low, low)
    return low if low in LAYERS else None


def count_lines(text: str) -> int:
    """As `wc -l`: the newline characters."""
    return text.count("\n")


# ---- sections -------------------------------------------------------------------------------

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

    class Section(NamedTuple):
        heading: str | None  # the text after `## `; None for the preamble
        lines: tuple[str, ...]  # the body, trailing blank lines cut

else:
    Section = namedtuple("Section", "heading lines")


def _heading(line: str) -> str | None:
    if line.startswith("## "):
        return line[3:].strip()
    if line.rstrip() == "##":
        return ""
    return None


def parse_sections(text: str) -> list[Section]:
    """The preamble (always first, maybe empty) and each `## ` section, in file order."""
    sections: list[Section] = []
    heading: str | None = None
    lines: list[str] = []
    fence = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
        found = None if fence else _heading(line)
        if found is not None:
            sections.append(Section(heading, tuple(_trim(lines))))
            heading, lines = found, []
        else:
            lines.append(line.rstrip())
    sections.append(Section(heading, tuple(_trim(lines))))
    return sections


def _trim(lines: list[str]) -> list[str]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def render_sections(sections: list[Section]) -> str:
    """Each section, then one blank line; the file ends with one newline."""
    parts: list[str] = []
    for section in sections:
        block = [] if section.heading is None else [f"## {section.heading}"]
        block.extend(section.lines)
        if block:
            parts.append("\n".join(block))
    return "\n\n".join(parts) + "\n" if parts else ""


def same_heading(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a is b
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def find_section(sections: list[Section], heading: str) -> int | None:
    for index, section in enumerate(sections):
        if section.heading is not None and same_heading(section.heading, heading):
            return index
    return None


def entry_lines(text: str) -> list[str]:
    """An added entry as lines: a bullet unless it is one already; continuation lines indented."""
    raw = [line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n")]
    raw = [line for line in raw if line.strip()] or [""]
    first = raw[0].strip()
    lines = [first if _BULLET_RE.match(first) else f"- {first}"]
    for line in raw[1:]:
        lines.append(line if line.startswith(("  ", "\t")) else "  " + line.strip())
    return lines


def add_entry(text: str, heading: str, lines: list[str]) -> tuple[str, bool]:
    """`text` with `lines` appended to section `heading` (created at the end if missing);
    (new text, False) when the section already holds that entry."""
    sections = parse_sections(text)
    index = find_section(sections, heading)
    if index is None:
        sections.append(Section(" ".join(heading.split()), tuple(lines)))
        return render_sections(sections), True
    body = list(sections[index].lines)
    if _contains(body, lines):
        return text, False
    sections[index] = Section(sections[index].heading, tuple(body + lines))
    return render_sections(sections), True


def _contains(body: list[str], lines: list[str]) -> bool:
    size = len(lines)
    return any(body[i : i + size] == lines for i in range(len(body) - size + 1))


def entries(lines: tuple[str, ...] | list[str]) -> list[list[str]]:
    """A section body cut into entries: a line and the indented lines that continue it."""
    found: list[list[str]] = []
    for line in lines:
        if found and line.startswith(("  ", "\t")) and line.strip() and found[-1][0].strip():
            found[-1].append(line)
        else:
            found.append([line])
    return found


def remove_entries(text: str, match: str) -> tuple[str, list[str]]:
    """Drop every entry containing `match` (case-insensitive); headings stay. (text, removed)."""
    needle = match.casefold()
    sections = parse_sections(text)
    removed: list[str] = []
    for index, section in enumerate(sections):
        kept: list[str] = []
        for entry in entries(section.lines):
            whole = "\n".join(entry)
            if whole.strip() and not entry[0].startswith("#") and needle in whole.casefold():
                removed.append(whole)
            else:
                kept.extend(entry)
        sections[index] = Section(section.heading, tuple(_trim(kept)))
    if not removed:
        return text, []
    return render_sections(sections), removed


def set_title_prefix(text: str, prefix: str) -> str:
    """The `# ` title line with `prefix` after the `# ` (added once)."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.startswith("# "):
            if not line[2:].startswith(prefix):
                lines[index] = "# " + prefix + line[2:]
            return "\n".join(lines)
        if line.strip():
            break
    return f"# {prefix}\n" + text
