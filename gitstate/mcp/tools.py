"""The MCP tools, one function per tool: it calls the use case its command calls and returns
that command's `--json` object (docs/json.md), built by the same code. A command whose `--json`
is a list answers here with an object holding it under one key (MCP's structured content is an
object): state_log `snapshots`, decisions `decisions`, job_status of every job and job_pending
`jobs`, memory_search `hits` (docs/mcp.md).

Every call opens the repository afresh (Workspace.open in the server's working directory, which
`--repo` sets), so it sees the refs as they are now: nothing is cached from one call to the
next, and a write takes the same locks and compare-and-swap as the command. The signatures are
the tools' input schemas (the SDK reads them), the docstrings their descriptions. No SDK import
here: a failure is raised as the typed error it is, and the server turns it into a tool error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gitstate.errors import NotFound, UsageError

if TYPE_CHECKING:  # the use cases load pygit2: each tool imports its own when it runs
    from gitstate.document.patch import Patch
    from gitstate.storage.layout import Layout
    from gitstate.usecases.workspace import Workspace

Json = dict[str, Any]


def _ws() -> Workspace:
    from gitstate.usecases.workspace import Workspace

    return Workspace.open()


# ---- state ---------------------------------------------------------------------------------


def state_show(rev: str | None = None, section: str | None = None) -> Json:
    """A snapshot's STATE.md (default: the tip), parsed into sections with its text; with
    `section`, only that section's lines. As `git agy-state show --json`."""
    from gitstate.usecases.state import history

    commit, data = history.show(_ws(), rev)
    return history.show_json(commit, data, section)


def state_status() -> Json:
    """Is STATE.md clean, dirty or missing; which snapshot; the step in progress; the phase.
    As `git agy-state status --json`."""
    from gitstate.usecases.state import history

    return history.status(_ws())


def state_check() -> Json:
    """Validate STATE.md (with no view, the tip): valid, errors, warnings. As `git agy-state
    check --json` (an invalid document is an answer here, not a tool error)."""
    from gitstate.usecases.state import history

    return history.check(_ws()).as_json()


def state_log(limit: int | None = None, patch: bool = False) -> Json:
    """The current task's snapshots, newest first (`patch`: each one's diff). As `git agy-state
    log --json`, under `snapshots`."""
    from gitstate.usecases.state import history

    if limit is not None and limit < 0:
        raise UsageError(f"limit must be 0 or more, not {limit}")
    ws = _ws()
    return {"snapshots": history.log_json(ws, history.log(ws, limit), patch)}


def state_diff(a: str | None = None, b: str | None = None) -> Json:
    """Compare snapshots: tip → view; a → view; a → b. As `git agy-state diff --json`."""
    from gitstate.usecases.state import history

    return history.diff(_ws(), a, b).as_json()


def state_patch(
    ops: list[dict[str, Any]], message: str | None = None, allow_secret: bool = False
) -> Json:
    """Change the state with the ops of `git agy-state patch --ops` and save it as a snapshot
    (one write: all ops or none). Texts go as they are: no shell quoting. Returns what
    `git agy-state patch --json` prints."""
    from gitstate.document import patch as patch_mod
    from gitstate.usecases.state import patch as patch_uc

    # The patch's own reader judges the ops, as for `--ops`: one source of their rules.
    change = patch_mod.from_json(json.dumps({"ops": ops}, ensure_ascii=False))
    return patch_uc.patch(_ws(), change, message, allow_secret).as_json()


def state_save(message: str | None = None, allow_secret: bool = False) -> Json:
    """Snapshot STATE.md (the work tree's view) as a commit on refs/agy/state. As
    `git agy-state save --json`."""
    from gitstate.usecases.state import writer

    return writer.save(_ws(), message, allow_secret).as_json()


# ---- decisions and phase ---------------------------------------------------------------------


