"""One agent attempt (jobs/usecases/runner.py), with real agent processes: the output copied
line by line into events.ndjson and the result picked out however the writes are cut, the exit
seen at once (pidfd) or by looking every 50 ms (no pidfd), a pipe the agent closed early or a
process it left holding the pipe, the time limit, and an events file that cannot be opened.
All of it in the supervisor's one thread: no reader thread is started."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support import wait_until

from gitstate.jobs.usecases import runner

RESULT = '{"type": "result", "status": "SUCCESS", "response": "done", "conversation_id": "c-1"}'


def _starter(code: str, cwd: Path) -> Callable[[], subprocess.Popen[bytes]]:
    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-I", "-c", code],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )

    return start


def _attempt(tmp_path: Path, code: str, limit: float = 60.0) -> tuple[runner.Attempt, bytes]:
    events = tmp_path / "events.ndjson"
    attempt = runner.run_attempt(_starter(code, tmp_path), events, limit)
    assert attempt is not None
    return attempt, events.read_bytes() if events.exists() else b""


CUT_WRITES = f"""
import os, sys, time
text = b'{{"type": "init", "conversation_id": "c-0"}}\\n\\n   \\r\\n' + {RESULT.encode()!r} + b'\\r\\nlast'
for i in range(0, len(text), 7):
    os.write(1, text[i:i + 7])
    time.sleep(0.002)
"""


def test_lines_cut_across_writes_are_copied_whole(tmp_path: Path) -> None:
    attempt, events = _attempt(tmp_path, CUT_WRITES)
    assert attempt.exit_code == 0 and not attempt.timed_out
    assert events.split(b"\n") == [
        b'{"type": "init", "conversation_id": "c-0"}',
        RESULT.encode(),
        b"last",  # a last line without its newline still counts
        b"",
    ]
    assert attempt.outcome is not None and attempt.outcome.response == "done"
    assert attempt.conversation_id == "c-1"


def test_no_reader_thread_is_started(tmp_path: Path) -> None:
    seen: list[int] = []
    code = f"import time; time.sleep(0.2); print({RESULT!r}, flush=True)"
    done = threading.Event()

    def count() -> None:
        while not done.is_set():
            seen.append(threading.active_count())
            time.sleep(0.01)

    watcher = threading.Thread(target=count)
    watcher.start()
    try:
        attempt, _ = _attempt(tmp_path, code)
    finally:
        done.set()
        watcher.join()
    assert attempt.outcome is not None
    assert max(seen) == 2  # this test's thread and its watcher: nothing of the runner's


def test_a_long_line_in_many_reads(tmp_path: Path) -> None:
    code = "import os\nfor _ in range(256): os.write(1, b'x' * 4096)\nos.write(1, b'\\n')"
    attempt, events = _attempt(tmp_path, code)
    assert attempt.exit_code == 0
    assert events == b"x" * (256 * 4096) + b"\n"


def test_stdout_closed_early_then_the_exit(tmp_path: Path) -> None:
    code = f"import os, time; print({RESULT!r}, flush=True); os.close(1); time.sleep(0.3)"
    began = time.monotonic()
    attempt, events = _attempt(tmp_path, code)
    assert attempt.exit_code == 0 and attempt.outcome is not None
    assert time.monotonic() - began < runner.READER_JOIN  # the exit, not a timeout, ended it
    assert events == RESULT.encode() + b"\n"


def test_a_process_left_holding_the_pipe_is_ended(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
        f"print({RESULT!r}, flush=True)\n"
    )
    began = time.monotonic()
    attempt, _ = _attempt(tmp_path, code)
    assert attempt.exit_code == 0 and attempt.outcome is not None
    child = int(marker.read_text())
    assert time.monotonic() - began < 30  # not the 60 s the leftover would hold the pipe
    assert wait_until(lambda: not _running(child))  # ended (a zombie until someone reaps it)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def test_the_time_limit_ends_the_group(tmp_path: Path) -> None:
    code = f"import time; print({RESULT!r}, flush=True); time.sleep(60)"
    began = time.monotonic()
    attempt, events = _attempt(tmp_path, code, limit=0.5)
    assert attempt.timed_out
    assert attempt.exit_code is not None and attempt.exit_code < 0  # a signal ended it
    assert time.monotonic() - began < 30
    assert events == RESULT.encode() + b"\n"  # what it said before the limit is kept


def test_without_pidfds_the_exit_is_still_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "pidfd_open", raising=False)  # an older kernel or platform
    code = f"import time; time.sleep(0.1); print({RESULT!r}, flush=True); import os; os.close(1); time.sleep(0.2)"
    attempt, events = _attempt(tmp_path, code)
    assert attempt.exit_code == 0 and attempt.outcome is not None
    assert events == RESULT.encode() + b"\n"


def test_an_events_file_that_cannot_be_opened(tmp_path: Path) -> None:
    gone = tmp_path / "purged" / "events.ndjson"  # the job folder removed meanwhile
    code = "import os\nfor _ in range(64): os.write(1, b'y' * 4096 + b'\\n')\n" + (
        f"print({RESULT!r}, flush=True)"
    )
    attempt = runner.run_attempt(_starter(code, tmp_path), gone, 60.0)
    assert attempt is not None
    # 256 KiB is more than a pipe holds: the output was read (to nowhere), the agent not stuck
    assert attempt.exit_code == 0 and attempt.outcome is not None


def test_a_start_that_fails_or_is_cancelled(tmp_path: Path) -> None:
    def refused() -> subprocess.Popen[bytes]:
        raise FileNotFoundError(2, "No such file or directory", "agy")

    failed = runner.run_attempt(refused, tmp_path / "e", 1.0)
    assert failed is not None and failed.start_error is not None
    assert failed.start_error.startswith("cannot start the agent")
    assert runner.run_attempt(lambda: None, tmp_path / "e", 1.0) is None
