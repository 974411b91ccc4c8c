"""The one error map (docs/exit-codes.md): any exception → its exit code and what is said.

Every edge asks here — the click commands, the agent hooks, the git hooks, the job supervisor —
and only prints the answer: an AgyError keeps its code, hint and details; an OSError (or a
libgit2 error in the OS's words) is the one file-system line; a Ctrl-C is `interrupted`;
anything else is `internal error: …`. Text lines come back with control characters escaped
(document/controls.py: stored text may come from a teammate or an agent); JSON objects are
values for json.dumps. Standard library only, no click, no pygit2, no `typing` at run time: the
agent-hook fast path uses it.
"""

from __future__ import annotations

from gitstate.document.controls import escape
from gitstate.errors import AgyError, Interrupted, InvalidDocument, SecretFound, os_failure

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

MAX_LISTED = 20
INTERNAL_HINT = "set AGY_DEBUG=1 to see the traceback, and please report it"


def typed(exc: BaseException) -> AgyError:
    """`exc` as the AgyError the user is told: itself, the file system's one line, `interrupted`,
    or an internal error (type and message, never a traceback)."""
    if isinstance(exc, AgyError):
        return exc
    if isinstance(exc, KeyboardInterrupt):
        return Interrupted("interrupted")
    failure = os_failure(exc)
    if failure is not None:
        return failure
    return AgyError(f"internal error: {type(exc).__name__}: {exc}", hint=INTERNAL_HINT)


def is_internal(exc: BaseException) -> bool:
    """True when `exc` is none of the failures the tool knows (a bug, or a library's surprise)."""
    return not isinstance(exc, (AgyError, KeyboardInterrupt)) and os_failure(exc) is None


def problem_lines(
    problems: Sequence[Any], limit: int = MAX_LISTED, indent: str = "  "
) -> list[str]:
    """`  - line N: message` for each problem, at most `limit`, then `  … and N more` (raw:
    the caller escapes what it prints); `indent` is what begins each line."""
    lines = []
    for problem in problems[:limit]:
        where = f"line {problem.line}: " if getattr(problem, "line", None) else ""
        lines.append(f"{indent}- {where}{problem.message}")
    if len(problems) > limit:
        lines.append(f"{indent}… and {len(problems) - limit} more")
    return lines


def text(exc: BaseException) -> tuple[int, list[str]]:
    """(exit code, lines for stderr): `error: …`, an invalid document's problems, `hint: …`;
    control characters escaped, no newlines at the ends."""
    error = typed(exc)
    lines = [f"error: {error.message}"]
    if isinstance(error, InvalidDocument) and error.problems:
        lines.extend(problem_lines(error.problems))
    if error.hint:
        lines.append(f"hint: {error.hint}")
    return error.exit_code, escape("\n".join(lines)).split("\n")


def as_json(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """(exit code, the `--json` error object): `{"error", "code", "hint"?, "errors"?, "hits"?}`
    (docs/exit-codes.md); the printer escapes it as it prints (json.dumps, escape_json)."""
    error = typed(exc)
    body: dict[str, Any] = {"error": error.message, "code": error.exit_code}
    if error.hint:
        body["hint"] = error.hint
    if isinstance(error, InvalidDocument):
        body["errors"] = [_problem_json(p) for p in error.problems]
    if isinstance(error, SecretFound):
        body["hits"] = [
            {key: getattr(hit, key, None) for key in ("line", "kind", "excerpt")}
            for hit in error.hits
        ]
    return error.exit_code, body


def log_text(exc: BaseException, trace: bool = False) -> str:
    """What a log (storage/logs.py) keeps of a failure nobody saw: `text`'s `error: …` line, one
    line so that each entry stays one line; with `trace`, the traceback below it (a log may show
    one, the user's terminal never)."""
    _, lines = text(exc)
    if not trace:
        return lines[0]
    import traceback  # only a failure pays for it

    return lines[0] + "\n" + "".join(traceback.format_exception(exc)).rstrip()


def _problem_json(problem: Any) -> Any:
    method = getattr(problem, "as_json", None)
    return method() if callable(method) else {"line": None, "message": str(problem)}
