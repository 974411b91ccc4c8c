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


class _Reader:
    """Copies the agent's stdout line by line into events.ndjson and watches for results.

    Fed by run_attempt's own loop, not a thread of its own: the first thread a forked
    supervisor starts cost ≈ 2 ms of CPU and ≈ 80 page faults (the thread machinery set up
    again in the copy), more than the rest of the attempt's bookkeeping."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink
        self.pending: list[bytes] = []  # the start of a line whose end has not come yet
        self.outcome: Outcome | None = None
        self.conversation: str | None = None

    def feed(self, data: bytes) -> None:
        if b"\n" not in data:  # kept in pieces: a long line costs no copy per read
            self.pending.append(data)
            return
        first, *lines = data.split(b"\n")
        self.pending.append(first)
        lines.insert(0, b"".join(self.pending))
        self.pending = [lines.pop()]
        for line in lines:
            self._line(line)

    def close(self) -> None:
        """End of the output: a last line without its newline still counts."""
        pending, self.pending = b"".join(self.pending), []
        if pending:
            self._line(pending)

    def _line(self, raw: bytes) -> None:
        line = raw.rstrip(b"\r\n")
        if not line.strip():
            return
        self.sink.write(line + b"\n")
        self.sink.flush()
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
    assert proc.stdout is not None
    timed_out = False
    with _sink(events) as sink:
        reader = _Reader(sink)
        watch = _Watch(proc)
        try:
            timed_out = not watch.until_exit(reader, max(0.1, limit))
            if timed_out:
                lifecycle.end_group(proc.pid, grace=0.0)  # SIGTERM then SIGKILL: time is up
                proc.wait()
        finally:
            watch.close_pidfd()
            if proc.poll() is None:  # we are being torn down (SIGTERM): take the agent with us
                lifecycle.end_group(proc.pid, grace=LEFTOVER_GRACE)
                proc.wait()
        if lifecycle.group_alive(proc.pid):
            lifecycle.end_group(proc.pid, grace=LEFTOVER_GRACE)
        watch.drain(reader, READER_JOIN)  # what it wrote before its exit, to its end of file
        reader.close()
    proc.stdout.close()
    return Attempt(proc.returncode, timed_out, reader.outcome, reader.conversation)


def _sink(events: Path) -> Any:
    """events.ndjson to append to; /dev/null when it cannot be opened (the job folder gone):
    the agent's output must still be read, or it would block on a full pipe, unwatched."""
    try:
        return open(events, "ab")  # the caller's `with` closes it
    except OSError:
        return open(os.devnull, "ab")


class _Watch:
    """The agent's stdout and its exit, waited on together in one poll().

    The exit is a pidfd (Linux ≥ 5.3) that poll() reports the moment the agent exits, so the
    next job in the slot starts at once (Popen.wait with a timeout sleeps in steps of up to
    50 ms; docs/jobs.md). Without pidfds the loop looks at the agent every 50 ms, as that wait
    did."""

    STEP = 0.05  # without a pidfd: how often the agent is looked at

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.out: int | None = proc.stdout.fileno()
        opener = getattr(os, "pidfd_open", None)
        try:
            self.pidfd: int | None = opener(proc.pid) if opener is not None else None
        except OSError:  # no pidfds here (or gone already): the loop looks every STEP
            self.pidfd = None
        self.poller = select.poll()
        self.poller.register(self.out, select.POLLIN)
        if self.pidfd is not None:
            self.poller.register(self.pidfd, select.POLLIN)

    def until_exit(self, reader: _Reader, limit: float) -> bool:
        """Copy output until the agent exits (True: it did, and is reaped) or `limit` seconds
        pass (False)."""
        deadline = time.monotonic() + limit
        while True:
            if self.proc.poll() is not None:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            wait = left if self.pidfd is not None else min(left, self.STEP)
            for fd, _flags in self.poller.poll(wait * 1000):
                if fd == self.out:
                    self._read(reader)
                elif fd == self.pidfd:
                    self.close_pidfd()  # exited: poll() above reaps it

    def drain(self, reader: _Reader, limit: float) -> None:
        """The output left after the exit, until its end of file or `limit` seconds (a process
        the agent left behind may hold the pipe open: it was ended, but may not be gone)."""
        deadline = time.monotonic() + limit
        while self.out is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self.poller.poll(left * 1000):
                self._read(reader)

    def close_pidfd(self) -> None:
        if self.pidfd is not None:
            self.poller.unregister(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = None

    def _read(self, reader: _Reader) -> None:
        assert self.out is not None
        try:
            data = os.read(self.out, 65536)
        except BlockingIOError:
            return
        except OSError:  # the pipe is broken: nothing more will come from it
            data = b""
        if data:
            reader.feed(data)
        else:  # end of file: nobody holds the pipe's write end any more
            self.poller.unregister(self.out)
            self.out = None
