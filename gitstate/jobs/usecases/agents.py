"""The jobs' view of the agent CLIs: the execution contract lives in gitstate/agents/jobs.py,
each CLI's adapter in its module there (docs/jobs.md). The jobs slice names this one module for
it, and makes its configured Agent here from its settings (the agents package knows nothing of
the jobs' settings)."""

from __future__ import annotations

from gitstate.agents.jobs import Agent, Call, Outcome, Quota, conversation_of, result_of, tokens
from gitstate.jobs.document.config import JobConfig

__all__ = [
    "Agent",
    "Call",
    "Outcome",
    "Quota",
    "configured",
    "conversation_of",
    "result_of",
    "tokens",
]


def configured(config: JobConfig) -> Agent:
    """The agent the jobs' settings name: its adapter, command and permissions."""
    return Agent(config.kind, config.agent, config.skip_permissions)
