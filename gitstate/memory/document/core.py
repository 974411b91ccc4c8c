"""The memory core injected at session start (docs/memory.md), cut to a byte budget. Pure.

Order: USER.md, projects/<this project>.md, MEMORY.md, then this project's session blocks of
today and yesterday, newest first. Cuts fall between sections and blocks, never inside one; what
did not fit is named with a pointer to `memory show`. Empty sections and the templates' own
preambles are left out. No `typing` at run time: the agent hook calls this.
"""

from __future__ import annotations

from gitstate.memory.document import files, sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

HEADER = (
    "=== Memory (git agy-state memory) ===\n"
    "Long-term memory from earlier sessions, kept across projects and machines: the user's "
    "profile, this project's notes, durable knowledge, this project's latest sessions. It is "
    "background: the user's current instruction and the work tree win. More: "
    "`git agy-state memory search QUERY`; record with `git agy-state memory add` / "
    "`memory session`."
)
CUT_NOTE = "(Cut to fit agy.memoryBudget: {names}. The whole text: git agy-state memory show.)"
_TEMPLATE_PREAMBLES = {
    files.parse_sections(files.MEMORY_TEMPLATE)[0].lines,
    files.parse_sections(files.USER_TEMPLATE)[0].lines,
}


def _units(text: str) -> list[str]:
    """A memory file as the pieces a cut may fall between: its non-empty sections."""
    found: list[str] = []
    for section in files.parse_sections(text):
        if section.heading is None:
            if section.lines in _TEMPLATE_PREAMBLES:
                continue
            body = [line for line in section.lines if not line.startswith("# ")]
            if any(line.strip() for line in body):
                found.append("\n".join(section.lines).strip("\n"))
        elif any(line.strip() for line in section.lines):
            found.append("\n".join([f"## {section.heading}", *section.lines]))
    return found


def core_text(
    read: Callable[[str], str | None],
    project: str | None,
    today: str,
    yesterday: str,
    budget: int,
) -> str | None:
    """The memory core within `budget` bytes of UTF-8; None when there is nothing to say."""
    parts: list[tuple[str, list[str]]] = []
    names = [files.USER_FILE]
    if project and files.valid_project(project):
        names.append(files.project_path(project))
    names.append(files.MEMORY_FILE)
    for name in names:
        text = read(name)
        if text:
            parts.append((name, _units(text)))
    if project:
        for date in (today, yesterday):
            path = files.session_path(date)
            text = read(path)
            if not text:
                continue
            _, blocks = sessions.parse_log(text)
            mine = [b.text for b in reversed(blocks) if sessions.belongs_to(b, project)]
            parts.append((f"{path} (this project, newest first)", mine))
    return fit(parts, budget)


def fit(parts: list[tuple[str, list[str]]], budget: int) -> str | None:
    """Header, then each part's units in order while they fit; a part stops at its first unit
    that does not fit (later parts may still fit)."""
    out = [HEADER]
    used = len(HEADER.encode()) + 1
    reserve = len(CUT_NOTE.encode()) + 200  # room for the names of what was cut
    cut: list[str] = []
    wrote = False
    for name, units in parts:
        label = f"--- {name} ---"
        taken: list[str] = []
        size = len(label.encode()) + 2
        for unit in units:
            cost = len(unit.encode()) + 2
            if used + size + cost + reserve > budget:
                cut.append(name.split(" ", 1)[0])
                break
            taken.append(unit)
            size += cost
        if taken:
            out.append(label + "\n" + "\n\n".join(taken))
            used += size
            wrote = True
    if not wrote:
        return None
    if cut:
        out.append(CUT_NOTE.format(names=", ".join(cut)))
    return "\n\n".join(out) + "\n"
