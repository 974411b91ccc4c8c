"""A job's meta.json and its state machine: read, change under the queue lock, reconcile.

States: queued → running → done | error | cancelled | interrupted (feedback: back to queued).
Every change happens under the queue lock as a compare-and-swap on the state and round, so a
cancel and a finishing round cannot both win. `interrupted` is decided lazily by whoever reads:
an active job whose supervisor lock is free has lost its supervisor; it adopts a result already
written for its round, or turns interrupted, and its agent's process group is ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from gitstate.errors import NotFound
from gitstate.jobs.document.pending import ACTIVE
from gitstate.jobs.document.queue_order import queue_key
from gitstate.jobs.storage import doorbell
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.storage.files import JobFiles
from gitstate.storage.layout import Layout

Meta = dict[str, Any]

__all__ = ["queue_key"]  # the queue's order: jobs/document/queue_order.py

TERMINAL = ("done", "error", "cancelled", "interrupted")
JOB_ENV = "AGY_JOB_ID"  # set in the agent's environment: how a pid is known to be ours
KILL_GRACE = 5.0


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def seconds_between(start: str | None, end: str | None = None) -> float | None:
    if not start:
        return None
    try:
        begin = datetime.fromisoformat(start)
        finish = datetime.fromisoformat(end) if end else datetime.now(timezone.utc)
    except ValueError:
        return None
    return round((finish - begin).total_seconds(), 3)


def read(layout: Layout, job_id: str) -> Meta:
    """The job's meta (the id checked first: a malformed id is a usage error, never a path)."""
    job = jobfiles.files(layout, job_id)
    meta = jobfiles.read_json(job.meta)
    if not isinstance(meta, dict):
        raise NotFound(f"no job {job_id}", hint="git agy-state job list")
    return meta


def read_all(layout: Layout) -> list[Meta]:
    return [meta for meta in jobfiles.read_metas(layout) if isinstance(meta, dict)]


def write(layout: Layout, meta: Meta) -> None:
    jobfiles.write_json(jobfiles.files(layout, meta["id"]).meta, meta)


def update(
    layout: Layout, job_id: str, change: Callable[[Meta], Meta | None], ring: bool = False
) -> Meta | None:
    """Apply `change` to the current meta under the queue lock; it returns the new meta, or
    None to leave it alone (its precondition failed). Returns what was written, or None."""
    with jobfiles.queue_locked(layout):
        current = read(layout, job_id)
        new = change(dict(current))
        if new is not None:
            write(layout, new)
    if new is not None and ring:
        doorbell.ring(layout)
    return new


# ---- reconciliation -----------------------------------------------------------------------


def reconcile(layout: Layout, meta: Meta) -> Meta:
    """The job as it really is: an active job whose supervisor is gone is settled now."""
    if meta.get("state") not in ACTIVE:
        return meta
    job = jobfiles.files(layout, meta["id"])
    if jobfiles.supervisor_alive(job):
        return meta
    with jobfiles.queue_locked(layout):
        settled, orphan = reconcile_locked(layout, read(layout, meta["id"]))
    finish_orphan(layout, orphan)
    return settled


def reconcile_locked(layout: Layout, meta: Meta) -> tuple[Meta, Meta | None]:
    """reconcile() for a caller holding the queue lock; returns the meta and, when the job was
    orphaned, the old meta whose agent must be ended (after the lock is released)."""
    if meta.get("state") not in ACTIVE:
        return meta, None
    if jobfiles.lock_held(layout, meta["id"]):  # every count asks this of every active job
        return meta, None
    job = jobfiles.files(layout, meta["id"])
    settled = dict(meta)
    now = utc_now()
    result = jobfiles.read_json(job.result)
    adopted = (
        isinstance(result, dict)
        and result.get("round") == meta.get("round")
        and result.get("state") in ("done", "error")
    )
    if adopted:
        assert isinstance(result, dict)
        settled.update(state=result["state"], agy_status=result.get("agy_status"))
        settled["note"] = "the supervisor exited after writing the result; adopted it"
    else:
        settled.update(state="interrupted")
        settled["error"] = settled.get("error") or (
            "the supervisor is gone (killed, or the machine restarted) before the round finished"
        )
    settled.update(finished_at=now, pid_supervisor=None)
    write(layout, settled)
    return settled, meta


def finish_orphan(layout: Layout, orphan: Meta | None) -> None:
    """End the agent an orphaned job left behind, commit an adopted round, wake the queue."""
    if orphan is None:
        return
    end_agent(orphan)
    settled = jobfiles.read_json(jobfiles.files(layout, orphan["id"]).meta)
    if isinstance(settled, dict) and settled.get("state") in ("done", "error"):
        # Here only, and rarely: the supervisor's own start must not load pygit2 for it.
        from gitstate.jobs.storage import records

        with contextlib.suppress(Exception):  # the record is a copy; the runtime file stays
            records.ensure_committed(layout, settled["id"], settled.get("round") or 1)
    doorbell.ring(layout)


# ---- the agent's process group ------------------------------------------------------------


def ours(meta: Meta, pid: int) -> bool:
    """False only when /proc shows that `pid` is some other program (the pid was reused)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return True  # no /proc, or the group leader is gone: the group id itself is still ours
    return f"{JOB_ENV}={meta['id']}".encode() in environ.split(b"\0")


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (zombies waiting to be reaped do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    members = _running_members(pgid)
    return True if members is None else members > 0


def _running_members(pgid: int) -> int | None:
    """How many non-zombie processes are in the group, from /proc; None without /proc."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    count = 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat.rsplit(b")", 1)[-1].split()  # state, ppid, pgrp, …
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            count += 1
    return count


def end_agent(meta: Meta, grace: float = 2.0) -> bool:
    """SIGTERM the agent's whole process group, SIGKILL it after `grace`; True if one ran."""
    pgid = meta.get("pid_agent")
    if not isinstance(pgid, int) or pgid <= 1 or not group_alive(pgid) or not ours(meta, pgid):
        return False
    end_group(pgid, grace)
    return True


def end_group(pgid: int, grace: float) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    delay = 0.005
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(delay)  # waiting for other processes to exit: nothing to block on
        delay = min(delay * 2, 0.1)
    if group_alive(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def files_of(layout: Layout, meta: Meta) -> JobFiles:
    return jobfiles.files(layout, meta["id"])
