"""Typed errors, each carrying its exit code (docs/exit-codes.md) and an optional hint.

The core raises these; exactly one place (gitstate/error_map.py) turns them, and any other
exception, into an exit code and `error: …` / `hint: …` lines or `{"error", "code"}` JSON, for
every edge. Nothing here imports git or click.
"""

from __future__ import annotations

import errno as errno_mod
import os

# Type checkers take this as typing.TYPE_CHECKING (True); at run time collections.abc stays
# unloaded for the agent hooks that raise one of these.
TYPE_CHECKING = False
if TYPE_CHECKING:
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
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
EXIT_TERMINATED = 143  # the job supervisor ended by SIGTERM, SIGHUP or SIGINT (128 + SIGTERM)


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


class PatchError(AgyError):
    """The patch cannot apply (unknown step, ambiguous match, …): exit 1, nothing changes."""


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


class BrokenRef(AgyError):
    """An agy ref, or a snapshot it names, cannot be read as what it must be (exit 1): a ref
    file that is not a ref, a symbolic ref, a ref at a missing object or at a blob, tree or tag
    instead of a commit; a STATE.md in a snapshot that is a directory, a link or not UTF-8
    text. `ref` names the ref (or the snapshot) that is damaged (docs/exit-codes.md)."""

    def __init__(self, ref: str, message: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.ref = ref


class CannotWrite(AgyError):
    """The file system refused a write: read-only, full, permission denied (exit 1). Raised
    where storage knows what it was writing; the CLI maps any other OSError to the same
    one line (docs/exit-codes.md)."""


class TimedOut(AgyError):
    """Waited as long as asked and it did not happen (`job watch --timeout`: exit 124)."""

    exit_code = EXIT_TIMEOUT


class AgentMissing(AgyError):
    """The configured agent CLI is not installed (exit 127)."""

    exit_code = EXIT_AGENT_MISSING


class Interrupted(AgyError):
    """Ctrl-C (exit 130): the user stopped it; nothing of ours failed."""

    exit_code = EXIT_INTERRUPTED


_WRITES = {errno_mod.EROFS, errno_mod.ENOSPC, errno_mod.EDQUOT, errno_mod.EFBIG}
_ACCESS = {errno_mod.EACCES, errno_mod.EPERM}
_HINTS = {
    errno_mod.EROFS: "the file system is mounted read-only; make it writable, then try again",
    errno_mod.ENOSPC: "free some space on that file system, then try again",
    errno_mod.EDQUOT: "free some space (your disk quota is used up), then try again",
    errno_mod.EACCES: "check the owner and permissions of that path",
    errno_mod.EPERM: "check the owner and permissions of that path",
}
_REASONS = {
    "read-only file system": errno_mod.EROFS,
    "no space left on device": errno_mod.ENOSPC,
    "disk quota exceeded": errno_mod.EDQUOT,
    "permission denied": errno_mod.EACCES,
    "operation not permitted": errno_mod.EPERM,
}


def os_failure(exc: BaseException) -> CannotWrite | None:
    """An OSError, or a libgit2 error whose text ends in the OS's words (`failed to write out
    file: No space left on device`), as the one line; None for anything else."""
    if isinstance(exc, OSError):
        return from_os_error(exc)
    text = str(exc).strip()
    if text and text.splitlines()[0].rsplit(": ", 1)[-1].lower() in _REASONS:
        return from_os_error(OSError(text.splitlines()[0]))
    return None


def from_os_error(exc: OSError) -> CannotWrite:
    """The one line for a file-system failure (docs/exit-codes.md): `cannot write PATH:
    read-only file system`, `cannot access PATH: permission denied`, with what to do. libgit2's
    OS errors carry no errno: their text ends in the OS's words, a quoted path inside it."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    code = exc.errno
    path = exc.filename
    if code:
        reason = os.strerror(code).lower()
    else:
        reason = text.rsplit(": ", 1)[-1].lower()
        code = _REASONS.get(reason)
        import re  # here: only libgit2's errors come this way, and a saving hook loads no re

        quoted = re.search(r"'(/[^']+)'", text)
        path = quoted.group(1) if quoted else None
    if code in _WRITES:
        verb = "write"
    elif code in _ACCESS:
        verb = "access"
    else:
        verb = "use"
    where = f" {os.fsdecode(path)}" if path else (" to the repository" if verb == "write" else "")
    if code is None and not path:
        return CannotWrite(text[:1].lower() + text[1:], hint="AGY_DEBUG=1 shows where it happened")
    return CannotWrite(f"cannot {verb}{where}: {reason}", hint=_HINTS.get(code or 0))
