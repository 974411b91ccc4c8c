"""Talking to a remote: fetch, push and ls-remote, through the `git` command. Standard library only.

The network always goes through git, so that users' credentials, ssh config and proxies just
work (docs/sync.md). Use cases ask by intent and get plain values back; the command lines, the
porcelain parsing and the redaction of a remote's user-info (`user:TOKEN@`, docs/security.md)
in what a failure says live here. `--` stands before every positional argument, so a remote
is never read as an option; the use cases refuse one that looks like it before it is written
anywhere (gitcli.refuse_option_like).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from gitstate.errors import Failure
from gitstate.storage import gitcli, remote_url
from gitstate.storage.layout import Layout

_HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_PORCELAIN_RE = re.compile(r"^(.)\t([^:\t]*):([^\t]+)\t(.*)$")
# Never ask for a password on a terminal: a hook or a sync must not hang on a prompt.
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0"}
# Our own push runs no pre-push hook of ours again (`--no-verify`), and a hook git runs for it
# anyway (reference-transaction…) knows it is inside one of ours.
_IN_HOOK = {"AGY_STATE_IN_HOOK": "1"}


class TimedOut(Failure):
    """git took longer than the caller allowed and was stopped."""


class Private(NamedTuple):
    """A repository without a Layout (the brain: a git dir of its own, docs/memory.md) whose
    files stay its owner's: git runs there with umask 0o077."""

    path: Path


Where = Layout | Private


def _git(
    where: Where, *args: str, env: dict[str, str], timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    if isinstance(where, Private):
        return gitcli.run_in(where.path, where.path, *args, env=env, timeout=timeout, umask=0o077)
    return gitcli.run(where, *args, env=env, timeout=timeout)


def _failure(verb: str, remote: str, stderr: str) -> Failure:
    """`git VERB <remote> failed: <why>`, with the remote's user-info dropped from both."""
    shown = remote_url.public(remote)
    why = gitcli.error_line(stderr).replace(remote, shown)
    return Failure(f"git {verb} {shown} failed: {why}")


def fetch(
    where: Where, remote: str, specs: Sequence[str], *, prune: bool = True, prompt: bool = True
) -> None:
    """`git fetch` the refspecs from `remote`, pruning what it no longer has unless `prune` is
    False; no tags besides those the specs name; `prompt=False`: never ask for a password.
    Raises Failure in git's words (the remote redacted)."""
    options = ("--quiet", "--no-tags", *(("--prune",) if prune else ()))
    env = {} if prompt else _NO_PROMPT
    proc = _git(where, "fetch", *options, "--", remote, *specs, env=env)
    if proc.returncode != 0:
        raise _failure("fetch", remote, proc.stderr)


def ls_remote(where: Where, remote: str, timeout: float | None = None) -> dict[str, str]:
    """{ref: object id} of what `remote` has now (peeled tags as `<tag>^{}` too). Never prompts;
    raises TimedOut after `timeout` seconds, Failure when git fails."""
    try:
        proc = _git(where, "ls-remote", "--", remote, env=_NO_PROMPT, timeout=timeout)
    except subprocess.TimeoutExpired:
        shown = remote_url.public(remote)
        raise TimedOut(f"git ls-remote {shown} took longer than {timeout:.0f}s") from None
    if proc.returncode != 0:
        raise _failure("ls-remote", remote, proc.stderr)
    found = {}
    for line in proc.stdout.splitlines():
        oid, _, name = line.partition("\t")
        if name and _HEX.match(oid):
            found[name] = oid
    return found


class PushedRef(NamedTuple):
    """One ref of `git push --porcelain`: its flag (` ` fast-forward, `*` new, `=` up to date,
    `!` rejected…), the local and remote ref, and git's summary (`[rejected] (fetch first)`)."""

    flag: str
    src: str
    dst: str
    summary: str


class Push(NamedTuple):
    code: int  # git's exit code
    refs: list[PushedRef]  # what git said of each ref
    output: str  # git's stdout and stderr as it printed them, stripped
    stderr: str

    def failure(self, remote: str) -> Failure:
        """`git push <remote> failed: <why>`, the remote redacted."""
        return _failure("push", remote, self.stderr)


def push(
    where: Where,
    remote: str,
    specs: Sequence[str],
    *,
    prompt: bool = True,
    timeout: float | None = None,
) -> Push:
    """`git push` the refspecs to `remote` without our pre-push hook, never forcing (a spec
    with `+` is the caller's to avoid). `prompt=False`: never ask for a password. Raises
    TimedOut after `timeout` seconds; a push git refuses is in the result, not raised."""
    env = _IN_HOOK if prompt else {**_NO_PROMPT, **_IN_HOOK}
    try:
        proc = _git(
            where,
            "push",
            "--porcelain",
            "--no-verify",
            "--",
            remote,
            *specs,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise TimedOut(f"git push took longer than {timeout:.0f}s and was stopped") from None
    refs = []
    for line in proc.stdout.splitlines():
        match = _PORCELAIN_RE.match(line)
        if match is not None:
            refs.append(PushedRef(*match.groups()))
    return Push(proc.returncode, refs, (proc.stdout + proc.stderr).strip(), proc.stderr)