def decide(
    type: str,
    text: str,
    supersedes: list[str] | None = None,
    allow_secret: bool = False,
) -> Json:
    """Record a decision (`type` Architecture, Lib or Rule) in the note on HEAD
    (refs/notes/agy/decisions); `supersedes`: ids it replaces. As `git agy-state decide --json`."""
    from gitstate.usecases.decisions import records

    return records.decide(_ws(), type, text, supersedes or (), allow_secret).as_json()


def record_error(
    type: str,
    cause: str,
    fix: str,
    scope: str,
    supersedes: list[str] | None = None,
    allow_secret: bool = False,
) -> Json:
    """Record a known error (a pitfall agents are told about at start-up): its type, root
    cause, fix and scope. As `git agy-state error --json`."""
    from gitstate.usecases.decisions import records

    done = records.record_error(
        _ws(), type, cause, fix, scope, supersedes=supersedes or (), allow_secret=allow_secret
    )
    return done.as_json()


def decisions(all: bool = False) -> Json:
    """The active decisions and known errors, oldest first (`all`: superseded ones too). As
    `git agy-state decisions --json`, under `decisions`, with `skipped`: lines of the notes
    this version does not read."""
    from gitstate.usecases.decisions import records

    ledger = records.read_ledger(_ws())
    return {
        "decisions": [row.as_json() for row in ledger.visible(all)],
        "skipped": ledger.skipped,
    }


def phase(new: str | None = None) -> Json:
    """The phase and the legal next ones; with `new`, move to it (IDLE, PLANNING, CONFIRMING,
    EXECUTING, AUTO_FIX, BLOCKED, ARCHIVING). As `git agy-state phase [NEW] --json`."""
    from gitstate.document import phase as machine
    from gitstate.usecases.state import phase as phase_uc

    if new is None:
        return phase_uc.shown(_ws())
    machine.name(new)  # an unknown name is a usage error before anything is opened
    return phase_uc.change(_ws(), new).as_json()


def checkpoint(message: str | None = None, allow_secret: bool = False) -> Json:
    """Tag HEAD and the state together (checkpoint-YYYYMMDD-HHMMSS); unsaved STATE.md edits
    are saved first. As `git agy-state checkpoint --json`."""
    from gitstate.usecases.state import checkpoints

    return checkpoints.create(_ws(), message, allow_secret).as_json()


# ---- jobs ------------------------------------------------------------------------------------


def _layout() -> Layout:
    return _ws().layout


def _seed(worktree: Path, ops: Patch, message: str) -> None:
    """A job worktree's first snapshot, by the state core's patch (submit.Seeder)."""
    from gitstate.usecases.state import patch as patch_uc
    from gitstate.usecases.workspace import Workspace

    patch_uc.patch(Workspace.open(worktree), ops, message=message)


def job_run(
    text: str,
    model: str | None = None,
    effort: Literal["low", "medium", "high"] | None = None,
    timeout: str | None = None,
    no_worktree: bool = False,
) -> Json:
    """Queue a background job for the agent CLI on the current HEAD, in its own worktree and
    branch agy/<id> (`no_worktree`: in this work tree); returns at once. `text` is the plan
    (Markdown). As `git agy-state job run --text … --json`."""
    from gitstate.jobs.usecases import submit

    done = submit.run(
        _layout(),
        text,
        seed=_seed,
        model=model,
        effort=effort,
        timeout=timeout,
        no_worktree=no_worktree,
    )
    body: Json = done.as_json()
    return body


def job_status(job_id: str | None = None) -> Json:
    """A job's state, round, pids, times and queue position; without `job_id`, every job under
    `jobs`. As `git agy-state job status ID --json` (`--all`)."""
    from gitstate.jobs.usecases import control

    layout = _layout()
    if job_id is None:
        return {"jobs": control.list_jobs(layout)}
    return dict(control.status(layout, job_id))


