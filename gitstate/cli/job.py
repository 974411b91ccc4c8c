"""`git agy-state job …`: background agent jobs in their own worktrees (docs/jobs.md).

A thin edge: each subcommand parses its options, calls one use case in gitstate.jobs
and prints (text by default, `--json` for programs). Exit codes are sub-agy's. The use cases are
imported inside the commands: they load pygit2, which no other command should pay for.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gitstate import agents, error_map
from gitstate.cli.output import emit_json, json_option, note, say
from gitstate.errors import EXIT_AGENT_MISSING, EXIT_FAILURE, TimedOut, UsageError
from gitstate.jobs.document.pending import is_pending
from gitstate.storage.layout import Layout

if TYPE_CHECKING:
    from gitstate.document.patch import Patch

DEFAULT_WATCH_TIMEOUT = "60m"
STATUS_KEYS = (
    "state",
    "round",
    "queue_position",
    "created_at",
    "queued_at",
    "started_at",
    "finished_at",
    "pid_supervisor",
    "pid_agent",
    "worktree",
    "branch",
    "base_sha",
    "agent",
    "model",
    "effort",
    "timeout",
    "conversation_id",
    "agy_status",
    "exit_code",
    "attempts",
    "error",
    "harvested_at",
)


def _layout() -> Layout:
    from gitstate.usecases.workspace import Workspace

    return Workspace.open().layout


def _exit(code: int) -> None:
    if code:
        click.get_current_context().exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def job() -> None:
    """Background agent jobs: each in its own worktree and branch agy/<id>, queued, supervised.

    run → watch → result → feedback or merge → cleanup. Runtime files are under
    .git/agy/jobs/<id>/; each finished round is also a commit on refs/agy/jobs/<id>.
    """


# ---- run and feedback ---------------------------------------------------------------------


@job.command()
@click.option(
    "--plan", "plan_file", type=click.Path(path_type=Path), help="A plan file (Markdown)."
)
@click.option("--text", help="The task as text instead of a plan file.")
@click.option("--model", help="The agent's model (default: agy.model, else the agent's own).")
@click.option("--effort", type=click.Choice(["low", "medium", "high"]), help="Reasoning effort.")
@click.option("--timeout", help="Per-attempt time limit such as 30m (default: agy.timeout, 30m).")
@click.option("--no-worktree", is_flag=True, help="Run in this work tree, not a new one.")
@click.option("--wait", is_flag=True, help="Wait for the job to end; exit like watch --strict.")
@json_option
def run(
    plan_file: Path | None,
    text: str | None,
    model: str | None,
    effort: str | None,
    timeout: str | None,
    no_worktree: bool,
    wait: bool,
    as_json: bool,
) -> None:
    """Queue a job for the agent CLI on the current HEAD; returns at once (unless --wait)."""
    from gitstate.jobs.usecases import submit

    if (plan_file is None) == (text is None):
        raise UsageError("give exactly one of --plan FILE and --text TEXT")
    plan_text = submit.read_plan_file(plan_file) if plan_file is not None else str(text)
    layout = _layout()
    done = submit.run(
        layout,
        plan_text,
        seed=_seed,
        model=model,
        effort=effort,
        timeout=timeout,
        no_worktree=no_worktree,
    )
    if wait:
        for warning in done.warnings:
            note(f"warning: {warning}")
        _watch(layout, [done.meta["id"]], 2.0, DEFAULT_WATCH_TIMEOUT, True, as_json, single=True)
        return
    _report_submitted(done, as_json)


def _seed(worktree: Path, ops: Patch, message: str) -> None:
    """A job worktree's first snapshot, by the state core's patch (submit.Seeder)."""
    from gitstate.usecases.state import patch as patch_uc
    from gitstate.usecases.workspace import Workspace

    patch_uc.patch(Workspace.open(worktree), ops, message=message)


@job.command()
@click.argument("job_id")
@click.argument("message")
@json_option
def feedback(job_id: str, message: str, as_json: bool) -> None:
    """Send a done or errored job back for another round, continuing its conversation."""
    from gitstate.jobs.usecases import submit

    _report_submitted(submit.feedback(_layout(), job_id, message), as_json)


def _report_submitted(done: Any, as_json: bool) -> None:
    body = done.as_json()
    if as_json:
        emit_json(body)
        return
    for warning in body["warnings"]:
        note(f"warning: {warning}")
    place = body["queue_position"]
    when = "starts now" if place is None else f"waits in the queue at position {place}"
    say(f"✓ job {body['job_id']} round {body['round']} queued: {when}")
    if body["branch"]:
        say(f"  worktree {body['worktree']}")
        say(f"  branch   {body['branch']}")
    else:
        say(f"  runs in  {body['worktree']} (no worktree)")
    say(f"  events   {body['events_log']}")
    say(f"  next: git agy-state job watch {body['job_id']}")


# ---- watching -----------------------------------------------------------------------------


@job.command()
@click.argument("job_ids", nargs=-1, required=True)
@click.option("--interval", type=float, default=2.0, show_default=True, help="Seconds, 0.5–60.")
@click.option("--timeout", default=DEFAULT_WATCH_TIMEOUT, show_default=True, help="Give up after.")
@click.option("--strict", is_flag=True, help="Exit 1 unless every job ends done.")
@json_option
def watch(
    job_ids: tuple[str, ...], interval: float, timeout: str, strict: bool, as_json: bool
) -> None:
    """Wait until every job has ended (exit 124 on timeout, 3 for an unknown id)."""
    _watch(_layout(), list(job_ids), interval, timeout, strict, as_json)


def _watch(
    layout: Layout,
    job_ids: list[str],
    interval: float,
    timeout: str,
    strict: bool,
    as_json: bool,
    single: bool = False,
) -> None:
    from gitstate.jobs.document import config
    from gitstate.jobs.usecases import control

    control.check_interval(interval)
    seconds = config.parse_duration(timeout, "--timeout")
    watched = control.watch(layout, job_ids, interval, seconds)
    if as_json:
        emit_json(watched.rows[0] if single else watched.rows)
    else:
        for row in watched.rows:
            say(_watch_line(row))
    if watched.timed_out:  # the rows are the answer, also in --json; the error line follows
        code, lines = error_map.text(TimedOut(f"not every job ended within {timeout}"))
        for line in lines:
            note(line)
        _exit(code)
    elif strict and not watched.all_done:
        _exit(EXIT_FAILURE)


def _watch_line(row: dict[str, Any]) -> str:
    elapsed = row["elapsed_seconds"]
    parts = [row["job_id"], f"{row['state']:<11}", f"round {row['round']}"]
    if elapsed is not None:
        parts.append(f"{elapsed:.1f}s")
    if row["contract_ok"] is not None:
        parts.append("contract ok" if row["contract_ok"] else "contract NOT met")
    if row["tests_passed"] is not None:
        parts.append("tests passed" if row["tests_passed"] else "tests FAILED")
    if row["tokens"] is not None:
        parts.append(f"{row['tokens']} tokens")
    line = "  ".join(parts)
    if row["summary"]:
        line += "\n  " + " ".join(str(row["summary"]).split())[:200]
    return line


@job.command()
@click.argument("job_id", required=False)
@click.option("--all", "show_all", is_flag=True, help="Every job (as list).")
@json_option
def status(job_id: str | None, show_all: bool, as_json: bool) -> None:
    """A job's state, round, pids, times and queue position."""
    from gitstate.jobs.usecases import control

    if show_all == (job_id is not None):
        raise UsageError("give a job id or --all")
    layout = _layout()
    if show_all:
        _print_list(control.list_jobs(layout), as_json)
        return
    meta = control.status(layout, str(job_id))
    if as_json:
        emit_json(meta)
        return
    keys = STATUS_KEYS
    say(f"job {meta['id']}")
    for key in keys:
        if meta.get(key) is not None:
            say(f"  {key:<16}{meta[key]}")


