"""Submitting work: `run` creates a job, `feedback` sends a finished one back for another round.

Both write the job's files, queue it under the queue lock and start its supervisor detached (a
new session; a fork of this process where that is safe, launch.py), handing it the job's supervisor lock as an inherited fd: from the moment the job
is queued some live process holds that lock, so no reader ever mistakes a job that is starting
for an orphan. Both return at once; they never fail because the queue is full.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from gitstate.document.language import counted
from gitstate.document.patch import AddStep, Patch, SetSection
from gitstate.errors import AgentMissing, Failure, NotFinished, UsageError
from gitstate.jobs.document import config as config_mod
from gitstate.jobs.document import plan
from gitstate.jobs.document.config import JobConfig
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.storage import records, supervisor_git
from gitstate.jobs.storage.files import JobFiles
from gitstate.jobs.usecases import launch, lifecycle, queue, supervise
from gitstate.jobs.usecases.lifecycle import Meta
from gitstate.storage import abbrev, view
from gitstate.storage.layout import Layout
from gitstate.storage.snapshots import Store

# Writes a job worktree's first snapshot: (worktree, the patch, the snapshot's message). It is
# the state core's patch, handed in by the edge that submits: the jobs slice calls none of the
# core's use cases itself (docs/architecture.md).
Seeder = Callable[[Path, Patch, str], None]


class Submitted(NamedTuple):
    meta: Meta
    queue_position: int | None
    events_log: Path
    warnings: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "job_id": self.meta["id"],
            "state": self.meta["state"],
            "round": self.meta["round"],
            "queue_position": self.queue_position,
            "worktree": self.meta.get("worktree"),
            "branch": self.meta.get("branch"),
            "events_log": str(self.events_log),
            "warnings": list(self.warnings),
        }


def require_agent(config: JobConfig) -> str:
    found = shutil.which(config.agent[0])
    if found is None:
        raise AgentMissing(
            f"the agent CLI {config.agent[0]!r} is not installed (not found on PATH)",
            hint="install it, or point git config agy.agent at another command",
        )
    return found


def read_plan_file(path: Path) -> str:
    """The plan file's text: a regular file (a link to one is followed: the user named it), read
    without blocking and bounded, so a FIFO or /dev/zero is refused at once (docs/jobs.md)."""
    try:
        data = view.read_regular(os.path.realpath(path), plan.MAX_PROMPT_BYTES + 1)
    except view.NotRegular as exc:
        if exc.what == "a directory":
            raise UsageError(f"{path} is a directory, not a plan file") from None
        if exc.what.startswith("unreadable: "):
            raise UsageError(f"cannot read {path}: {exc.what[len('unreadable: ') :]}") from None
        raise UsageError(f"{path} is {exc.what}, not a plan file") from None
    if data is None:
        raise UsageError(f"no plan file {path}")
    if len(data) > plan.MAX_PROMPT_BYTES:
        raise UsageError(
            f"{path} is over {plan.MAX_PROMPT_BYTES // 1024} KB, the limit of a job's prompt"
        )
    return plan.decode_plan(data, str(path))


def run(
    layout: Layout,
    plan_text: str,
    *,
    seed: Seeder,
    model: str | None = None,
    effort: str | None = None,
    timeout: str | None = None,
    no_worktree: bool = False,
) -> Submitted:
    """Create a job from `plan_text` on the current HEAD and queue it (see the module doc)."""
    store = records.main_store(layout)
    preset = supervisor_git.preset(layout, store.config_value)
    config = config_mod.load(supervisor_git.config_reader(layout, preset.values))
    require_agent(config)
    effort = config_mod.check_effort(effort) or config.effort
    timeout = timeout or config.timeout
    config_mod.parse_duration(timeout, "--timeout")
    if not plan_text.strip():
        raise UsageError("the plan is empty")
    plan.check_text(plan_text)
    # Called in the main work tree (the usual case), the main store is this tree's own: the
    # same repository opened at the same path, so it is not opened twice (nor a third time
    # for the dirty check), each open being a config and ref read of its own.
    main_tree = layout.gitdir == store.layout.gitdir
    here = store if main_tree else Store(layout)
    base, _branch = here.head_info()
    if base is None:
        raise Failure("the repository has no commit yet; a job starts from HEAD")
    short = abbrev.short_id(store, base)  # as git names it (core.abbrev)
    warnings = _dirty_warning(layout, short, store if main_tree else None)
    parsed = plan.parse_plan(plan_text)
    project = records.main_workdir(store)
    job = jobfiles.new_job(layout)
    try:
        if no_worktree:
            worktree, branch = layout.workdir or project, None
        else:
            worktree, branch = records.worktree_path(store, job.id), records.branch_name(job.id)
        prompt = plan.build_prompt(
            parsed, job_id=job.id, worktree=str(worktree), branch=branch, round_no=1
        )
        jobfiles.write_bytes(job.plan, plan_text.encode())
        jobfiles.write_bytes(job.prompt, prompt.encode())
        jobfiles.write_bytes(job.schema, plan.schema_text().encode())
        if not no_worktree:
            records.ensure_excluded(store)
            records.create_worktree(store, job.id, base)
            seed(worktree, _seed_patch(job, parsed, short), f"job {job.id}: seeded from the plan")
    except BaseException:
        _roll_back(store, job, no_worktree)
        raise
    now = lifecycle.utc_now()
    meta: Meta = {
        "v": jobfiles.META_VERSION,
        "id": job.id,
        "state": "queued",
        "created_at": now,
        "queued_at": now,
        "started_at": None,
        "finished_at": None,
        "round": 1,
        "pid_supervisor": None,
        "pid_agent": None,
        "project": str(project),
        "worktree": str(worktree),
        "branch": branch,
        "base_sha": base,
        "agent": config.kind,
        "model": model or config.model,
        "effort": effort,
        "timeout": timeout,
        "conversation_id": None,
        "agy_status": None,
        "exit_code": None,
        "error": None,
        "attempts": 0,
        "harvested_at": None,
        "feedback": None,
        "queue_seq": None,
    }
    handed = supervise.Handed(config, prompt)
    return _enqueue(layout, job, meta, config, preset, handed, warnings, fresh=True)


def feedback(layout: Layout, job_id: str, message: str) -> Submitted:
    """Send a done or errored job back to the end of the queue for round+1, continuing the
    agent's conversation; re-creates the worktree from the branch if cleanup removed it."""
    if not message.strip():
        raise UsageError("the feedback message is empty")
    meta = lifecycle.reconcile(layout, lifecycle.read(layout, job_id))
    if meta["state"] not in ("done", "error"):
        raise NotFinished(
            f"job {job_id} is {meta['state']}; feedback needs a done or error job",
            hint="wait for it: git agy-state job watch " + job_id,
        )
    store = records.main_store(layout)
    preset = supervisor_git.preset(layout, store.config_value)
    config = config_mod.load(supervisor_git.config_reader(layout, preset.values))
    require_agent(config)
    job = jobfiles.files(layout, job_id)
    previous = jobfiles.read_json(job.result)
    summary = previous.get("summary") if isinstance(previous, dict) else meta.get("error")
    parsed = plan.parse_plan(_read(job.plan))
    prompt = plan.build_prompt(
        parsed,
        job_id=job_id,
        worktree=str(meta["worktree"]),
        branch=meta.get("branch"),
        round_no=meta["round"] + 1,
        feedback=message,
        previous_summary=summary,
    )
    warnings: list[str] = []
    if meta.get("branch") and not Path(meta["worktree"]).exists():
        records.recreate_worktree(store, job_id)
        warnings.append(f"re-created the worktree {meta['worktree']} from {meta['branch']}")
    if not meta.get("conversation_id"):
        warnings.append("no conversation was recorded; the agent starts a new one")
    jobfiles.write_bytes(job.prompt, prompt.encode())
    round_no = meta["round"]

    def requeue(current: Meta) -> Meta | None:
        if current["state"] not in ("done", "error") or current["round"] != round_no:
            return None
        current.update(
            state="queued",
            round=round_no + 1,
            queued_at=lifecycle.utc_now(),
            started_at=None,
            finished_at=None,
            pid_supervisor=None,
            pid_agent=None,
            agy_status=None,
            exit_code=None,
            error=None,
            attempts=0,
            harvested_at=None,
            feedback=message,
            cleaned_at=None,
        )
        return current

    handed = supervise.Handed(config, prompt)
    return _enqueue(
        layout, job, meta, config, preset, handed, tuple(warnings), fresh=False, change=requeue
    )


