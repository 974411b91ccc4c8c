"""How a background job runs an agent CLI: the execution contract, in one vocabulary.

A job calls the agent once per attempt with a Call (the prompt, model, effort, timeout, schema,
the conversation to continue) and reads its stdout as JSON lines until one result line, read
into an Outcome. What differs per CLI (the argv, where the result sits in a line, its field
names) is that agent module's JOB adapter (agents/agy.py, agents/claude.py); this module is the
part they share and the Agent the jobs slice holds (docs/jobs.md). Not on the hook path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple, Protocol

from gitstate import agents


class Call(NamedTuple):
    prompt: str
    model: str | None
    effort: str | None
    timeout: str  # "30m"
    schema_path: Path | None  # None: leave the schema out (round-2 rule)
    conversation: str | None


class Outcome(NamedTuple):
    """The agent's result line, in one vocabulary for every agent."""

    status: str | None  # SUCCESS, ERROR, CANCELED, INTERRUPTED, INVALID, … (None: not given)
    response: str
    structured_output: Any
    conversation_id: str | None
    duration_seconds: float | None
    num_turns: int | None
    usage: dict[str, Any] | None


class Quota(NamedTuple):
    """An agent's usage windows, in one vocabulary for every agent: each window a dict of
    name, used, limit, remaining, percent and resets_at (None: the agent did not say)."""

    agent: str  # the agent's display name (its module's TITLE): "agy"
    source: str  # how the answer was read: "json", or "text" (tab-separated)
    windows: list[dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source, "windows": self.windows}


class JobAdapter(Protocol):
    """What an agent module's JOB provides."""

    @property
    def CONVERSATION_KEYS(self) -> tuple[str, ...]:  # a class constant in the adapters
        """The fields a stream line names its conversation in."""
        ...

    def argv(self, command: tuple[str, ...], skip_permissions: bool, call: Call) -> list[str]:
        """The agent's command line for one attempt. The prompt is the user's plan first: it
        must never be read as an option (docs/jobs.md, "The prompt is never an option")."""
        ...

    def quota_argv(self, command: tuple[str, ...]) -> list[str] | None:
        """The command that prints the usage windows as JSON; None when the CLI has none."""
        ...

    def read_quota(self, text: str) -> Quota:
        """The usage windows in what quota_argv's command printed; Failure when unreadable."""
        ...

    def auth_dirs(self, home: Path) -> list[Path]:
        """Where the CLI keeps its login (doctor warns when none exists)."""
        ...

    def result_body(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """The result object a stream line carries in this CLI's shape, else None."""
        ...

    def result_fields(self, body: dict[str, Any]) -> dict[str, Any]:
        """status, response and duration_seconds as this CLI names them (absent: not given)."""
        ...

    def false_alarm(self, outcome: Outcome) -> bool:
        """Whether a failed result is this CLI's known false alarm: the work itself is there
        and the round counts as done."""
        ...


class Agent(NamedTuple):
    """The configured agent of the jobs: which adapter (`kind`), the command, the permissions
    (the jobs slice makes it from its settings: jobs/usecases/agents.py:configured)."""

    kind: str
    command: tuple[str, ...]
    skip_permissions: bool

    @property
    def name(self) -> str:
        return self.command[0]

    @property
    def adapter(self) -> JobAdapter:
        return agents.job_adapter(self.kind)

    def argv(self, call: Call) -> list[str]:
        return self.adapter.argv(self.command, self.skip_permissions, call)

    def version_argv(self) -> list[str]:
        return [*self.command, "--version"]

    def quota_argv(self) -> list[str] | None:
        return self.adapter.quota_argv(self.command)

    def auth_dirs(self, home: Path) -> list[Path]:
        return self.adapter.auth_dirs(home)

    def read_quota(self, text: str) -> Quota:
        return self.adapter.read_quota(text)

    def false_alarm(self, outcome: Outcome) -> bool:
        return self.adapter.false_alarm(outcome)


def _adapters() -> list[JobAdapter]:
    return [agents.job_adapter(kind) for kind in agents.job_kinds()]


def result_of(event: Any) -> Outcome | None:
    """The Outcome a stream line carries, if it is a result line of any agent's shape (the
    runner does not need to know which agent it runs to read it)."""
    if not isinstance(event, dict):
        return None
    adapters = _adapters()
    body = next((b for a in adapters if (b := a.result_body(event)) is not None), None)
    if body is None:
        return None
    fields: dict[str, Any] = {}
    for adapter in adapters:  # per field, the first agent that names it
        for key, value in adapter.result_fields(body).items():
            fields.setdefault(key, value)
    status, response = fields.get("status"), fields.get("response")
    duration, usage, turns = (
        fields.get("duration_seconds"),
        body.get("usage"),
        body.get("num_turns"),
    )
    return Outcome(
        status=str(status).upper() if status is not None else None,
        response=response if isinstance(response, str) else "",
        structured_output=body.get("structured_output"),
        conversation_id=conversation_of(body),
        duration_seconds=float(duration) if isinstance(duration, int | float) else None,
        num_turns=turns if isinstance(turns, int) else None,
        usage=usage if isinstance(usage, dict) else None,
    )


def conversation_of(event: Any) -> str | None:
    """The conversation (agy) or session (Claude) id a line names, if any."""
    if not isinstance(event, dict):
        return None
    keys = dict.fromkeys(key for adapter in _adapters() for key in adapter.CONVERSATION_KEYS)
    for key in keys:
        value = event.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def tokens(usage: Any) -> int | None:
    """Total tokens from a usage object of any agent."""
    if not isinstance(usage, dict):
        return None
    if isinstance(usage.get("total_tokens"), int):
        return int(usage["total_tokens"])
    parts = [
        value
        for key, value in usage.items()
        if key.endswith("tokens") and isinstance(value, int) and not isinstance(value, bool)
    ]
    return sum(parts) if parts else None
