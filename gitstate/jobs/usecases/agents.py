"""The agent CLIs a job can run: how to call each, and how to read what it prints.

Two adapters. `agy` (Antigravity's CLI, the default) takes the prompt with `-p`, streams JSON
lines, continues a conversation with `--conversation ID` and reads the result schema from a
file. `claude` (Claude Code's print mode) takes the prompt as its last operand after `--`,
streams JSON with `--verbose`, resumes a session with `--resume ID` and takes the schema as
JSON text. Both end with one result line, read here in
either shape: `{"type":"result",…}` or agy's envelope `{"event":"result","result":{…}}`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from gitstate.jobs.document.config import JobConfig


class Outcome(NamedTuple):
    """The agent's result line, in one vocabulary for both agents."""

    status: str | None  # SUCCESS, ERROR, CANCELED, INTERRUPTED, INVALID, … (None: not given)
    response: str
    structured_output: Any
    conversation_id: str | None
    duration_seconds: float | None
    num_turns: int | None
    usage: dict[str, Any] | None


class Call(NamedTuple):
    prompt: str
    model: str | None
    effort: str | None
    timeout: str  # "30m"
    schema_path: Path | None  # None: leave the schema out (round-2 rule)
    conversation: str | None


class Agent(NamedTuple):
    kind: str
    command: tuple[str, ...]
    skip_permissions: bool

    @classmethod
    def from_config(cls, config: JobConfig) -> Agent:
        return cls(config.kind, config.agent, config.skip_permissions)

    @property
    def name(self) -> str:
        return self.command[0]

    def argv(self, call: Call) -> list[str]:
        """The agent's command line. The prompt is the user's plan first: it must never be read
        as an option (docs/jobs.md, "The prompt is never an option")."""
        if self.kind == "claude":
            # Claude Code's -p is a switch and the prompt an operand; print mode streams JSON
            # only with --verbose. The prompt goes last, after `--`.
            argv = [*self.command, "-p", "--output-format", "stream-json", "--verbose"]
        else:
            argv = [*self.command, "-p", _option_value(call.prompt)]
            argv += ["--output-format", "stream-json"]
        if call.model:
            argv += ["--model", call.model]
        if call.effort:
            argv += ["--effort", call.effort]
        if self.kind == "agy":
            argv += ["--print-timeout", call.timeout]
        if call.schema_path is not None:
            schema: str = str(call.schema_path)
            if self.kind == "claude":
                schema = json.dumps(json.loads(call.schema_path.read_text()))
            argv += ["--json-schema", schema]
        if call.conversation:
            argv += ["--resume" if self.kind == "claude" else "--conversation", call.conversation]
        if self.skip_permissions:
            argv.append("--dangerously-skip-permissions")
        if self.kind == "claude":
            argv += ["--", call.prompt]
        return argv

    def version_argv(self) -> list[str]:
        return [*self.command, "--version"]

    def quota_argv(self) -> list[str]:
        return [*self.command, "-p", "/usage", "--output-format", "json", "--print-timeout", "60s"]

    def auth_dirs(self, home: Path) -> list[Path]:
        if self.kind == "claude":
            return [home / ".claude"]
        return [home / ".config" / "antigravity", home / ".gemini" / "antigravity-cli"]


def _option_value(prompt: str) -> str:
    """The prompt as the value of agy's `-p`. A Go-style flag parser takes the next argument
    as the value whatever it begins with, but agy's parser is not documented: a prompt that
    begins with `-` gets a leading newline, which no parser reads as an option and the model
    reads as nothing."""
    return "\n" + prompt if prompt.startswith("-") else prompt


def result_of(event: Any) -> Outcome | None:
    """The Outcome a stream line carries, if it is a result line of either shape."""
    if not isinstance(event, dict):
        return None
    if event.get("event") == "result" and isinstance(event.get("result"), dict):
        body: dict[str, Any] = event["result"]
    elif event.get("type") == "result":
        body = event
    else:
        return None
    status = body.get("status")
    if status is None and ("is_error" in body or "subtype" in body):
        # Claude Code: subtype success / error_*, is_error
        failed = bool(body.get("is_error")) or body.get("subtype", "success") != "success"
        status = "ERROR" if failed else "SUCCESS"
    response = body.get("response")
    if response is None and isinstance(body.get("result"), str):
        response = body["result"]
    duration = body.get("duration_seconds")
    if duration is None and isinstance(body.get("duration_ms"), int | float):
        duration = body["duration_ms"] / 1000
    usage = body.get("usage")
    turns = body.get("num_turns")
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
    for key in ("conversation_id", "conversationId", "session_id"):
        value = event.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def tokens(usage: Any) -> int | None:
    """Total tokens from a usage object of either agent."""
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