def _enqueue(
    layout: Layout,
    job: JobFiles,
    meta: Meta,
    config: JobConfig,
    preset: supervisor_git.Preset,
    handed: supervise.Handed,
    warnings: tuple[str, ...],
    fresh: bool,
    change: Any = None,
) -> Submitted:
    fd = jobfiles.take_supervisor_lock(job)
    try:
        with jobfiles.queue_locked(layout):
            if fresh:
                current: Meta | None = meta
            else:
                current = change(lifecycle.read(layout, job.id))
                if current is None:
                    raise NotFinished(f"job {job.id} changed state meanwhile; look again")
            assert current is not None
            current["queue_seq"] = jobfiles.next_sequence(layout)
            lifecycle.write(layout, current)
            standing, orphans = queue.standing_locked(layout, job.id)
            place = queue.position(standing, config.max_concurrent)
        for orphan in orphans:
            lifecycle.finish_orphan(layout, orphan)
        started = launch.start(
            layout,
            job,
            current["round"],
            fd,
            str(current["project"]),
            preset,
            place is None,
            handed,
        )
    except BaseException:
        if fresh:
            _roll_back(records.main_store(layout), job, meta.get("branch") is None)
        raise
    finally:
        os.close(fd)  # the supervisor holds its own copy of the lock now

    def record_pid(now: Meta) -> Meta | None:
        if now.get("round") != current["round"] or now.get("pid_supervisor") is not None:
            return None  # the supervisor recorded itself already
        now["pid_supervisor"] = started.pid
        return now

    if not started.forked:  # a fresh interpreter takes a while to record itself
        lifecycle.update(layout, job.id, record_pid)
    return Submitted(current, place, job.events, warnings)


