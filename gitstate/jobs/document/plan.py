"""Plans and prompts: the plan's front matter, the execution contract, the result schema.

Pure functions over text. A plan may open with `---` front matter holding `scope`,
`acceptance` and `constraints` (a scalar, an inline `[a, b]` list, or `- item` lines); front
matter that does not parse is taken as part of the body, as sub-agy does.
"""

from __future__ import annotations

import functools
import json
from typing import Any, NamedTuple

from gitstate.document import controls
from gitstate.errors import UsageError

MAX_PROMPT_BYTES = 200 * 1024
KEYS = ("scope", "acceptance", "constraints")

RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "files_changed": {"type": "array", "items": {"type": "string"}},
        "tests_ran": {"type": "array", "items": {"type": "string"}},
        "tests_passed": {"type": "boolean"},
        "acceptance_met": {"type": "array", "items": {"type": "string"}},
        "blockers": {"type": "array", "items": {"type": "string"}},
        "followups": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["summary", "files_changed", "tests_passed"],
    "additionalProperties": False,
}


class Plan(NamedTuple):
    body: str
    scope: tuple[str, ...] = ()
    acceptance: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """The plan's first non-empty line without heading marks (the seeded state's goal)."""
        for line in self.body.splitlines():
            text = line.strip().lstrip("#").strip()
            if text:
                return text[:200]
        return "background job"


def decode_plan(data: bytes, where: str) -> str:
    """The plan as text; a binary or non-UTF-8 file is a usage error."""
    if b"\0" in data:
        raise UsageError(f"{where} is not a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{where} is not UTF-8 text") from None


def check_text(text: str, where: str = "the plan") -> str:
    """Refuse a plan with control characters (docs/jobs.md): it is a document, printed by
    `job list`/`job show` and committed to the job record, and a terminal would obey them."""
    found = controls.find(text)
    if found:
        number, char = found[0]
        raise UsageError(
            f"{where} line {number} holds the control character {controls.name(char)}",
            hint="remove it: terminal escapes, backspaces and bidi overrides make text show "
            "as something else",
        )
    return text


def parse_plan(text: str) -> Plan:
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return Plan(text)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return Plan(text)
    fields = _front_matter(lines[1:end])
    if fields is None:
        return Plan(text)
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return Plan(body, *(tuple(fields.get(key, ())) for key in KEYS))


def _front_matter(lines: list[str]) -> dict[str, list[str]] | None:
    fields: dict[str, list[str]] = {}
    current: str | None = None
    for raw in lines:
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        stripped = raw.strip()
        if stripped.startswith("- ") and current is not None and raw[:1] in (" ", "-", "\t"):
            fields[current].append(_unquote(stripped[2:]))
            continue
        key, sep, value = raw.partition(":")
        key = key.strip()
        if not sep or not key or " " in key:
            return None  # not front matter we understand: the whole text is the body
        current = key.lower()
        fields[current] = []
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            fields[current] = [_unquote(v) for v in value[1:-1].split(",") if v.strip()]
        elif value:
            fields[current] = [_unquote(value)]
    return fields


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _listed(items: tuple[str, ...], default: str) -> str:
    return "; ".join(items) if items else default


def build_prompt(
    plan: Plan,
    *,
    job_id: str,
    worktree: str,
    branch: str | None,
    round_no: int,
    feedback: str | None = None,
    previous_summary: str | None = None,
) -> str:
    """The plan (or, from round 2, the feedback) followed by the execution contract."""
    if round_no <= 1:
        head = plan.body.rstrip()
    else:
        head = "\n".join(
            (
                f"Feedback on the previous round: {feedback or '(none)'}",
                f"Summary of the previous round: {previous_summary or '(none)'}",
                "Fix this, then meet the contract below again.",
            )
        )
    where = f"on branch {branch}" if branch else "on the current branch"
    contract = [
        "## Execution contract (from git agy-state; follow it)",
        f"- Work only inside {worktree} ({where}); touch nothing outside it.",
        "- Change only files in scope: "
        + _listed(plan.scope, "not declared, so judge conservatively"),
        "- Run the acceptance checks and make them pass: "
        + _listed(plan.acceptance, "not declared"),
        "- Respect the constraints: " + _listed(plan.constraints, "none"),
        f"- Commit your work {where} with a conventional commit message (job {job_id}).",
        "- Keep your task state in STATE.md with `git agy-state patch` as you go.",
        "- Your final answer must satisfy the JSON schema: summary, files_changed, tests_ran, "
        "tests_passed, acceptance_met, blockers, followups.",
        "- Never write files into the worktree as artifacts of your answer.",
    ]
    prompt = head + "\n\n" + "\n".join(contract) + "\n"
    size = len(prompt.encode())
    if size > MAX_PROMPT_BYTES:
        raise UsageError(
            f"the prompt would be {size // 1024} KB; the limit is {MAX_PROMPT_BYTES // 1024} KB",
            hint="shorten the plan or the feedback, or point the agent at files instead",
        )
    return prompt


@functools.cache  # once per process: a server submits many jobs
def schema_text() -> str:
    return json.dumps(RESULT_SCHEMA, indent=2) + "\n"


def contract_problems(output: Any) -> list[str]:
    """What keeps `output` from meeting the result schema (empty: it does)."""
    if not isinstance(output, dict):
        return ["no structured output"]
    problems = [f"missing {key}" for key in RESULT_SCHEMA["required"] if key not in output]
    for key, value in output.items():
        spec = RESULT_SCHEMA["properties"].get(key)
        if spec is None:
            problems.append(f"unexpected {key}")
        elif spec["type"] == "string" and not isinstance(value, str):
            problems.append(f"{key} is not a string")
        elif spec["type"] == "boolean" and not isinstance(value, bool):
            problems.append(f"{key} is not a boolean")
        elif spec["type"] == "array" and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            problems.append(f"{key} is not a list of strings")
    return problems