@job.command(name="list")
@click.option("--state", help="Only jobs in this state.")
@json_option
def list_(state: str | None, as_json: bool) -> None:
    """Every job, oldest first."""
    from gitstate.jobs.usecases import control

    _print_list(control.list_jobs(_layout(), state), as_json)


def _print_list(metas: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        emit_json(metas)
        return
    if not metas:
        say("no jobs")
        return
    for meta in metas:
        harvested = "  (not harvested)" if is_pending(meta) else ""  # jobs' one rule
        say(
            f"{meta['id']}  {meta['state']:<11}  round {meta.get('round')}  "
            f"{meta.get('branch') or '(no worktree)'}{harvested}"
        )


# ---- harvest ------------------------------------------------------------------------------


@job.command()
@click.argument("job_id")
@click.option("--events", "with_events", is_flag=True, help="Also the agent's event stream.")
@json_option
def result(job_id: str, with_events: bool, as_json: bool) -> None:
    """The job's result and diff stat (exit 4 while it runs); marks it harvested."""
    from gitstate.jobs.usecases import control

    harvest = control.result(_layout(), job_id, with_events)
    if as_json:
        emit_json(harvest.as_json())
        return
    meta = harvest.meta
    if harvest.events is not None:
        for line in harvest.events:
            say(line)
        say()
    say(f"job {meta['id']} round {meta.get('round')}: {meta['state']}")
    if harvest.result is None:
        if meta.get("error"):
            say(f"  {meta['error']}")
    else:
        res = harvest.result
        contract = "ok" if res.get("contract_ok") else f"not met ({res.get('contract_note')})"
        say(f"  agent status {res.get('agy_status')}, contract {contract}")
        if res.get("summary"):
            say(f"  summary: {' '.join(str(res['summary']).split())}")
        changed = res.get("files_changed_git") or []
        say(f"  files changed on {res.get('branch') or 'HEAD'}: {len(changed)}")
        if res.get("diff_stat"):
            say(str(res["diff_stat"]).rstrip())
        if res.get("uncommitted_files"):
            note(
                "warning: the agent left uncommitted files: " + ", ".join(res["uncommitted_files"])
            )
        if res.get("record_redacted"):
            note("note: the job record was committed with credential-like lines redacted")
    if harvest.final_state and harvest.final_state.get("text"):
        say()
        say(f"final state ({harvest.final_state['ref']}):")
        say(str(harvest.final_state["text"]).rstrip())
    if meta.get("branch") and meta["state"] == "done":
        say()
        say(f"next: review, then git merge {meta['branch']}; or job feedback {meta['id']} MSG")


# ---- steering -----------------------------------------------------------------------------


@job.command()
@click.argument("job_id")
@json_option
def cancel(job_id: str, as_json: bool) -> None:
    """Cancel a queued or running job; ends the agent's whole process group."""
    from gitstate.jobs.usecases import control

    done = control.cancel(_layout(), job_id)
    if as_json:
        emit_json(done.as_json())
        return
    if done.meta["state"] != "cancelled" or done.was in ("cancelled",):
        say(f"job {job_id} is already {done.meta['state']}; nothing to cancel")
        return
    ended = " and ended the agent's process group" if done.agent_ended else ""
    say(f"✓ cancelled job {job_id} (it was {done.was}){ended}")


@job.command()
@click.argument("job_id")
@click.option("--purge", is_flag=True, help="Also delete the runtime files (the record stays).")
@click.option("--delete-branch", is_flag=True, help="Also delete branch agy/<id> if merged.")
@click.option("--force", is_flag=True, help="Delete an unmerged branch / uncommitted work too.")
@json_option
def cleanup(job_id: str, purge: bool, delete_branch: bool, force: bool, as_json: bool) -> None:
    """Remove a finished job's worktree (and directory); refuses running jobs."""
    from gitstate.jobs.usecases import control

    done = control.cleanup(_layout(), job_id, purge, delete_branch, force)
    if as_json:
        emit_json(done._asdict())
        return
    say(f"✓ cleaned up job {job_id}")
    say("  worktree removed" if done.worktree_removed else "  no worktree to remove")
    if done.branch_deleted:
        say(f"  branch agy/{job_id} deleted")
    if done.purged:
        say(f"  runtime files deleted (the record stays on refs/agy/jobs/{job_id})")


@job.command()
@json_option
def pending(as_json: bool) -> None:
    """Finished jobs nobody has harvested yet (what the stop guard waits for)."""
    from gitstate.jobs.usecases import control

    rows = control.pending(_layout())
    if as_json:
        emit_json(rows)
        return
    if not rows:
        say("no finished job waits to be harvested")
        return
    for row in rows:
        say(f"{row['job_id']}  {row['state']:<11}  round {row['round']}  {row['branch'] or ''}")
    say("harvest with: git agy-state job result ID")


@job.command()
@json_option
def doctor(as_json: bool) -> None:
    """Can jobs run here? The agent CLI, git, Python, settings, the worktree folder."""
    from gitstate.jobs.usecases import doctor as doctor_uc

    report = doctor_uc.doctor(_layout())
    body = report.body
    if as_json:
        emit_json(body)
    else:
        say(f"agent    {body.get('agent')} {body.get('agent_version') or ''}".rstrip())
        say(f"git      {body.get('git_version')}")
        say(f"python   {body.get('python_version')}")
        say(f"folder   {body.get('worktree_dir')}")
        for issue in body["issues"]:
            say(f"✗ {issue}")
        for warning in body["warnings"]:
            say(f"! {warning}")
        for hint in body["hints"]:
            note(f"hint: {hint}")
        if report.ok:
            say("✓ jobs can run here")
    if report.agent_missing:
        _exit(EXIT_AGENT_MISSING)
    elif not report.ok:
        _exit(EXIT_FAILURE)


def _quota_help() -> str:
    """quota's help: whose usage windows it reads and what it runs (the agents registry)."""
    asks = [
        f"{module.TITLE}'s usage windows (asks `{' '.join(argv)}`; costs no tokens)."
        for module in agents.quota_agents()
        if module.JOB is not None and (argv := module.JOB.quota_argv((module.NAME,)))
    ]
    return " ".join(asks) or "The agent's usage windows (no agent reports them)."


@job.command(help=_quota_help())
@json_option
def quota(as_json: bool) -> None:
    from gitstate.jobs.usecases import doctor as doctor_uc

    found = doctor_uc.quota(_layout())
    if as_json:
        emit_json(found.as_json())
        return
    if not found.windows:
        say(f"{found.agent} reported no usage windows")
    for window in found.windows:
        fields = [f"{k} {v}" for k, v in window.items() if k != "name" and v is not None]
        say(f"{window['name'] or 'window'}: " + ", ".join(fields))