def _dirty_warning(layout: Layout, short: str, store: Store | None) -> tuple[str, ...]:
    if layout.workdir is None:
        return ()
    dirty = records.tracked_changes(layout.workdir, store)
    if not dirty:
        return ()
    return (
        f"{counted(len(dirty), 'tracked file')} {'has' if len(dirty) == 1 else 'have'} "
        "uncommitted changes; the job starts from HEAD "
        f"({short}) without them",
    )


def _seed_patch(job: JobFiles, parsed: plan.Plan, short: str) -> Patch:
    """What the job worktree's own chain (refs/agy/wt/<id>/state) starts from: the plan."""
    key_data = [f"- job {job.id} on branch agy/{job.id}, from {short}; plan: {job.plan}"]
    if parsed.scope:
        key_data.append("- scope: " + "; ".join(parsed.scope))
    if parsed.constraints:
        key_data.append("- constraints: " + "; ".join(parsed.constraints))
    ops: list[Any] = [
        SetSection("goal", parsed.title),
        SetSection("key_data", "\n".join(key_data)),
    ]
    ops += [AddStep(f"meet: {item}") for item in parsed.acceptance[:3]]
    ops.append(AddStep(f"commit on agy/{job.id} and answer in the result schema"))
    return Patch(tuple(ops))


def _roll_back(store: Store, job: JobFiles, no_worktree: bool) -> None:
    """Undo a submission that failed half-way: worktree, branch, seeded chain, job folder."""
    if not no_worktree:
        with contextlib.suppress(Exception):
            records.remove_worktree(store, job.id, force=True)
            records.delete_branch(store, job.id)
            records.delete_chain(store, job.id)
    shutil.rmtree(job.dir, ignore_errors=True)


def _read(path: Path) -> str:
    return jobfiles.read_text(path)
