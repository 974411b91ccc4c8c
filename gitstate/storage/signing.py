"""Signing snapshots the way git signs commits, and naming the user's own key (docs/sync.md).

Where `commit.gpgsign` is on, a snapshot is signed with the program git would run for
`gpg.format` (openpgp: `gpg.program`, default gpg; x509: `gpg.x509.program`, default gpgsm;
ssh: `gpg.ssh.program`, default ssh-keygen) and `user.signingkey`, with the arguments git
passes. Standard library only: the save path calls `sign` only when signing is on, so the
unsigned path runs no program at all.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from gitstate.errors import Failure

KEYS = (
    "commit.gpgsign",
    "gpg.format",
    "user.signingkey",
    "gpg.program",
    "gpg.openpgp.program",
    "gpg.x509.program",
    "gpg.ssh.program",
)
TRUE = frozenset({"true", "yes", "on", "1"})
TIMEOUT = 120.0


class Signer(NamedTuple):
    format: str  # openpgp, x509, ssh
    program: str
    key: str  # user.signingkey; for gpg, the committer's "Name <email>" when unset


def enabled(value: str | None) -> bool:
    return (value or "").strip().lower() in TRUE


def signer(values: Mapping[str, str], ident: str = "") -> Signer | None:
    """The signer git would use for a commit given these config values; None when
    `commit.gpgsign` is off. `ident` (`Name <email>`) is gpg's key when no key is set."""
    if not enabled(values.get("commit.gpgsign")):
        return None
    return key_of(values, ident)


def key_of(values: Mapping[str, str], ident: str = "") -> Signer:
    fmt = (values.get("gpg.format") or "openpgp").strip().lower()
    key = (values.get("user.signingkey") or "").strip()
    if fmt == "ssh":
        program = values.get("gpg.ssh.program") or "ssh-keygen"
        if not key:
            raise Failure(
                "commit.gpgsign is on with gpg.format=ssh, but user.signingkey is not set",
                hint="git config user.signingkey ~/.ssh/id_ed25519.pub",
            )
    elif fmt == "x509":
        program = values.get("gpg.x509.program") or "gpgsm"
    elif fmt == "openpgp":
        program = values.get("gpg.openpgp.program") or values.get("gpg.program") or "gpg"
    else:
        raise Failure(f"gpg.format is {fmt!r}", hint="git knows openpgp, x509 and ssh")
    return Signer(fmt, program, key or ident)


def _literal_ssh_key(key: str) -> str | None:
    """The public key itself when user.signingkey holds one (`key::…` or `ssh-…`), as git
    reads it; None when it names a file."""
    if key.startswith("key::"):
        return key[len("key::") :]
    if key.startswith(("ssh-", "ecdsa-", "sk-")):
        return key
    return None


def _run(args: list[str], payload: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            args,
            input=payload if payload is not None else b"",
            capture_output=True,
            check=False,
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Failure(f"cannot run {args[0]} to sign the snapshot: {exc}") from None


def sign(who: Signer, payload: bytes) -> str:
    """The detached, armored signature of `payload`, as git would make it for a commit."""
    if who.format == "ssh":
        return _sign_ssh(who, payload)
    proc = _run([who.program, "--status-fd=2", "-bsau", who.key], payload)
    if proc.returncode != 0 or b"\n[GNUPG:] SIG_CREATED " not in b"\n" + proc.stderr:
        raise Failure(
            f"{who.program} failed to sign the snapshot: {_last(proc.stderr)}",
            hint="git commit would fail the same way: check user.signingkey and gpg.program",
        )
    return proc.stdout.decode("ascii")


def _sign_ssh(who: Signer, payload: bytes) -> str:
    with tempfile.TemporaryDirectory(prefix="agy-sign-") as tmp:
        buffer = Path(tmp) / "buffer"
        buffer.write_bytes(payload)
        literal = _literal_ssh_key(who.key)
        if literal is not None:  # the key is in ssh-agent: name it by its public half
            keyfile = Path(tmp) / "key.pub"
            keyfile.write_text(literal + "\n")
            args = [who.program, "-Y", "sign", "-n", "git", "-f", str(keyfile), "-U"]
        else:
            args = [who.program, "-Y", "sign", "-n", "git", "-f", os.path.expanduser(who.key)]
        proc = _run([*args, str(buffer)])
        sig = buffer.with_name("buffer.sig")
        if proc.returncode != 0 or not sig.exists():
            raise Failure(
                f"{who.program} failed to sign the snapshot: {_last(proc.stderr)}",
                hint="git commit would fail the same way: check user.signingkey "
                "and gpg.ssh.program",
            )
        return sig.read_text()


def fingerprints(who: Signer) -> set[str]:
    """The fingerprints git prints as %GF for signatures by this key (primary and subkeys
    for gpg); empty when the key cannot be read."""
    if who.format == "ssh":
        literal = _literal_ssh_key(who.key)
        with tempfile.TemporaryDirectory(prefix="agy-key-") as tmp:
            path = os.path.expanduser(who.key)
            if literal is not None:
                path = str(Path(tmp) / "key.pub")
                Path(path).write_text(literal + "\n")
            proc = _run([who.program, "-l", "-f", path])  # as git asks it (`-lf`)
        parts = proc.stdout.decode("utf-8", "replace").split()
        return {parts[1]} if proc.returncode == 0 and len(parts) > 1 else set()
    proc = _run([who.program, "--batch", "--with-colons", "--fingerprint", who.key])
    found = set()
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        fields = line.split(":")
        if fields[0] == "fpr" and len(fields) > 9 and fields[9]:
            found.add(fields[9].upper())
    return found


def _last(stderr: bytes) -> str:
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"
