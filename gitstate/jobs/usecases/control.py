"""Reading and steering jobs: status, list, watch, result (harvest), cancel, cleanup, pending.

Every read reconciles first, so a job whose supervisor died reads as interrupted (or as the
result it had already written) and its agent is ended — there is no daemon to do it.
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

from gitstate.errors import Failure, NotFinished, UsageError, WorkAtRisk
from gitstate.jobs.document import config as config_mod
from gitstate.jobs.document.pending import ACTIVE, is_pending
from gitstate.jobs.storage import doorbell, records
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.usecases import agents, lifecycle, queue
from gitstate.jobs.usecases.lifecycle import Meta
from gitstate.storage.layout import Layout

MIN_INTERVAL, MAX_INTERVAL = 0.5, 60.0
CANCEL_GRACE = lifecycle.KILL_GRACE


def status(layout: Layout, job_id: str) -> Meta:
    """The meta, reconciled, with its queue position (None unless it waits for a slot)."""
    meta = lifecycle.reconcile(layout, lifecycle.read(layout, job_id))
    return with_position(layout, meta)


def with_position(layout: Layout, meta: Meta) -> Meta:
    shown = dict(meta)
    shown["queue_position"] = None
    if meta.get("state") == "queued":
        with jobfiles.queue_locked(layout):
            standing, orphans = queue.standing_locked(layout, meta["id"])
        for orphan in orphans:
            lifecycle.finish_orphan(layout, orphan)
        limit = _limit(layout)
        shown["queue_position"] = queue.position(standing, limit)
    return shown


def _limit(layout: Layout) -> int:
    return config_mod.load(records.main_store(layout).config_value).max_concurrent


def list_jobs(layout: Layout, state: str | None = None) -> list[Meta]:
    """Every job, oldest first, reconciled; only those in `state` when given."""
    if state is not None and state not in (*ACTIVE, *lifecycle.TERMINAL):
        raise UsageError(
            f"unknown state {state!r}", hint="queued, running, done, error, cancelled, interrupted"
        )
    metas = [lifecycle.reconcile(layout, m) for m in lifecycle.read_all(layout)]
    metas.sort(key=lambda m: (m.get("created_at") or "", m["id"]))
    return [m for m in metas if state is None or m.get("state") == state]


def pending(layout: Layout) -> list[dict[str, Any]]:
    """Finished jobs nobody has harvested yet (the stop guard blocks on these)."""
    return [
        {
            "job_id": m["id"],
            "state": m["state"],
            "round": m.get("round"),
            "branch": m.get("branch"),
            "finished_at": m.get("finished_at"),
        }
        for m in list_jobs(layout)
        if is_pending(m)
    ]


# ---- watch --------------------------------------------------------------------------------


class Watched(NamedTuple):
    rows: list[dict[str, Any]]
    timed_out: bool

    @property
    def all_done(self) -> bool:
        return all(row["state"] == "done" for row in self.rows)


def check_interval(interval: float) -> float:
    if not MIN_INTERVAL <= interval <= MAX_INTERVAL:
        raise UsageError(
            f"--interval {interval:g} is out of range", hint="between 0.5 and 60 seconds"
        )
    return interval


def watch(layout: Layout, job_ids: list[str], interval: float, timeout: float) -> Watched:
    """Wait until every job is terminal (a barrier), looking every `interval` seconds — or at
    once when a job settles (the doorbell rings); `timed_out` when `timeout` passed first."""
    check_interval(interval)
    for job_id in job_ids:
        lifecycle.read(layout, job_id)  # unknown ids fail now (3), malformed ones (64)
    deadline = time.monotonic() + timeout
    with doorbell.Bell.open(layout, f"watch-{os.getpid()}-{time.monotonic_ns()}") as bell:
        while True:
            metas = [lifecycle.reconcile(layout, lifecycle.read(layout, j)) for j in job_ids]
            finished = all(m.get("state") not in ACTIVE for m in metas)
            left = deadline - time.monotonic()
            if finished or left <= 0:
                return Watched([watch_row(layout, m) for m in metas], not finished)
            bell.wait(min(interval, left))


def watch_row(layout: Layout, meta: Meta) -> dict[str, Any]:
    job = jobfiles.files(layout, meta["id"])
    result = jobfiles.read_json(job.result)
    if not isinstance(result, dict) or result.get("round") != meta.get("round"):
        result = {}
    structured = result.get("structured_output")
    tests_passed = structured.get("tests_passed") if isinstance(structured, dict) else None
    return {
        "job_id": meta["id"],
        "state": meta.get("state"),
        "round": meta.get("round"),
        "agy_status": meta.get("agy_status") or result.get("agy_status"),
        "summary": result.get("summary") or meta.get("error"),
        "contract_ok": result.get("contract_ok"),
        "tests_passed": tests_passed if isinstance(tests_passed, bool) else None,
        "elapsed_seconds": lifecycle.seconds_between(
            meta.get("started_at") or meta.get("queued_at"), meta.get("finished_at")
        ),
        "tokens": agents.tokens(result.get("usage")),
        "diff_stat": result.get("diff_stat"),
        "result_path": str(job.result) if result else None,
        "events_path": str(job.events),
        "worktree": meta.get("worktree"),
        "branch": meta.get("branch"),
    }


# ---- harvest ------------------------------------------------------------------------------


class Harvest(NamedTuple):
    meta: Meta
    result: dict[str, Any] | None  # None: cancelled, interrupted, or an error before any result
    final_state: dict[str, Any] | None  # the job worktree's STATE.md at its chain's tip
    events: list[str] | None
    first_read: bool

    def as_json(self) -> dict[str, Any]:
        """`job result --json` (docs/json.md): the result (else the record), the final state,
        the events when asked for."""
        body: dict[str, Any] = dict(self.result) if self.result else dict(self.meta)
        body["final_state"] = self.final_state
        if self.events is not None:
            body["events"] = self.events
        return body


def result(layout: Layout, job_id: str, with_events: bool = False) -> Harvest:
    """The round's result (exit 4 while unfinished); the first read marks the job harvested."""
    meta = lifecycle.reconcile(layout, lifecycle.read(layout, job_id))
    if meta.get("state") in ACTIVE:
        raise NotFinished(
            f"job {job_id} is {meta['state']}", hint="git agy-state job watch " + job_id
        )
    job = jobfiles.files(layout, job_id)
    found = jobfiles.read_json(job.result)
    usable = isinstance(found, dict) and found.get("round") == meta.get("round")
    if meta.get("state") in ("cancelled", "interrupted"):
        usable = False
    first = not meta.get("harvested_at")
    if first:
        stamp = lifecycle.utc_now()

        def harvest(current: Meta) -> Meta | None:
            if current.get("harvested_at") or current.get("round") != meta.get("round"):
                return None
            if current.get("state") in ACTIVE:
                return None
            current["harvested_at"] = stamp
            return current

        meta = lifecycle.update(layout, job_id, harvest) or meta
    events = None
    if with_events:
        events = jobfiles.read_text(job.events).splitlines()
    return Harvest(
        meta, found if usable else None, final_state(layout, job_id, meta), events, first
    )