def job_result(job_id: str, events: bool = False) -> Json:
    """A finished job's result and diff stat (a tool error with code 4 while it runs); marks it
    harvested. As `git agy-state job result ID --json`."""
    from gitstate.jobs.usecases import control

    body: Json = control.result(_layout(), job_id, events).as_json()
    return body


def job_feedback(job_id: str, message: str) -> Json:
    """Send a done or errored job back for another round, continuing its conversation. As
    `git agy-state job feedback ID MESSAGE --json`."""
    from gitstate.jobs.usecases import submit

    body: Json = submit.feedback(_layout(), job_id, message).as_json()
    return body


def job_cancel(job_id: str) -> Json:
    """Cancel a queued or running job; ends the agent's whole process group. As
    `git agy-state job cancel ID --json`."""
    from gitstate.jobs.usecases import control

    body: Json = control.cancel(_layout(), job_id).as_json()
    return body


def job_pending() -> Json:
    """Finished jobs nobody has harvested yet (what the stop guard waits for), under `jobs`. As
    `git agy-state job pending --json`."""
    from gitstate.jobs.usecases import control

    return {"jobs": control.pending(_layout())}


# ---- memory ----------------------------------------------------------------------------------


def memory_search(query: str, limit: int = 10) -> Json:
    """Full-text search of the long-term memory (every word must match; Chinese words are
    found inside sentences), under `hits`. As `git agy-state memory search --json`."""
    from gitstate.memory.usecases import search

    return {"hits": [hit.as_json() for hit in search.search(query, limit)]}


def memory_add(
    layer: str,
    text: str,
    project: str | None = None,
    section: str | None = None,
    allow_secret: bool = False,
) -> Json:
    """Add `text` to the memory file its layer routes to (knowledge, identity or project;
    `section`: the `## ` heading, created if missing). As `git agy-state memory add --json`."""
    from gitstate.memory.usecases import write

    body: Json = write.add(layer, text, project, section, allow_secret).as_json()
    return body


def memory_session(
    summary: str,
    project: str | None = None,
    decisions: list[str] | None = None,
    learned: list[str] | None = None,
    next_steps: list[str] | None = None,
    workspace: str | None = None,
    allow_secret: bool = False,
) -> Json:
    """Append a session block (summary, key decisions, learnings, next steps) to today's log
    and link it from the project. As `git agy-state memory session --json`."""
    from gitstate.memory.usecases import write

    done = write.session(
        summary,
        project,
        tuple(decisions or ()),
        tuple(learned or ()),
        tuple(next_steps or ()),
        workspace,
        allow_secret=allow_secret,
    )
    body: Json = done.as_json()
    return body


TOOLS: tuple[Callable[..., Json], ...] = (
    state_show,
    state_status,
    state_check,
    state_log,
    state_diff,
    state_patch,
    state_save,
    decide,
    record_error,
    decisions,
    phase,
    checkpoint,
    job_run,
    job_status,
    job_result,
    job_feedback,
    job_cancel,
    job_pending,
    memory_search,
    memory_add,
    memory_session,
)

# The tools that change nothing (MCP's readOnlyHint: a client may call them without asking).
READ_ONLY = frozenset(
    {"state_show", "state_status", "state_check", "state_log", "state_diff", "decisions"}
    | {"job_status", "job_pending", "memory_search"}
)


# ---- resources -------------------------------------------------------------------------------


def state_text() -> str:
    """The tip's STATE.md (agy://state), as `git agy-state show` prints it; empty before the
    first snapshot (and after a task was archived)."""
    from gitstate.usecases.state import history

    ws = _ws()
    if ws.store.tip() is None:
        return ""
    try:
        commit, data = history.show(ws, None)
    except NotFound:  # the tip closed a task: it holds no STATE.md
        return ""
    return history.text(commit, data)


def active_decisions() -> str:
    """The active decisions (agy://decisions), as `git agy-state decisions --json` prints them."""
    return json.dumps(decisions()["decisions"], ensure_ascii=False, indent=2)
