"""Snapshots are signed the way git signs commits, and agy.requireSigned (docs/sync.md).

Real keys (ssh-keygen, made in the test), real git verification (`git verify-commit`,
`%G?`/`%GF`), a real bare remote for the sync side.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from test_sync import (
    ON_REMOTE,
    USER,
    Machine,
    Net,
    net,
    start_task,
)

__all__ = ["net"]  # the fixture, shared with test_sync


def ssh_key(where: Path, name: str) -> Path:
    key = where / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return key


def sign_with_ssh(git: Any, key: Path, allowed: Path, email: str) -> None:
    """The configuration a user who signs commits with ssh has (git's own keys)."""
    with allowed.open("a") as out:
        out.write(f"{email} {key.with_suffix('.pub').read_text()}")
    git("config", "gpg.format", "ssh")
    git("config", "user.signingkey", str(key))
    git("config", "commit.gpgsign", "true")
    git("config", "gpg.ssh.allowedSignersFile", str(allowed))


def status(git: Any, rev: str = "refs/agy/state") -> tuple[str, str]:
    out: str = git("log", "-1", "--format=%G?%x00%GF", rev)
    mark, _, key = out.strip().partition("\0")
    return mark, key


def fingerprint(key: Path) -> str:
    out = subprocess.run(
        ["ssh-keygen", "-lf", str(key)], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    return out.split()[1]


# ---- the save path -------------------------------------------------------------------------------


def test_snapshots_are_signed_with_the_users_ssh_key(repo: Repo, cli: Any, tmp_path: Path) -> None:
    key = ssh_key(tmp_path, "me")
    repo.git("config", "user.email", "author@example.com")
    sign_with_ssh(repo.git, key, tmp_path / "allowed", "author@example.com")
    assert cli("patch", "--set", "goal=Signed work", "--todo", "first step").exit_code == 0
    repo.git("verify-commit", "refs/agy/state")
    assert status(repo.git) == ("G", fingerprint(key))
    repo.view.write_text(repo.view.read_text().replace("first step", "second step"))
    assert cli("save", "-m", "by hand").exit_code == 0
    assert status(repo.git) == ("G", fingerprint(key))


def test_gpg_ssh_program_is_honoured_and_nothing_runs_when_signing_is_off(
    repo: Repo, cli: Any, tmp_path: Path
) -> None:
    key = ssh_key(tmp_path, "me")
    sign_with_ssh(repo.git, key, tmp_path / "allowed", "author@example.com")
    log = tmp_path / "calls"
    wrapper = tmp_path / "keygen"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec ssh-keygen "$@"\n')
    wrapper.chmod(0o755)
    repo.git("config", "gpg.ssh.program", str(wrapper))
    assert cli("patch", "--set", "goal=Through the wrapper", "--todo", "a step").exit_code == 0
    assert "-Y sign -n git" in log.read_text()
    assert status(repo.git)[0] == "G"
    # Signing off: an unsigned snapshot, and the signing program is never started.
    repo.git("config", "commit.gpgsign", "false")
    log.unlink()
    assert cli("patch", "--todo", "another step").exit_code == 0
    assert not log.exists()
    assert status(repo.git)[0] == "N"


def test_a_signer_that_fails_writes_no_snapshot(repo: Repo, tmp_path: Path) -> None:
    from support import run_tool

    repo.git("config", "gpg.format", "ssh")
    repo.git("config", "user.signingkey", str(tmp_path / "no-such-key"))
    repo.git("config", "commit.gpgsign", "true")
    proc = run_tool("patch", "--set", "goal=x", "--todo", "y", cwd=repo.path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error:") and "Traceback" not in proc.stderr
    assert "sign" in proc.stderr
    assert repo.ref() is None


# ---- agy.requireSigned ------------------------------------------------------------------------------


def _synced(machine: Machine) -> tuple[int, dict[str, Any], list[str]]:
    proc = machine.run("sync", "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    return proc.returncode, json.loads(proc.stdout), warnings


def test_require_signed_refuses_unsigned_and_foreign_signed_updates(
    net: Net, tmp_path: Path
) -> None:
    mine, other = ssh_key(tmp_path, "me"), ssh_key(tmp_path, "other")
    allowed = tmp_path / "allowed"
    a = net.clone("a")
    sign_with_ssh(a.git, mine, allowed, "author@example.com")
    a.git("config", "agy.requireSigned", "true")
    start_task(a)
    a.sync()
    tip = a.tip()
    assert status(a.git)[0] == "G"

    def elsewhere(name: str, key: Path | None, line: str) -> None:
        """Another clone of yours (same identity) adds a snapshot on top of `tip`."""
        a.git("push", "-q", "-f", "origin", f"{tip}:{ON_REMOTE}")
        other_machine = net.clone(name)
        if key is not None:
            sign_with_ssh(other_machine.git, key, allowed, "author@example.com")
        other_machine.sync()
        other_machine.ok("patch", "--add", f"key_data=- {line}")
        other_machine.sync()

    elsewhere("b", None, "unsigned")
    code, report, warnings = _synced(a)
    assert code == 1
    assert [s["ref"] for s in report["skipped"]] == [f"refs/agy-remotes/origin/users/{USER}/state"]
    assert len(warnings) == 1 and "signature" in warnings[0], warnings
    assert a.ref() == tip
    # Signed by a key that is not user.signingkey (git itself calls it good): refused too.
    elsewhere("c", other, "signed by another key")
    code, report, warnings = _synced(a)
    assert code == 1 and len(warnings) == 1 and fingerprint(other) in warnings[0], warnings
    assert a.ref() == tip
    # Signed with your key (your other machine): taken.
    elsewhere("d", mine, "signed by me elsewhere")
    code, report, warnings = _synced(a)
    assert code == 0, warnings
    assert report["chains"][0]["action"] == "fast-forward"
    assert "signed by me elsewhere" in a.view.read_text()
    assert status(a.git)[0] == "G"
    # Diverged: the merge commit sync writes is signed too, so your other machines take it.
    d = Machine(net.root / "d")
    d.git("config", "agy.requireSigned", "true")
    a.ok("patch", "--add", "open_issues=from A")
    d.ok("patch", "--add", "open_issues=from D")
    d.sync()
    code, report, warnings = _synced(a)
    assert code == 0 and report["chains"][0]["action"] == "merged", warnings
    assert len(a.parents()) == 2 and status(a.git) == ("G", fingerprint(mine))
    code, report, warnings = _synced(d)
    assert code == 0 and report["chains"][0]["action"] == "fast-forward", warnings


def test_snapshots_are_signed_with_gpg_as_the_committer(
    repo: Repo, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    try:
        subprocess.run(
            [
                *("gpg", "--batch", "--passphrase", "", "--quick-gen-key"),
                *("A U Thor <author@example.com>", "ed25519", "sign", "never"),
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        listing = subprocess.run(
            ["gpg", "--with-colons", "--fingerprint", "author@example.com"],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        fpr = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr"))
        repo.git("config", "commit.gpgsign", "true")  # no user.signingkey: the committer's key
        assert cli("patch", "--set", "goal=Signed with gpg", "--todo", "a step").exit_code == 0
        repo.git("verify-commit", "refs/agy/state")
        assert status(repo.git) == ("G", fpr)
    finally:
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], capture_output=True, timeout=60)
