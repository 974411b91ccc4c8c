"""Private runtime files are 0700/0600 whatever the umask: job folders (plan, prompt, transcript,
unredacted result) and the brain (its repository, lock files, the FTS index, the plain-text
cache, the agy-state data dir above it). Folders an older version made are tightened."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, submit
from memory_support import ok
from support import wait_until

from gitstate.memory.storage import packing
from gitstate.memory.storage.layout import brain_path
from gitstate.storage import private

__all__ = ["agents", "jobs_repo"]  # fixtures


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    """The usual umask, under which files are 0644 and folders 0755 unless made private."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _quiet(root: Path) -> None:
    """Wait (bounded) for a background repack of a brain under `root` to end: it holds
    `<brain>/agy/pack.lock` (memory/storage/packing.py) while its temporary packs come and go."""
    for lock_path in root.rglob(packing.LOCK_FILE):
        handle = os.open(lock_path, os.O_RDONLY)
        try:

            def free(handle: int = handle) -> bool:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return False
                fcntl.flock(handle, fcntl.LOCK_UN)
                return True

            wait_until(free, timeout=60)
        finally:
            os.close(handle)


def loose_modes(root: Path) -> list[str]:
    """Every folder or file under `root` (and root) that group or others can read."""
    _quiet(root)
    found = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            continue
        if mode & 0o077:
            found.append(f"{path.relative_to(root.parent)} {stat.filemode(mode)}")
    return found


def fill_brain(cli: Any) -> None:
    ok(cli("memory", "init"))
    ok(cli("memory", "add", "--layer", "knowledge", "the build uses make"))
    ok(cli("memory", "add", "--layer", "identity", "prefers short answers"))
    ok(cli("memory", "session", "--summary", "fixed the parser", "--project", "demo"))
    ok(cli("memory", "search", "parser"))


class TestBrain:
    def test_every_file_of_the_brain_is_private(self, cli: Any, tmp_path: Path) -> None:
        fill_brain(cli)
        brain = brain_path()
        assert (brain / "agy" / "cache" / "MEMORY.md").is_file()
        assert (brain / "agy" / "index.sqlite").is_file()
        assert loose_modes(brain) == []
        data_dir = brain.parent  # ${XDG_DATA_HOME}/agy-state
        assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700

    def test_what_sync_fetches_is_private(
        self, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        remote = tmp_path / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        monkeypatch.setenv("AGY_BRAIN", str(tmp_path / "other.git"))
        fill_brain(cli)
        ok(cli("memory", "sync", str(remote)))
        monkeypatch.delenv("AGY_BRAIN")
        ok(cli("memory", "init"))
        ok(cli("memory", "sync", str(remote)))
        assert loose_modes(brain_path()) == []

    def test_an_old_brain_is_tightened_on_the_next_write(self, cli: Any) -> None:
        fill_brain(cli)
        brain = brain_path()
        index = brain / "agy" / "index.sqlite"
        os.chmod(brain, 0o755)
        os.chmod(index, 0o644)
        ok(cli("memory", "add", "--layer", "knowledge", "tests run with pytest"))
        ok(cli("memory", "search", "pytest"))
        assert stat.S_IMODE(brain.stat().st_mode) == 0o700
        assert stat.S_IMODE(index.stat().st_mode) == 0o600

    def test_a_brain_in_a_new_folder_of_agy_brain(
        self, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("AGY_BRAIN", str(tmp_path / "new" / "brain.git"))
        fill_brain(cli)
        assert loose_modes(tmp_path / "new") == []

    def test_the_agent_hook_keeps_the_brain_private(self, repo: Repo, cli: Any) -> None:
        fill_brain(cli)
        payload = {"conversationId": "conv-1", "workspacePaths": [str(repo.path)]}
        proc = subprocess.run(
            [sys.executable, "-m", "gitstate", "hook", "inject"],
            cwd=repo.path,
            input=json.dumps({**payload, "invocationNum": 1}),
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert (brain_path() / "agy" / "injected").is_file()
        assert loose_modes(brain_path()) == []


class TestJobs:
    def test_a_job_folder_is_private(self, jobs_repo: Repo, agents: Agents, cli: Any) -> None:
        job = submit(cli, "Add a file")["job_id"]
        [row] = finish(cli, job)
        assert row["state"] == "done"
        root = jobs_repo.path / ".git" / "agy" / "jobs"
        folder = root / job
        for name in ("meta.json", "plan.md", "prompt.txt", "events.ndjson", "stderr.log"):
            assert (folder / name).is_file(), name
        assert (folder / "result.json").is_file()
        assert loose_modes(root) == []

    def test_an_old_jobs_folder_is_tightened_by_the_next_job(
        self, jobs_repo: Repo, agents: Agents, cli: Any
    ) -> None:
        root = jobs_repo.path / ".git" / "agy" / "jobs"
        root.mkdir(parents=True)
        os.chmod(root, 0o755)
        finish(cli, submit(cli, "Add a file")["job_id"])
        assert stat.S_IMODE(root.stat().st_mode) == 0o700


class TestPrimitives:
    def test_write_file_replaces_a_loose_file_with_a_private_one(self, tmp_path: Path) -> None:
        target = tmp_path / "f"
        target.write_text("old")
        os.chmod(target, 0o644)
        private.write_file(target, b"new")
        assert target.read_bytes() == b"new"
        assert stat.S_IMODE(target.stat().st_mode) == 0o600

    def test_make_dir_creates_missing_parents_private(self, tmp_path: Path) -> None:
        private.make_dir(tmp_path / "a" / "b" / "c")
        for folder in ("a", "a/b", "a/b/c"):
            assert stat.S_IMODE((tmp_path / folder).stat().st_mode) == 0o700

    def test_umask_is_restored(self) -> None:
        with private.Umask():
            assert os.umask(0o077) == 0o077
        assert os.umask(0o022) == 0o022
