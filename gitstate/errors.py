"""Typed errors, each carrying its exit code (DESIGN.md §4) and an optional hint.

The core raises these; exactly one place at the edge (gitstate.cli.app) turns them into
`error: …` / `hint: …` lines or `{"error", "code"}` JSON. Nothing here imports git or click.
"""

from __future__ import annotations

from collections.abc import Sequence

# The whole tool's exit codes, in one table.
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_STOP_BLOCKED = 2
EXIT_NOT_FOUND = 3
EXIT_NOT_FINISHED = 4
EXIT_WORK_AT_RISK = 5
EXIT_NOT_A_REPOSITORY = 6
EXIT_USAGE = 64
EXIT_TIMEOUT = 124
EXIT_AGENT_MISSING = 127


class AgyError(Exception):
    """Base of every error the tool reports to the user."""

    exit_code = EXIT_FAILURE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class Failure(AgyError):
    """A check or operation failed (exit 1)."""


class InvalidDocument(AgyError):
    """A STATE.md (or a patch result) breaks the format rules; carries every problem found."""

    def __init__(
        self, message: str, problems: Sequence[object] = (), hint: str | None = None
    ) -> None:
        super().__init__(message, hint)
        self.problems = tuple(problems)


class SecretFound(AgyError):
    """Content headed for a ref contains something that looks like a credential."""

    def __init__(self, message: str, hits: Sequence[object] = (), hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.hits = tuple(hits)


class NotFound(AgyError):
    exit_code = EXIT_NOT_FOUND


class WorkAtRisk(AgyError):
    """Refused because going on would lose unsaved work (exit 5)."""

    exit_code = EXIT_WORK_AT_RISK


class NotARepository(AgyError):
    exit_code = EXIT_NOT_A_REPOSITORY


class UsageError(AgyError):
    exit_code = EXIT_USAGE


class NotFinished(AgyError):
    """A background job has not reached a state the command needs (exit 4)."""

    exit_code = EXIT_NOT_FINISHED


class AgentMissing(AgyError):
    """The configured agent CLI is not installed (exit 127)."""

    exit_code = EXIT_AGENT_MISSING
