"""The stop guard's read of the jobs folder (jobs/storage/probe.py:waiting) while a writer
replaces a meta.json: every job file is replaced by rename (jobs/storage/files.py), so a reader
that lstats the old file and opens the new one must read again, not take the job for missing
(docs/jobs.md). A real second process renames real files over the meta.json as fast as it can.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from gitstate.jobs.storage import probe
from gitstate.storage.layout import Layout

DONE = "j-20260102-030405-aaaa"
READS = 20000  # without the reread, 64 to 222 of them took the job for missing (4 runs)

# The writer: a new file written beside meta.json, then renamed over it, in a tight loop; it
# says "ready" once it has replaced the file, and stops when its stdin closes.
WRITER = textwrap.dedent(
    """
    import os, sys, threading
    folder, body = sys.argv[1], sys.argv[2].encode()
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    tmp, meta = os.path.join(folder, "meta.json.tmp"), os.path.join(folder, "meta.json")
    count = 0
    while not stop.is_set():
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, body)
        os.close(fd)
        os.replace(tmp, meta)
        count += 1
        if count == 1:
            print("ready", flush=True)
    print(count, flush=True)
    """
)


def test_a_meta_json_replaced_while_it_is_read_is_still_seen(tmp_path: Path) -> None:
    layout = Layout(None, tmp_path, tmp_path, None)
    folder = probe.root(layout) / DONE
    folder.mkdir(parents=True)
    body = json.dumps({"id": DONE, "state": "done"})
    (folder / "meta.json").write_text(body)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), body],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None
    try:
        assert writer.stdout.readline() == "ready\n"
        missed = sum(probe.waiting(layout) != [f"{DONE} (done)"] for _ in range(READS))
    finally:
        writer.stdin.close()
        replaced = int(writer.stdout.readline())
        writer.wait(timeout=30)
    assert writer.returncode == 0
    assert replaced > 0, (missed, replaced)
    assert missed == 0, (missed, replaced)
