"""One attempt of an agent: start it in its own process group, stream its stdout into
events.ndjson, stop it at the deadline, and pick out its result line.

The agent is never left behind: on timeout its whole group gets SIGKILL, and whatever the group
still runs after the agent itself exits (a server it started, say) is ended too.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from gitstate.jobs.usecases import agents, lifecycle
from gitstate.jobs.usecases.agents import Outcome

READER_JOIN = 5.0
LEFTOVER_GRACE = 2.0


class Attempt(NamedTuple):
    exit_code: int | None  # None: never started (the agent CLI vanished)
    timed_out: bool
    outcome: Outcome | None  # the last result line, if any
    conversation_id: str | None  # from the result, or any earlier line naming one
    start_error: str | None = None


class _Reader(threading.Thread):
    """Copies the agent's stdout line by line into events.ndjson and watches for results."""

    def __init__(self, stream: Any, events: Path) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.events = events
        self.outcome: Outcome | None = None
        self.conversation: str | None = None

    def run(self) -> None:
        with open(self.events, "ab") as sink:
            for raw in self.stream:
                line = raw.rstrip(b"\r\n")
                if not line.strip():
                    continue
                sink.write(line + b"\n")
                sink.flush()
                self._look(line)

    def _look(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        found = agents.result_of(event)
        if found is not None:
            self.outcome = found
        conversation = (found.conversation_id if found else None) or agents.conversation_of(event)
        if conversation:
            self.conversation = conversation


def run_attempt(
    start: Callable[[], subprocess.Popen[bytes] | None], events: Path, limit: float
) -> Attempt | None:
    """Run one attempt; `start` spawns the agent (stdout piped, new session) or returns None
    when the job is no longer running (cancelled). Returns None in that case."""
    try:
        proc = start()
    except OSError as exc:
        return Attempt(None, False, None, None, start_error=f"cannot start the agent: {exc}")
    if proc is None:
        return None
    reader = _Reader(proc.stdout, events)
    reader.start()
    timed_out = False
    try:
        if not _wait_exit(proc, max(0.1, limit)):
            timed_out = True
            lifecycle.end_group(proc.pid, grace=0.0)  # SIGTERM then SIGKILL at once: time is up
            proc.wait()
    finally:
        if proc.poll() is None:  # we are being torn down (SIGTERM): take the agent with us
            lifecycle.end_group(proc.pid, grace=LEFTOVER_GRACE)
            proc.wait()
    if lifecycle.group_alive(proc.pid):
        lifecycle.end_group(proc.pid, grace=LEFTOVER_GRACE)
    reader.join(READER_JOIN)
    if proc.stdout is not None:
        proc.stdout.close()
    return Attempt(proc.returncode, timed_out, reader.outcome, reader.conversation)


def _wait_exit(proc: subprocess.Popen[bytes], limit: float) -> bool:
    """Wait up to `limit` seconds for the agent to exit; True when it did (and is reaped).

    Sleeps in poll() on a pidfd (Linux ≥ 5.3): Popen.wait(timeout) polls with sleeps growing to
    50 ms, each one a delay between an agent's exit and the next job's start (docs/jobs.md)."""
    opener = getattr(os, "pidfd_open", None)
    try:
        fd = opener(proc.pid) if opener is not None else None
    except OSError:  # no pidfds here (or gone already): Popen's own wait tells
        fd = None
    if fd is not None:
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            deadline = time.monotonic() + limit
            while not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
                if time.monotonic() >= deadline:
                    return proc.poll() is not None
        finally:
            os.close(fd)
    try:
        proc.wait(timeout=limit if fd is None else None)
    except subprocess.TimeoutExpired:
        return False
    return True
