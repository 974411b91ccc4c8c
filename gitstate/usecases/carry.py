"""Carrying the agy refs to a remote with plain `git push`, fast-forward only (DESIGN.md §9).

What travels: this person's state chains as `refs/agy/users/<user>/…`, archives, job records,
the decision notes and checkpoint tags. The network goes through the `git` command so users'
credentials, ssh config and proxies just work. Used by the pre-push hook; sync builds on it.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable

from gitstate.storage import gitcli
from gitstate.usecases.workspace import Workspace

DECISIONS_REF = "refs/notes/agy/decisions"
_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]")


def user_slug(value: str) -> str | None:
    """A person's name for refs: lower-cased, safe characters only, always a valid ref part."""
    slug = _SLUG_BAD.sub("-", value.strip().lower())
    while ".." in slug:
        slug = slug.replace("..", ".")
    slug = slug.lstrip(".")
    # Until neither is left: dropping a trailing `.` can uncover a `.lock` (`x.lock.`).
    while slug.endswith((".lock", ".")):
        slug = slug.removesuffix(".lock").rstrip(".")
    return slug or None


def agy_user(ws: Workspace) -> str | None:
    """`agy.user`, else a slug of `user.email` (DESIGN.md §9).

    Not GIT_AUTHOR_EMAIL: git sets it for hooks to the author of the commit at hand (`git commit
    --author=…`), and a shell may set it for one command; the name of a person's chain on the
    remote must not change with either.
    """
    values = gitcli.config(ws.layout, "agy.user", "user.email")
    if values.get("agy.user"):
        return user_slug(values["agy.user"])
    email = values.get("user.email")
    return user_slug(email) if email else None


def travelling(ws: Workspace) -> list[str]:
    """The local refs that may travel (asked of git: no pygit2 needed to decide a push)."""
    return sorted(gitcli.refs(ws.layout, "refs/agy", "refs/tags/checkpoint-*", DECISIONS_REF))


def refspecs(names: Iterable[str], user: str | None) -> list[str]:
    """`src:dst` pairs for every ref that travels; no `+`: a push never forces."""
    specs = []
    for name in sorted(names):
        if not (name.startswith(("refs/agy/", "refs/tags/checkpoint-")) or name == DECISIONS_REF):
            continue
        if name.startswith("refs/agy/users/"):
            continue  # a fetched copy of someone's chain is not ours to push
        if name == "refs/agy/state" or (
            name.startswith("refs/agy/wt/") and name.endswith("/state")
        ):
            if user is None:
                continue
            rest = name[len("refs/agy/") :]
            specs.append(f"{name}:refs/agy/users/{user}/{rest}")
        else:
            specs.append(f"{name}:{name}")
    return specs


def push_along(ws: Workspace, remote: str, timeout: float) -> tuple[int, str]:
    """Push what travels to `remote`; returns (git's exit code, its output). Never prompts."""
    user = agy_user(ws)
    specs = refspecs(travelling(ws), user)
    if not specs:
        return 0, "nothing to carry"
    try:
        proc = gitcli.run(
            ws.layout,
            "push",
            "--no-verify",
            "--porcelain",
            remote,
            *specs,
            env={"GIT_TERMINAL_PROMPT": "0", "AGY_STATE_IN_HOOK": "1"},
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return 124, f"git push took longer than {timeout:.0f}s and was stopped"
    note = "" if user else "\n(no agy.user or user.email: state chains were not carried)"
    return proc.returncode, (proc.stdout + proc.stderr).strip() + note
