"""A background job's runtime folder, `<commondir>/agy/jobs/<id>/`, and the queue's files.

Every file is replaced atomically (a temporary file, then rename), so a reader never sees half a
meta.json. The folders hold the plan, the prompt, the agent's transcript and its unredacted
result: they are private, 0700 and 0600 whatever the umask (storage/private.py, docs/jobs.md).
The supervisor of a job holds an flock on `supervisor.lock` in its folder for as long as it
lives: the kernel drops it when the process dies (or turns zombie), which is how any reader tells
a live job from an orphaned one (the probe, and the scan of the folder, are probe.py's: the stop
guard uses them too). Standard library only; no job logic here.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from gitstate.errors import UsageError, WorkAtRisk
from gitstate.jobs.storage import probe
from gitstate.jobs.storage.probe import JOB_ID_RE
from gitstate.storage import private
from gitstate.storage.layout import Layout

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
META_VERSION = 1
READ_LIMIT = 16 * 1024 * 1024  # a meta.json or result.json larger than this is not read
QUEUE_LOCK_WAIT = 60.0
LOCK_NAME = "supervisor.lock"


class JobFiles(NamedTuple):
    """The paths of one job's runtime files."""

    dir: Path

    @property
    def id(self) -> str:
        return self.dir.name

    @property
    def meta(self) -> Path:
        return self.dir / "meta.json"

    @property
    def plan(self) -> Path:
        return self.dir / "plan.md"

    @property
    def prompt(self) -> Path:
        return self.dir / "prompt.txt"

    @property
    def schema(self) -> Path:
        return self.dir / "schema.json"

    @property
    def events(self) -> Path:
        return self.dir / "events.ndjson"

    @property
    def stderr(self) -> Path:
        return self.dir / "stderr.log"

    @property
    def result(self) -> Path:
        return self.dir / "result.json"

    @property
    def lock(self) -> Path:
        return self.dir / LOCK_NAME


def jobs_root(layout: Layout) -> Path:
    return probe.root(layout)


def queue_dir(layout: Layout) -> Path:
    """Where waiting processes keep their doorbells (see jobs/storage/doorbell.py)."""
    return layout.common_agy_dir / "queue"


def queue_lock_path(layout: Layout) -> Path:
    return layout.common_agy_dir / "queue.lock"


def check_id(job_id: str) -> str:
    """The id itself when it has the job id shape; a usage error otherwise (no path tricks)."""
    if not JOB_ID_RE.match(job_id):
        raise UsageError(
            f"{job_id!r} is not a job id",
            hint="job ids look like j-YYYYMMDD-HHMMSS-xxxx (git agy-state job list)",
        )
    return job_id


def files(layout: Layout, job_id: str) -> JobFiles:
    return JobFiles(jobs_root(layout) / check_id(job_id))


def new_job(layout: Layout, now: float | None = None) -> JobFiles:
    """Create a fresh job folder named `j-YYYYMMDD-HHMMSS-xxxx` (UTC); never reuses one."""
    root = private.make_dir(jobs_root(layout))  # also tightens a root an older version made
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    while True:
        # os.urandom, not the secrets module: its import (hmac, random) is paid by every
        # process that loads this one, the supervisors included. The id needs no secrecy.
        suffix = "".join(_ALPHABET[byte % len(_ALPHABET)] for byte in os.urandom(4))
        folder = root / f"j-{stamp}-{suffix}"
        try:
            os.mkdir(folder, private.DIR_MODE)
        except FileExistsError:
            continue
        job = JobFiles(folder)
        for log in (job.events, job.stderr):  # others open these to append: private first
            private.create_file(log)
        return job


def read_metas(layout: Layout) -> list[Any]:
    """Every job folder's parsed meta.json (None for one that is missing or unreadable), by
    folder name. Each queue count reads them all, so the paths are joined as strings and the
    read itself tells a missing file (no stat first)."""
    root = probe.root_dir(layout)
    return [read_json(os.path.join(root, name, "meta.json")) for name in probe.job_names(layout)]


def list_ids(layout: Layout) -> list[str]:
    root = jobs_root(layout)
    return [n for n in probe.job_names(layout) if (root / n / "meta.json").exists()]


# ---- atomic files -------------------------------------------------------------------------


