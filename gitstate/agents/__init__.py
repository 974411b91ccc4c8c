"""The agent CLIs, as plugins: one module per CLI, and this registry (docs/hooks.md, "Adding an
agent CLI").

Each module (agy.py, claude.py, gemini.py) is everything the tool knows about one agent CLI: how
to recognise its hook payload and read it, the JSON shapes it expects back, its plugin files and
settings, where `install` puts them, and how a job runs it (base.py says what a module provides).
Everything else asks this registry; nothing outside gitstate/agents/ compares agent names.

On the agent-hook fast path (hooks/agent.py): the modules load nothing heavy at import time (no
click, no pygit2, no `typing`); what install needs is imported inside the functions that need it.
"""

from __future__ import annotations

# `as` marks them exported: they are the registry's entries.
from gitstate.agents import agy as agy
from gitstate.agents import claude as claude
from gitstate.agents import gemini as gemini

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitstate.agents.base import AgentCLI
    from gitstate.agents.jobs import JobAdapter

# Registration order is the order `install --agent all` goes through them and the order
# detection breaks ties in.
REGISTERED: tuple[AgentCLI, ...] = (agy, claude, gemini)
BY_NAME: dict[str, AgentCLI] = {module.NAME: module for module in REGISTERED}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def get(name: str) -> AgentCLI:
    """The agent CLI called `name`; a usage error naming the known ones otherwise."""
    found = BY_NAME.get(name)
    if found is None:
        from gitstate.errors import UsageError

        raise UsageError(
            f"unknown agent {name!r}",
            hint=f"choose one of {', '.join(NAMES)} (all: each in turn)",
        )
    return found


def find(name: str | None) -> AgentCLI | None:
    """The agent CLI called `name`, or None (no name, or not one of ours)."""
    return BY_NAME.get(name) if name is not None else None


def detect(payload: dict[str, Any] | None) -> AgentCLI | None:
    """Which agent CLI sent this hook payload: the one that claims it most surely (a field only
    it sends beats a field several send); a tie goes to the first registered."""
    if not payload:
        return None
    best, sureness = None, 0
    for module in REGISTERED:
        claim = module.claims(payload)
        if claim > sureness:
            best, sureness = module, claim
    return best


def detect_agent(payload: dict[str, Any] | None) -> str | None:
    """The name of the agent CLI that sent `payload` (detect()), or None."""
    found = detect(payload)
    return found.NAME if found is not None else None


def session(payload: dict[str, Any]) -> str | None:
    """The conversation or session id the payload names, whichever agent sent it (the first
    agent's key that holds something wins, as `a or b` would)."""
    value = None
    for key in dict.fromkeys(module.SESSION_KEY for module in REGISTERED):
        value = payload.get(key)
        if value:
            break
    return str(value) if isinstance(value, str | int) and value != "" else None


def project_dir_of(payload: dict[str, Any], environ: dict[str, str] | Any) -> str | None:
    """The workspace the payload names (any agent's field), else an agent's project variable."""
    for module in REGISTERED:
        found = module.project_dir(payload)
        if found:
            return found
    for module in REGISTERED:
        value = environ.get(module.PROJECT_ENV)
        if value:
            return str(value)
    return None


def after_compaction(agent: AgentCLI | None, payload: dict[str, Any]) -> bool:
    """Whether an inject is a session's start after a compaction: the agent's own answer; with
    no agent known (plain CLI mode), whether any agent would take the payload for one."""
    if agent is not None:
        return agent.after_compaction(payload)
    return any(module.after_compaction(payload) for module in REGISTERED)


def job_kinds() -> tuple[str, ...]:
    """The agents a background job can run (those with a job adapter)."""
    return tuple(module.NAME for module in REGISTERED if module.JOB is not None)


def default_job_agent() -> str:
    """The agent a job runs when `agy.agent` is not set: the first registered one with a job
    adapter (agy)."""
    return job_kinds()[0]


def job_kind_of(command: str) -> str:
    """The job adapter a command is taken for when `agy.agentKind` is not set: the agent whose
    name its file name begins with (`/opt/bin/claude-2` is claude), else the default (agy)."""
    name = command.rsplit("/", 1)[-1]
    return next((kind for kind in job_kinds() if name.startswith(kind)), default_job_agent())


def quota_agents() -> tuple[AgentCLI, ...]:
    """The agents whose CLI reports its usage windows (`job quota` asks them)."""
    return tuple(
        module
        for module in REGISTERED
        if module.JOB is not None and module.JOB.quota_argv((module.NAME,)) is not None
    )


def job_adapter(kind: str) -> JobAdapter:
    """How a job runs the agent `kind`; a usage error when it has no job adapter."""
    module = BY_NAME.get(kind)
    if module is None or module.JOB is None:
        from gitstate.errors import UsageError

        raise UsageError(f"no job adapter for the agent {kind!r}", hint=" or ".join(job_kinds()))
    return module.JOB
