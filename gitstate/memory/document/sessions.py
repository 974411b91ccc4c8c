"""Session logs (`sessions/YYYY-MM-DD.md`): append-only blocks `## Session HH:MM:SS — context`.

A block is identified by its whole text: it is never edited once written, merges drop only
identical blocks. Each carries `**Time**:` (ISO 8601 with offset) so merged logs can be ordered
by time. Pure: no git, no I/O, and no `typing` at run time (the agent hook reads today's blocks).
"""

from __future__ import annotations

import re
import time
from collections import namedtuple

SESSION_RE = re.compile(r"^## Session ([0-9]{2}:[0-9]{2}(?::[0-9]{2})?)(?:\s+[—–-]+\s*(.*))?\s*$")
_PROJECT_RE = re.compile(
    r"^\*\*(?:Project|專案|项目)\*\*\s*[:：]\s*\[\[projects/([A-Za-z0-9._-]+)\]\]"
)
_TIME_RE = re.compile(r"^\*\*Time\*\*\s*[:：]\s*(\S+)")

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

    class Block(NamedTuple):
        clock: str  # HH:MM:SS from the heading (local time of the writer)
        context: str  # the heading's text after the dash
        text: str  # the whole block, heading first, no trailing blank line
        project: str | None  # from `**Project**: [[projects/<name>]]`
        time: str | None  # from `**Time**:`, ISO 8601 with offset

else:
    Block = namedtuple("Block", "clock context text project time")


def days(now: float) -> tuple[str, str]:
    """The local dates of today and yesterday at `now` (a calendar day back, whatever the DST)."""
    today = time.localtime(now)
    noon = time.mktime((today.tm_year, today.tm_mon, today.tm_mday - 1, 12, 0, 0, 0, 0, -1))
    return time.strftime("%Y-%m-%d", today), time.strftime("%Y-%m-%d", time.localtime(noon))


def log_title(date: str) -> str:
    return f"# Sessions — {date}"


def anchor(clock: str) -> str:
    """The link target of a block: `session-hhmmss`."""
    return "session-" + clock.replace(":", "")


def link(date: str, clock: str) -> str:
    return f"[[sessions/{date}#{anchor(clock)}]]"


def parse_block(text: str) -> Block:
    lines = text.split("\n")
    match = SESSION_RE.match(lines[0])
    clock, context = (match.group(1), (match.group(2) or "").strip()) if match else ("", "")
    project = when = None
    for line in lines[1:12]:
        found = _PROJECT_RE.match(line)
        if found and project is None:
            project = found.group(1)
        found = _TIME_RE.match(line)
        if found and when is None:
            when = found.group(1)
    return Block(clock, context, text, project, when)


def parse_log(text: str) -> tuple[str, list[Block]]:
    """(the preamble before the first block, the blocks in file order)."""
    preamble: list[str] = []
    blocks: list[list[str]] = []
    fence = False
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
        if not fence and SESSION_RE.match(line):
            blocks.append([line.rstrip()])
        elif blocks:
            blocks[-1].append(line.rstrip())
        else:
            preamble.append(line.rstrip())
    return "\n".join(_trim(preamble)), [parse_block("\n".join(_trim(b))) for b in blocks]


def _trim(lines: list[str]) -> list[str]:
    """Without trailing blank lines and `---` separators (the peer joins blocks with them)."""
    end = len(lines)
    while end and (not lines[end - 1].strip() or lines[end - 1].strip() == "---"):
        end -= 1
    return lines[:end]


def render_log(preamble: str, blocks: list[Block]) -> str:
    parts = [preamble.rstrip("\n")] if preamble.strip() else []
    parts.extend(block.text for block in blocks)
    return "\n\n".join(parts) + "\n" if parts else ""


def append(log: str, date: str, block_text: str) -> str:
    """The log with one more block at its end; the old text stays byte for byte."""
    if not log.strip():
        return f"{log_title(date)}\n\n{block_text.rstrip()}\n"
    head = log if log.endswith("\n") else log + "\n"
    return f"{head}\n{block_text.rstrip()}\n"


def render_block(
    clock: str,
    context: str,
    when: str,
    summary: str,
    project: str | None = None,
    workspace: str | None = None,
    parts: list[tuple[str, list[str]]] | None = None,
) -> str:
    """A new block: the heading, Project/Workspace/Time, Summary, then each non-empty part as
    `### Title` with its lines (bullets added where missing)."""
    lines = [f"## Session {clock} — {context}".rstrip()]
    if project:
        lines.append(f"**Project**: [[projects/{project}]]")
    if workspace:
        lines.append(f"**Workspace**: {' '.join(workspace.split())}")
    lines += [f"**Time**: {when}", "", "### Summary"]
    lines += [line.rstrip() for line in summary.strip().split("\n")]
    for title, items in parts or []:
        items = [item for item in items if item.strip()]
        if not items:
            continue
        lines += ["", f"### {title}"]
        for item in items:
            first, *rest = item.rstrip().strip("\n").split("\n")
            if first.lstrip().startswith(("- ", "* ")) or first.startswith(("  ", "\t")):
                lines.append(first)  # already a bullet, or a sub-line kept verbatim
            else:
                lines.append(f"- {first.strip()}")
            lines += ["  " + line.strip() for line in rest if line.strip()]
    # A body line must never read as the heading of another block.
    body = [" " + line if SESSION_RE.match(line) else line for line in lines[1:]]
    return "\n".join([lines[0], *body])


def belongs_to(block: Block, project: str) -> bool:
    if block.project is not None:
        return bool(block.project == project)
    return bool(block.context == project)
