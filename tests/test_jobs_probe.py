"""The jobs folder's light reads (jobs/storage/probe.py), which the stop guard and the jobs'
own files share: the folders that are jobs, a live supervisor's lock, what waits to be
harvested. Real folders and a real flock held by this process."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.storage import probe
from gitstate.storage.layout import Layout

DONE = "j-20260102-030405-aaaa"
RUNNING = "j-20260102-030405-bbbb"
ORPHAN = "j-20260102-030405-cccc"
HARVESTED = "j-20260102-030405-dddd"


def _layout(common: Path) -> Layout:
    return Layout(None, common, common, None)


def _job(layout: Layout, job_id: str, **meta: object) -> Path:
    folder = probe.root(layout) / job_id
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"id": job_id, **meta}))
    return folder


def test_only_job_shaped_folders_are_jobs(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    assert probe.job_names(layout) == [] and probe.waiting(layout) == []
    _job(layout, DONE, state="done")
    for stray in ("j-1", ".j-20260102-030405-aaaa", "notes"):
        _job(layout, stray, state="done")
    (probe.root(layout) / "j-20260102-030405-eeee").mkdir()  # no meta.json yet
    assert probe.job_names(layout) == [DONE, "j-20260102-030405-eeee"]
    assert jobfiles.list_ids(layout) == [DONE]
    assert probe.waiting(layout) == [f"{DONE} (done)"]


def test_waiting_asks_the_lock_only_of_an_active_job(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    _job(layout, DONE, state="done")
    _job(layout, HARVESTED, state="done", harvested_at="2026-01-02T03:04:05Z")
    running = _job(layout, RUNNING, state="running")
    _job(layout, ORPHAN, state="running")  # its supervisor is gone: no one holds the lock
    fd = os.open(running / "supervisor.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert probe.lock_held(running / "supervisor.lock")
        assert jobfiles.supervisor_alive(jobfiles.files(layout, RUNNING))
        assert probe.waiting(layout) == [f"{DONE} (done)", f"{ORPHAN} (interrupted)"]
    finally:
        os.close(fd)
    assert not probe.lock_held(running / "supervisor.lock")
    assert not probe.lock_held(tmp_path / "no-such.lock")
    assert f"{RUNNING} (interrupted)" in probe.waiting(layout)


def test_a_meta_that_is_no_regular_json_file_is_left_out(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    _job(layout, DONE, state="done")
    broken = probe.root(layout) / RUNNING
    broken.mkdir()
    (broken / "meta.json").write_text("{not json")
    fifo = probe.root(layout) / ORPHAN
    fifo.mkdir()
    os.mkfifo(fifo / "meta.json")  # read never blocks on it
    (probe.root(layout) / HARVESTED).mkdir()
    (probe.root(layout) / HARVESTED / "meta.json").write_text('"done"')  # JSON, not an object
    assert probe.waiting(layout) == [f"{DONE} (done)"]
