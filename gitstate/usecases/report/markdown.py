"""A Report as Markdown for a pull-request description (pure): `git agy-state report`.

The same content as the page (docs/report.md), newest snapshot last as a reviewer reads a
story. Texts from the repository are escaped so that they stay text where Markdown is rendered:
`<`, `>` and `&` as entities (no raw HTML reaches the renderer), the characters that would start
emphasis, links, code or a table cell backslashed, and one line each (a newline in a text would
end a list item).
"""

from __future__ import annotations

from gitstate.document import controls
from gitstate.document.language import LANGUAGES
from gitstate.document.model import cut_suffix, parse_item, step_text
from gitstate.usecases.report.model import Annotation, Entry, Report

SHORT = 7
_SPECIAL = "\\`*_[]|#~!"


def text(value: str) -> str:
    """One line of repository text, safe inside Markdown."""
    flat = " ".join(controls.escape(value).split())
    out = []
    for ch in flat:
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch in _SPECIAL:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def render(report: Report) -> str:
    entries = report.entries
    notes = report.annotations()
    lines = [f"## {text(report.title)}", ""]
    lines.append(
        f"Task `{_code(report.task)}` · phase **{text(report.phase)}** · "
        f"{_count(len(entries), 'snapshot')} · tip `{report.tip[:SHORT]}`"
    )
    lines.append("")
    if len(report.goal) > 1:
        lines += ["### Goal", ""]
        lines += [f"- {text(g.removeprefix('- '))}" for g in report.goal]
        lines.append("")
    done = report.done_steps()
    report_lang = LANGUAGES[report.language]
    lines += ["### Steps", ""]
    for step in done:
        verified = f" — verified: {text(step.detail)}" if step.detail else ""
        lines.append(f"- [x] {text(step.text)}{verified}")
    for line in report.open_steps:
        item = parse_item(line)
        marker = item.marker if item else " "
        body = step_text(line, report_lang)
        _, reason = cut_suffix(item.text if item else "", report_lang.reason)
        label = {">": " (in progress)", "!": " (blocked)"}.get(marker, "")
        if marker == "!" and reason:
            label = f" (blocked: {text(reason.strip())})"
        lines.append(f"- [ ] {text(body)}{label}")
    if not done and not report.open_steps:
        lines.append("_No steps._")
    lines.append("")
    failed = [f for e in entries for f in e.failed]
    if failed:
        lines += ["### Tried and failed", ""]
        lines += [f"- {text(f)}" for f in failed]
        lines.append("")
    decisions = [a for a in notes if not a.known_error]
    errors = [a for a in notes if a.known_error]
    if decisions:
        lines += ["### Decisions", ""]
        lines += [_note(a) for a in decisions]
        lines.append("")
    if errors:
        lines += ["### Known errors", ""]
        lines += [_note(a) for a in errors]
        lines.append("")
    marks = report.checkpoints()
    if marks:
        lines += ["### Checkpoints", ""]
        lines += [f"- `{_code(m.name)}` on `{m.commit[:SHORT]}`: {text(m.message)}" for m in marks]
        lines.append("")
    if report.jobs:
        lines += [
            "### Jobs",
            "",
            "| job | state | agent | branch | result |",
            "|---|---|---|---|---|",
        ]
        for job in report.jobs:
            lines.append(
                f"| `{_code(job.id)}` | {text(job.state)} | {text(job.agent)} | "
                f"`{_code(job.branch)}` | {text(job.result)} |"
            )
        lines.append("")
    lines += ["<details><summary>Timeline</summary>", ""]
    lines += [_entry(e) for e in entries]
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _code(value: str) -> str:
    """Inside a code span: no backtick can close it, no newline can end it."""
    return " ".join(controls.escape(value).split()).replace("`", "'")


def _note(a: Annotation) -> str:
    if a.known_error:  # under "Known errors": the error type is the label
        kind, rest = a.error_label()
        head = f"- **{text(kind)}** {text(rest)}"
    else:
        head = f"- **{text(a.type)}** {text(a.text)}"
    if a.known_error:
        scope = dict(a.issue).get("scope")  # the text already says the type, cause and fix
        if scope:
            head += f" — scope: {text(scope)}"
    state = "" if a.active else ", superseded"
    return f"{head} (`{_code(a.id)}` on `{a.commit[:SHORT]}`{state})"


def _entry(e: Entry) -> str:
    what = [f"- `{e.commit[:SHORT]}` {e.time.replace('T', ' ')[:16]} **{text(e.phase)}**"]
    what.append(text(e.subject))
    extra = []
    if e.sections:
        extra.append("changed " + ", ".join(text(key) for key in e.sections))
    if e.merge is not None:
        merge = f"sync merge with `{e.merge.other[:SHORT]}`"
        if e.merge.conflicts:
            merge += ", conflicts in " + ", ".join(text(c) for c in e.merge.conflicts)
        extra.append(merge)
    extra += [f"checkpoint `{_code(m.name)}`" for m in e.checkpoints]
    line = " ".join(what)
    if extra:
        line += " (" + "; ".join(extra) + ")"
    return line
