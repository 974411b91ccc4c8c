"""The run queue: at most agy.maxConcurrent jobs run; the rest wait in FIFO order.

Slots are counted, not held: under the queue lock a job may start when the running jobs plus the
queued jobs ahead of it (by submission time, then sequence number) leave a slot free. Counting
reconciles first, so a dead supervisor's slot is free at once and its agent is ended.

Hand-off without polling: a waiting supervisor sleeps on its doorbell (a FIFO) and on pidfds: the
first in line on the slot holders', every other waiter on the one just ahead of it. A finishing
job, a cancel, a queue timeout or a reconciliation rings, right after the queue lock is
released, the bell of the first job in line (and the watchers'), which rings the next once it
has claimed a slot; a supervisor killed with -9 wakes its watcher through its pidfd.
SAFETY_WAIT only bounds a wait nobody announced (maxConcurrent raised by hand, a kernel without
pidfds).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import NamedTuple

from gitstate.jobs.storage import doorbell
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.usecases import lifecycle
from gitstate.jobs.usecases.lifecycle import Meta
from gitstate.storage.layout import Layout

SAFETY_WAIT = 5.0


class Standing(NamedTuple):
    running: int  # jobs holding a slot
    ahead: int  # queued jobs before this one
    pids: tuple[int, ...]  # supervisors whose exit can move this job on


def standing_locked(layout: Layout, job_id: str) -> tuple[Standing, list[Meta]]:
    """Where `job_id` stands (under the queue lock), and the orphans found on the way."""
    running: list[Meta] = []
    queued: list[Meta] = []
    orphans: list[Meta] = []
    for meta in lifecycle.read_all(layout):
        settled, orphan = lifecycle.reconcile_locked(layout, meta)
        if orphan is not None:
            orphans.append(orphan)
        if settled.get("state") == "running":
            running.append(settled)
        elif settled.get("state") == "queued":
            queued.append(settled)
    queued.sort(key=lifecycle.queue_key)
    ids = [m["id"] for m in queued]
    ahead = ids.index(job_id) if job_id in ids else len(ids)
    # The first in line watches the slot holders; every other waiter the one just ahead of it
    # (a kill -9 there moves it up; the rest of the queue hears of changes by the bell).
    watched = running if ahead == 0 else queued[ahead - 1 : ahead]
    pids = tuple(m["pid_supervisor"] for m in watched if isinstance(m.get("pid_supervisor"), int))
    return Standing(len(running), ahead, pids), orphans


def position(standing: Standing, limit: int) -> int | None:
    """None when the job may run now; else its 1-based place among the jobs that must wait."""
    free = max(0, limit - standing.running)
    if standing.ahead < free:
        return None
    return standing.ahead - free + 1


def wait_for_slot(
    layout: Layout,
    job_id: str,
    round_no: int,
    limit: Callable[[], int],
    queue_timeout: float,
    on_wait: Callable[[Standing], None],
    on_claim: Callable[[Meta], None] | None = None,
    slot_likely: bool = False,
) -> Meta | None:
    """Claim a slot for the job (state running) and return its meta; None when the job left
    the queue meanwhile (cancelled) or waited past queue_timeout (then it is an error). The
    waiting supervisor's pid goes into meta.json in the same locked pass that finds it must
    wait (the next in line watches it); a claim records it anyway. `on_claim` runs in the
    claiming pass, under the lock, and may add to the meta the claim writes. `slot_likely`
    (the submitter found a slot free a moment ago): look before making a doorbell, which a job
    that claims at its first look never needs (a FIFO made, renamed and removed)."""
    deadline = time.monotonic() + queue_timeout
    announced = False
    # A bell only for a job that must wait: one that was told a slot was free looks first and
    # listens only if it must wait after all, then looks again (see the loop's end).
    bell = None if slot_likely else doorbell.Bell.open(layout, job_id)
    try:
        while True:
            claimed: Meta | None = None
            left = False
            watch: list[int] = []
            orphans: list[Meta] = []
            cap = limit()  # read before the lock: it may ask git, and the lock is held briefly
            with jobfiles.queue_locked(layout):
                mine = lifecycle.read(layout, job_id)
                if mine.get("state") != "queued" or mine.get("round") != round_no:
                    left = True
                else:
                    standing, orphans = standing_locked(layout, job_id)
                    if position(standing, cap) is None:
                        mine.update(
                            state="running",
                            started_at=lifecycle.utc_now(),
                            pid_supervisor=os.getpid(),
                        )
                        if on_claim is not None:
                            on_claim(mine)
                        lifecycle.write(layout, mine)
                        claimed = mine
                    elif time.monotonic() >= deadline:
                        waited = int(queue_timeout)
                        mine.update(
                            state="error",
                            finished_at=lifecycle.utc_now(),
                            error=f"waited {waited // 60} min for a queue slot (agy.queueTimeout)",
                        )
                        lifecycle.write(layout, mine)
                        left = True
                    else:
                        if mine.get("pid_supervisor") != os.getpid():  # who waits, for watchers
                            mine["pid_supervisor"] = os.getpid()
                            lifecycle.write(layout, mine)
                        watch = doorbell.pidfds(standing.pids)
            for orphan in orphans:
                lifecycle.finish_orphan(layout, orphan)
            if claimed is not None:
                doorbell.ring(layout)  # hand on: the next in line may find a slot free too
                return claimed
            if left:
                doorbell.ring(layout)
                return None
            if bell is None:
                # It must wait after all. A ring made before its bell was there was missed, so
                # it listens now and looks again: whatever changed before that look, the look
                # sees; whoever changes the queue after it rings a bell that is listening.
                doorbell.close_all(watch)
                bell = doorbell.Bell.open(layout, job_id)
                continue
            try:
                if not announced:
                    on_wait(standing)
                    announced = True
                bell.wait(min(deadline - time.monotonic(), SAFETY_WAIT), watch)
            finally:
                doorbell.close_all(watch)
    finally:
        if bell is not None:
            bell.close()