def final_state(layout: Layout, job_id: str, meta: Meta) -> dict[str, Any] | None:
    if not meta.get("branch"):
        return None
    store = records.main_store(layout)
    ref = f"refs/agy/wt/{job_id}/state"
    tip = store.tip(ref)
    if tip is None:
        return None
    data = store.state_bytes(tip)
    return {
        "ref": ref,
        "snapshot": tip,
        "text": data.decode("utf-8", "replace") if data is not None else None,
    }


# ---- cancel and cleanup -------------------------------------------------------------------


class Cancelled(NamedTuple):
    meta: Meta
    was: str  # the state the job was in
    agent_ended: bool

    def as_json(self) -> dict[str, Any]:
        """`job cancel --json` (docs/json.md): the record, what it was, whether the agent ended."""
        return {**self.meta, "was": self.was, "agent_ended": self.agent_ended}


def cancel(layout: Layout, job_id: str) -> Cancelled:
    """Cancel a queued or running job: the state first (so a finishing round cannot overwrite
    it), then the agent's whole process group — SIGTERM, SIGKILL after 5 s."""
    meta = lifecycle.reconcile(layout, lifecycle.read(layout, job_id))
    before = dict(meta)

    def change(current: Meta) -> Meta | None:
        if current.get("state") not in ACTIVE:
            return None
        before.update(current)
        current.update(
            state="cancelled", finished_at=lifecycle.utc_now(), error="cancelled by the user"
        )
        return current

    written = lifecycle.update(layout, job_id, change)
    if written is None:
        return Cancelled(lifecycle.read(layout, job_id), str(meta.get("state")), False)
    ended = False
    if before.get("state") == "running":
        ended = lifecycle.end_agent(before, grace=CANCEL_GRACE)
    doorbell.ring(layout)
    return Cancelled(written, str(before.get("state")), ended)


class Cleaned(NamedTuple):
    job_id: str
    worktree_removed: bool
    branch_deleted: bool
    purged: bool


def cleanup(
    layout: Layout,
    job_id: str,
    purge: bool = False,
    delete_branch: bool = False,
    force: bool = False,
) -> Cleaned:
    """Remove the job's worktree (and directory); optionally its branch and its runtime files.
    The record on refs/agy/jobs/<id> stays: it is the job's history."""
    meta = lifecycle.reconcile(layout, lifecycle.read(layout, job_id))
    if meta.get("state") in ACTIVE:
        raise Failure(
            f"job {job_id} is {meta['state']}; cleanup would pull the worktree from under it",
            hint=f"wait for it, or git agy-state job cancel {job_id}",
        )
    store = records.main_store(layout)
    if delete_branch and not force and not records.merged(store, job_id):
        raise WorkAtRisk(
            f"branch {records.branch_name(job_id)} is not merged into HEAD",
            hint=f"git merge {records.branch_name(job_id)} first, or --force to delete it anyway",
        )
    removed = bool(meta.get("branch")) and records.remove_worktree(store, job_id, force)
    deleted = delete_branch and records.delete_branch(store, job_id)
    job = jobfiles.files(layout, job_id)
    if purge:
        import shutil

        shutil.rmtree(job.dir, ignore_errors=True)
    else:

        def mark(current: Meta) -> Meta | None:
            current["cleaned_at"] = lifecycle.utc_now()
            return current

        lifecycle.update(layout, job_id, mark)
    return Cleaned(job_id, removed, deleted, purge)