def write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` atomically for concurrent readers. Not fsync'ed (as git does not fsync
    its refs by default): after a power cut a job at worst reads as interrupted."""
    private.write_file(path, data)


_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def dumps_pretty(value: Any) -> str:
    """`value` as JSON with a dict's top-level keys one per line (two-space indent) and each
    value on one line. json.dumps with indent runs Python's pure-Python encoder (the C encoder
    only serves indent=None): ~0.1-0.2 ms per meta.json write, 4+ writes per job; this keeps
    a readable layout with the C encoder (docs/jobs.md)."""
    if not isinstance(value, dict) or not value:
        return _ENCODE(value)
    lines = [f"  {_ENCODE(str(key))}: {_ENCODE(item)}" for key, item in value.items()]
    return "{\n" + ",\n".join(lines) + "\n}"


def write_json(path: Path, value: Any) -> None:
    write_bytes(path, (dumps_pretty(value) + "\n").encode())


def read_json(path: Path | str) -> Any:
    """The parsed file, or None when it is missing, not JSON, nested deeper than Python's stack,
    over READ_LIMIT or no regular file: read non-blocking and bounded, so a FIFO or device put
    in a job folder cannot hang a reader (storage/view.py:read_regular; docs/jobs.md)."""
    data = probe.read_bytes(path, READ_LIMIT + 1)
    if data is None or len(data) > READ_LIMIT:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def read_text(path: Path, limit: int = READ_LIMIT) -> str:
    """At most `limit` bytes of a job file as text ("" when it is missing, unreadable or no
    regular file): never blocking on a FIFO put in a job folder (storage/view.py)."""
    return (probe.read_bytes(path, limit) or b"").decode("utf-8", errors="replace")


def append_line(path: Path, line: str) -> None:
    fd = private.open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with open(fd, "a", encoding="utf-8") as handle:
        handle.write(line.rstrip("\n") + "\n")


def append_event(path: Path, event: dict[str, Any]) -> None:
    append_line(path, json.dumps(event, ensure_ascii=False))


# ---- locks --------------------------------------------------------------------------------


@contextlib.contextmanager
def queue_locked(layout: Layout, wait: float = QUEUE_LOCK_WAIT) -> Iterator[None]:
    """The one lock under which job states and queue slots change (held for milliseconds).

    A contended lock is waited for with a blocking flock, not a sleep loop: the next holder
    gets it the moment it is released (this is on the queue's hand-off path)."""
    path = queue_lock_path(layout)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, private.FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        fd = _blocking_flock(path, wait)
    try:
        yield
    finally:
        os.close(fd)


def _blocking_flock(path: Path, wait: float) -> int:
    """An fd holding `path`'s flock, waited for in a helper thread so that the wait can time
    out (a blocking flock cannot); a lock won after we gave up is released at once."""
    won = threading.Event()
    guard = threading.Lock()
    box: dict[str, Any] = {"fd": None, "abandoned": False}

    def take() -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, private.FILE_MODE)
        fcntl.flock(fd, fcntl.LOCK_EX)  # releases the GIL while it blocks
        with guard:
            if box["abandoned"]:
                os.close(fd)
                return
            box["fd"] = fd
        won.set()

    threading.Thread(target=take, name="queue-lock", daemon=True).start()
    try:
        won.wait(wait)
    except BaseException:  # interrupted while waiting: never leave a lock held behind
        with guard:
            box["abandoned"] = True
            if box["fd"] is not None:
                os.close(box["fd"])
        raise
    with guard:
        fd = box["fd"]
        box["abandoned"] = fd is None
    if fd is None:
        raise WorkAtRisk(
            f"another git agy-state has held {path} for {wait:.0f}s",
            hint="a job process may be stuck; git agy-state job list shows them",
        )
    assert isinstance(fd, int)
    return fd


def take_supervisor_lock(job: JobFiles, wait: float = 30.0) -> int:
    """An fd holding the job's supervisor flock; handed to the supervisor process at spawn.

    Waits for a previous round's supervisor to finish exiting (it holds the lock until then)."""
    fd = os.open(job.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, private.FILE_MODE)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise WorkAtRisk(
                    f"the supervisor of {job.id} is still running",
                    hint="wait for it to exit, or git agy-state job cancel " + job.id,
                ) from None
            time.sleep(0.01)


def supervisor_alive(job: JobFiles) -> bool:
    """Whether some process holds the job's supervisor lock (probe.lock_held)."""
    return probe.lock_held(job.lock)


def lock_held(layout: Layout, job_id: str) -> bool:
    """supervisor_alive for a job named by its id, the path joined as a string (the queue's
    counts probe every active job each time)."""
    return probe.lock_held(os.path.join(probe.root_dir(layout), check_id(job_id), LOCK_NAME))


def next_sequence(layout: Layout) -> int:
    """A counter that orders submissions made in the same instant; call under the queue lock."""
    path = layout.common_agy_dir / "queue.seq"
    try:
        current = int(path.read_text().strip() or "0")
    except (OSError, ValueError):
        current = 0
    write_bytes(path, f"{current + 1}\n".encode())
    return current + 1
