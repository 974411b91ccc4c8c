"""The jobs' settings, read from git config (`agy.*`): defaults, parsing, and refusals.

A bad value is a usage error naming the key, never a silent default: a typo in
`agy.maxConcurrent` must not turn into an unlimited queue.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import NamedTuple

from gitstate import agents
from gitstate.errors import UsageError

DURATION_RE = re.compile(r"^(\d+)(s|m|h)$")
EFFORTS = ("low", "medium", "high")
_UNITS = {"s": 1, "m": 60, "h": 3600}
KEYS = (  # every key load() reads: a reader may fetch them all at once
    "agy.agent",
    "agy.agentKind",
    "agy.maxConcurrent",
    "agy.queueTimeout",
    "agy.maxRetries",
    "agy.timeout",
    "agy.timeoutGrace",
    "agy.model",
    "agy.effort",
    "agy.skipPermissions",
)


class JobConfig(NamedTuple):
    agent: tuple[str, ...]  # agy.agent, split as a shell would
    kind: str  # which job adapter speaks to it (gitstate/agents/: agents.job_kinds())
    max_concurrent: int
    queue_timeout: float  # seconds
    max_retries: int
    skip_permissions: bool
    model: str | None
    effort: str | None
    timeout: str  # the duration as given ("30m"): agy takes it as --print-timeout
    grace: float  # seconds past the timeout before an attempt is killed


def parse_duration(value: str, what: str) -> float:
    match = DURATION_RE.match(value.strip())
    if match is None or int(match.group(1)) == 0:
        raise UsageError(
            f"{what} is {value!r}, not a duration",
            hint="durations are a whole number and a unit: 90s, 30m, 2h",
        )
    return float(int(match.group(1)) * _UNITS[match.group(2)])


def check_effort(value: str | None, what: str = "--effort") -> str | None:
    if value is None or value == "":
        return None
    if value not in EFFORTS:
        raise UsageError(f"{what} is {value!r}", hint="effort is low, medium or high")
    return value


def load(get: Callable[[str], str | None]) -> JobConfig:
    """The settings from a config reader (`get(key)` → the value or None)."""
    raw_agent = get("agy.agent") or agents.default_job_agent()
    try:
        agent = tuple(shlex.split(raw_agent))
    except ValueError as exc:
        raise UsageError(f"agy.agent is {raw_agent!r}: {exc}") from None
    if not agent:
        raise UsageError(
            "agy.agent is empty", hint=f"git config agy.agent {agents.default_job_agent()}"
        )
    kind = get("agy.agentKind") or agents.job_kind_of(agent[0])
    if kind not in agents.job_kinds():
        raise UsageError(f"agy.agentKind is {kind!r}", hint=" or ".join(agents.job_kinds()))
    timeout = get("agy.timeout") or "30m"
    parse_duration(timeout, "agy.timeout")
    return JobConfig(
        agent=agent,
        kind=kind,
        max_concurrent=_int(get, "agy.maxConcurrent", 3, minimum=1),
        queue_timeout=parse_duration(get("agy.queueTimeout") or "2h", "agy.queueTimeout"),
        max_retries=_int(get, "agy.maxRetries", 1, minimum=0),
        skip_permissions=_bool(get, "agy.skipPermissions", True),
        model=get("agy.model") or None,
        effort=check_effort(get("agy.effort"), "agy.effort"),
        timeout=timeout,
        grace=parse_duration(get("agy.timeoutGrace") or "60s", "agy.timeoutGrace"),
    )


def _int(get: Callable[[str], str | None], key: str, default: int, minimum: int) -> int:
    value = get(key)
    if value is None or value == "":
        return default
    try:
        number = int(value.strip())
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise UsageError(f"{key} is {value!r}", hint=f"a whole number of at least {minimum}")
    return number


def _bool(get: Callable[[str], str | None], key: str, default: bool) -> bool:
    value = get(key)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "on", "1", ""):
        return True
    if lowered in ("false", "no", "off", "0"):
        return False
    raise UsageError(f"{key} is {value!r}", hint="true or false")
