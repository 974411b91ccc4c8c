"""The jobs' view of the agent CLIs: the execution contract lives in gitstate/agents/jobs.py,
each CLI's adapter in its module there (docs/jobs.md). Kept so that the jobs slice names one
module for it."""

from __future__ import annotations

from gitstate.agents.jobs import Agent, Call, Outcome, conversation_of, result_of, tokens

__all__ = ["Agent", "Call", "Outcome", "conversation_of", "result_of", "tokens"]
