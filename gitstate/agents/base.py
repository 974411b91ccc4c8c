"""What an agent CLI's modules provide (docs/hooks.md, "Adding an agent CLI").

Each agent CLI is two modules in gitstate/agents/: `<name>_hook.py`, what a hook process needs
(AgentCLI below: the payload and the answers), and `<name>.py`, the plugin (AgentPlugin: that
and the plugin files, install and the job adapter). A hook process loads only the hook modules;
the registry (gitstate/agents/__init__.py) holds both, and mypy checks each module against its
Protocol. The Protocols exist only for type checkers: at run time this module defines nothing
but the hook actions, so that the agent-hook fast path never loads `typing`.

The three hook actions are the same for every agent; what differs is the event each is wired
to, the payload, and the answer's shape.
"""

from __future__ import annotations

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False

ACTIONS = ("inject", "stop-guard", "pre-compact")

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Protocol

    from gitstate.agents.jobs import JobAdapter
    from gitstate.agents.settings_file import Ledger

    # What an agent's doctor() found: (the check's name, ok|warn|fail, what, the hint or None).
    Finding = tuple[str, str, str, str | None]

    class Place(Protocol):
        """Where an install happens: the project, the user's home, our ledger of what we made."""

        project: Path
        home: Path
        ledger: Ledger

        @property
        def data_dir(self) -> Path: ...

        def exclude(self, path: Path) -> list[str]:
            """Add a personal project file to the repository's info/exclude (said)."""
            ...

        def unexclude(self, path: Path) -> list[str]:
            """Take out the line exclude() added for path (said)."""
            ...

    class AgentCLI(Protocol):
        """One agent CLI as a hook process sees it: the module `<name>_hook.py`."""

        NAME: str  # what `--agent` takes and the hook commands pass: "claude"
        SESSION_KEY: str  # the payload field naming the conversation or session

        @property
        def PROJECT_ENV(self) -> str | None:  # a module constant in the hook modules
            """The variable the CLI sets to the project directory in a hook (None: none)."""
            ...

        # ---- the hook payload (docs/hooks.md) ------------------------------------------

        def claims(self, payload: dict[str, Any]) -> int:
            """How surely `payload` comes from this CLI: 0 not, 1 it could, 2 only it sends
            that (detection takes the surest)."""
            ...

        def project_dir(self, payload: dict[str, Any]) -> str | None:
            """The workspace the payload names in this CLI's field, if it does."""
            ...

        def inject_skipped(self, payload: dict[str, Any]) -> bool:
            """Whether this inject call is not the one that gets the state (agy calls the
            hook on every model call of a turn; only the first injects)."""
            ...

        def stop_looping(self, payload: dict[str, Any]) -> bool:
            """Whether the CLI is already going on because our stop guard said so: never
            block again, or the agent loops."""
            ...

        def memory_key(self, payload: dict[str, Any]) -> object:
            """The conversation to give the memory core only once, or None when the hook is
            wired so that every inject is a new session (hooks/memory.py)."""
            ...

        def after_compaction(self, payload: dict[str, Any]) -> bool:
            """Whether this inject is the session's start after a compaction: the compacted
            conversation still carries what was injected at its start (hooks/memory.py)."""
            ...

        # ---- the answers ---------------------------------------------------------------

        def nothing(self, action: str) -> dict[str, Any]:
            """The answer that lets the agent go on, saying nothing."""
            ...

        def inject(self, text: str) -> dict[str, Any]:
            """The answer that adds `text` to the agent's context."""
            ...

        def block(self, reason: str) -> dict[str, Any]:
            """The answer that keeps the agent from stopping, telling it why."""
            ...

    class AgentPlugin(AgentCLI, Protocol):
        """One agent CLI, all of it: the module `<name>.py` (it re-exports its hook part)."""

        TITLE: str  # how install's output names it: "Claude Code"

        @property
        def JOB(self) -> JobAdapter | None:  # a module constant in the plugins
            """How a background job runs it (agents/jobs.py); None: jobs cannot."""
            ...

        # ---- the plugin files and install ----------------------------------------------

        def hook_entries(self, command: str) -> dict[str, Any]:
            """Our hook entries, in the shape the CLI's hooks file holds them."""
            ...

        def plugin_files(self, command: str) -> dict[str, str]:
            """Every file of the ready-made plugin (extension): relative path → text."""
            ...

        def install(self, place: Place, scope: str, command: str) -> list[str]:
            """Put the hooks and the skill in place for `scope`; the lines say what was done."""
            ...

        def uninstall(self, place: Place, scope: str) -> list[str]:
            """Remove what install() added for `scope`, and nothing else."""
            ...

        def doctor(self, place: Place) -> list[Finding]:
            """What `doctor` should say about this CLI's installed hooks (trust, switches);
            nothing when there is nothing the tool can check for it."""
            ...
