"""The agent CLIs, as plugins: two modules per CLI, and this registry (docs/hooks.md, "Adding an
agent CLI").

Each CLI's `<name>.py` (agy.py, claude.py, gemini.py, codex.py) is everything the tool knows about it:
its plugin files and settings, where `install` puts them, how a job runs it; its
`<name>_hook.py` is the part a hook process needs: how to recognise its hook payload and read
it, and the JSON shapes it expects back (base.py says what each provides). Everything else asks
this registry; nothing outside gitstate/agents/ compares agent names.

On the agent-hook fast path (hooks/agent.py) the registry imports a module only when asked: a
hook named by `--agent` loads that agent's hook module alone, detection loads every agent's
(each must judge the payload), and no hook loads a plugin module. The modules load nothing
heavy at import time (no click, no pygit2, no `typing`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitstate.agents import (
        agy,
        agy_hook,
        claude,
        claude_hook,
        codex,
        codex_hook,
        gemini,
        gemini_hook,
    )
    from gitstate.agents.base import AgentCLI, AgentPlugin
    from gitstate.agents.jobs import JobAdapter

    # mypy checks every module against its Protocol here (nothing of this runs).
    _HOOKS: tuple[AgentCLI, ...] = (agy_hook, claude_hook, gemini_hook, codex_hook)
    _PLUGINS: tuple[AgentPlugin, ...] = (agy, claude, gemini, codex)

# Registration order is the order `install --agent all` goes through them and the order
# detection breaks ties in.
NAMES: tuple[str, ...] = ("agy", "claude", "gemini", "codex")


def _module(name: str) -> Any:
    """gitstate.agents.<name>, imported on first use (`__import__` is a builtin: no importlib)."""
    qualified = f"{__name__}.{name}"
    found = sys.modules.get(qualified)
    return found if found is not None else __import__(qualified, fromlist=("NAME",))


def hook_modules() -> tuple[AgentCLI, ...]:
    """Every agent's hook part, in registration order."""
    return tuple(_module(f"{name}_hook") for name in NAMES)


def plugins() -> tuple[AgentPlugin, ...]:
    """Every agent's plugin module, in registration order (install, jobs; never a hook)."""
    return tuple(_module(name) for name in NAMES)


def get(name: str) -> AgentPlugin:
    """The plugin of the agent CLI called `name`; a usage error naming the known ones otherwise."""
    if name not in NAMES:
        from gitstate.errors import UsageError

        raise UsageError(
            f"unknown agent {name!r}",
            hint=f"choose one of {', '.join(NAMES)} (all: each in turn)",
        )
    found: AgentPlugin = _module(name)
    return found


def find(name: str | None) -> AgentCLI | None:
    """The hook part of the agent CLI called `name`, or None (no name, or not one of ours)."""
    if name is None or name not in NAMES:
        return None
    found: AgentCLI = _module(f"{name}_hook")
    return found


def detect(payload: dict[str, Any] | None) -> AgentCLI | None:
    """Which agent CLI sent this hook payload: the one that claims it most surely (a field only
    it sends beats a field several send); a tie goes to the first registered."""
    if not payload:
        return None
    best, sureness = None, 0
    for module in hook_modules():
        claim = module.claims(payload)
        if claim > sureness:
            best, sureness = module, claim
    return best


def detect_agent(payload: dict[str, Any] | None) -> str | None:
    """The name of the agent CLI that sent `payload` (detect()), or None."""
    found = detect(payload)
    return found.NAME if found is not None else None


def session(payload: dict[str, Any], agent: AgentCLI | None = None) -> str | None:
    """The conversation or session id the payload names: the agent's own key when it is known
    and holds something, else whichever agent sent it (the first agent's key that holds
    something wins, as `a or b` would)."""
    value = payload.get(agent.SESSION_KEY) if agent is not None else None
    if value and isinstance(value, str | int):
        return str(value)
    for key in dict.fromkeys(module.SESSION_KEY for module in hook_modules()):
        value = payload.get(key)
        if value:
            break
    return str(value) if isinstance(value, str | int) and value != "" else None


def project_dir_of(
    payload: dict[str, Any], environ: dict[str, str] | Any, agent: AgentCLI | None = None
) -> str | None:
    """The workspace the payload names (the agent's field when it is known and names one,
    else any agent's), else the agent's or any agent's project variable."""
    if agent is not None:
        found = agent.project_dir(payload) or (agent.PROJECT_ENV and environ.get(agent.PROJECT_ENV))
        if found:
            return str(found)
    modules = hook_modules()
    for module in modules:
        found = module.project_dir(payload)
        if found:
            return found
    for module in modules:
        value = module.PROJECT_ENV and environ.get(module.PROJECT_ENV)
        if value:
            return str(value)
    return None


def after_compaction(agent: AgentCLI | None, payload: dict[str, Any]) -> bool:
    """Whether an inject is a session's start after a compaction: the agent's own answer; with
    no agent known (plain CLI mode), whether any agent would take the payload for one."""
    if agent is not None:
        return agent.after_compaction(payload)
    return any(module.after_compaction(payload) for module in hook_modules())


def job_kinds() -> tuple[str, ...]:
    """The agents a background job can run (those with a job adapter)."""
    return tuple(module.NAME for module in plugins() if module.JOB is not None)


def default_job_agent() -> str:
    """The agent a job runs when `agy.agent` is not set: the first registered one with a job
    adapter (agy)."""
    return job_kinds()[0]


def job_kind_of(command: str) -> str:
    """The job adapter a command is taken for when `agy.agentKind` is not set: the agent whose
    name its file name begins with (`/opt/bin/claude-2` is claude), else the default (agy)."""
    name = command.rsplit("/", 1)[-1]
    return next((kind for kind in job_kinds() if name.startswith(kind)), default_job_agent())


def quota_agents() -> tuple[AgentPlugin, ...]:
    """The agents whose CLI reports its usage windows (`job quota` asks them)."""
    return tuple(
        module
        for module in plugins()
        if module.JOB is not None and module.JOB.quota_argv((module.NAME,)) is not None
    )


def job_adapter(kind: str) -> JobAdapter:
    """How a job runs the agent `kind`; a usage error when it has no job adapter."""
    module = get(kind) if kind in NAMES else None
    if module is None or module.JOB is None:
        from gitstate.errors import UsageError

        raise UsageError(f"no job adapter for the agent {kind!r}", hint=" or ".join(job_kinds()))
    return module.JOB
