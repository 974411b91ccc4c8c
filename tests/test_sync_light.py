"""sync proves a chain's tip sound before a push without pygit2 when the ref plainly names a
whole loose commit (storage/view.py:names_loose_commit); anything else goes to Store.tip, which
names what is wrong (docs/exit-codes.md). The proof is tried here on real objects, good and
damaged, and the whole sync is watched from outside for its imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

from conftest import Repo

from gitstate.storage import view
from gitstate.storage.layout import discover

STATE = "refs/agy/state"


def chain(cli: Any) -> None:
    for args in (("--set", "goal=ship it", "--todo", "write it"), ("--start", "1")):
        assert cli("patch", *args).exit_code == 0


def loose_path(repo: Repo, oid: str) -> Path:
    return repo.path / ".git" / "objects" / oid[:2] / oid[2:]


def test_a_loose_commit_is_proven_and_nothing_else_is(repo: Repo, cli: Any) -> None:
    chain(cli)
    layout = discover(repo.path)
    assert layout is not None
    tip = repo.git("rev-parse", STATE).strip()
    assert view.names_loose_commit(layout, STATE, tip)
    assert not view.names_loose_commit(layout, STATE, "0" * 40)  # the ref names another
    blob = repo.git("rev-parse", "HEAD:README").strip()
    repo.git("update-ref", "refs/agy/blobbed", blob)
    assert not view.names_loose_commit(layout, "refs/agy/blobbed", blob)
    repo.git("symbolic-ref", "refs/agy/pointing", STATE)
    assert not view.names_loose_commit(layout, "refs/agy/pointing", tip)
    # A loose file cut short, or with bytes after its stream, proves nothing.
    path = loose_path(repo, tip)
    whole = path.read_bytes()
    os.chmod(path, 0o644)
    for damaged in (whole[:-3], whole + b"extra", zlib.compress(b"commit 999\0tree x\n")):
        path.write_bytes(damaged)
        assert not view.names_loose_commit(layout, STATE, tip)
    path.write_bytes(whole)
    assert view.names_loose_commit(layout, STATE, tip)
    # Packed (after gc) it is no longer loose: Store.tip decides then.
    repo.git("gc", "-q", "--prune=now")
    assert not path.exists()
    assert not view.names_loose_commit(layout, STATE, tip)


def test_a_plain_sync_loads_no_pygit2(repo: Repo, cli: Any, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("config", "user.email", "me@example.com")
    chain(cli)
    # With site (click is there); no .pth of an editable install imports pygit2.
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitstate", "sync", "--json"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + "\n".join(
        line for line in proc.stderr.splitlines() if not line.startswith("import time:")
    )
    assert json.loads(proc.stdout)  # it synced
    pushed = subprocess.run(
        ["git", "--git-dir", str(remote), "for-each-ref", "--format=%(refname)", "refs/agy/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert pushed, "nothing reached the remote"
    modules = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "gitstate.usecases.sync.run" in modules  # the probe itself works
    assert not {m for m in modules if m.split(".")[0] == "pygit2"}
