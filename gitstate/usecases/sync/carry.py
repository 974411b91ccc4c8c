"""What of ours may travel, to which remote, and when (docs/sync.md, "What is pushed where").

Only to the agy remote (`agy.remote`, set by `remote setup`), and only this person's own refs:
their state chains as `refs/agy/users/<user>/…`, the archives and job records they committed,
the decision notes, and the checkpoint tags they tagged (`Agy-State:` in the message) whose
commit that remote already has or is being sent. Refs received from teammates never travel on.
Ownership is read with `git for-each-ref` (a fixed number of git calls, whatever the length of
the history); the network goes through the `git` command so credentials, ssh config and proxies
just work. Used by the pre-push hook, after the user's push really happened, and by sync.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from gitstate.errors import Failure
from gitstate.storage import abbrev, gitcli, network
from gitstate.storage.layout import DECISIONS_REF
from gitstate.usecases.workspace import Workspace

AGY_REMOTE = "agy.remote"
STATE_TRAILER = "Agy-State"
ZERO = "0" * 40
_SLUG_BAD = re.compile(r"[^A-Za-z0-9._-]")
_HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
MAX_PUSH_LINES = 10_000  # pre-push's stdin: one line per ref the user pushes


# ---- who ------------------------------------------------------------------------------------


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
    """`agy.user`, else a slug of `user.email` (docs/sync.md).

    Not GIT_AUTHOR_EMAIL: git sets it for hooks to the author of the commit at hand (`git commit
    --author=…`), and a shell may set it for one command; the name of a person's chain on the
    remote must not change with either.
    """
    values = gitcli.config(ws.layout, "agy.user", "user.email")
    if values.get("agy.user"):
        return user_slug(values["agy.user"])
    email = values.get("user.email")
    return user_slug(email) if email else None


def no_name(ws: Workspace) -> tuple[str, str]:
    """Why agy_user gave no name, and what to do: (message, hint). A set agy.user that gives no
    name is refused, never passed over for user.email (the chain would travel under a name the
    user did not choose)."""
    values = gitcli.config(ws.layout, "agy.user", "user.email")
    hint = "git config agy.user NAME (letters, digits, '.', '_', '-'; docs/sync.md)"
    for key in ("agy.user", "user.email"):
        given = values.get(key)
        if given:
            return f"{key} {given!r} gives no usable name (dots and spaces alone make none)", hint
    return "neither agy.user nor user.email is set", (
        "git config user.email you@example.com (or git config agy.user NAME)"
    )


def committer_emails(user_email: str | None) -> frozenset[str]:
    """The addresses this person commits and tags as, lower-cased: `user.email`, and
    GIT_COMMITTER_EMAIL when set (git, and our own writer, put it first).

    The one rule for "you" (docs/sync.md, "What is pushed where"). Sync's "Whose chain"
    (trust.trust_of) starts from it and widens it on purpose, for what comes in only: it also
    counts GIT_AUTHOR_EMAIL, since a snapshot's author is checked there and git writes that
    variable into it, and an address whose slug is the agy.user name (your other machine). What
    goes out is judged by a committer or a tagger alone, which the author variable never sets,
    and the slug would let a teammate's archive travel under your authority: neither belongs
    here."""
    found = (user_email, os.environ.get("GIT_COMMITTER_EMAIL"))
    return frozenset(e.strip().lower() for e in found if e and e.strip())


def own_emails(ws: Workspace) -> frozenset[str]:
    """committer_emails with this repository's user.email. A ref committed or tagged by anyone
    else is not theirs to carry."""
    return committer_emails(gitcli.config(ws.layout, "user.email").get("user.email"))


# ---- where ----------------------------------------------------------------------------------


def team_remote(ws: Workspace) -> str | None:
    """`agy.remote`: the one remote this person's refs travel to (None: not set, or unusable)."""
    value = gitcli.config(ws.layout, AGY_REMOTE).get(AGY_REMOTE, "").strip()
    if not value or value.startswith("-"):
        return None
    return value


def _local_dir(ws: Workspace, url: str) -> Path | None:
    if "://" in url and not url.startswith("file://"):
        return None
    path = url.removeprefix("file://")
    if ":" in path.split("/", 1)[0]:
        return None  # scp-like host:path
    base = ws.layout.workdir or ws.layout.commondir
    try:
        return (base / path).resolve()
    except (OSError, RuntimeError):
        return None


def goes_to(ws: Workspace, team: str, remote_arg: str, url: str | None) -> bool:
    """Does a push to `remote_arg` (pre-push's $1: a remote's name or a URL; $2: the URL) go to
    the agy remote `team`? By name, else by URL."""
    if remote_arg == team:
        return True
    if remote_arg in gitcli.remotes(ws.layout):
        return False  # another configured remote, whatever its URL
    urls = gitcli.remote_urls(ws.layout, team)
    given = {u for u in (remote_arg, url) if u}
    if urls & given:
        return True
    dirs = {d for d in (_local_dir(ws, u) for u in urls) if d is not None}
    return any(_local_dir(ws, u) in dirs for u in given)


# ---- when -----------------------------------------------------------------------------------


class PushLine(NamedTuple):
    """One line of pre-push's stdin: `<local ref> <local sha> <remote ref> <remote sha>`."""

    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str

    @property
    def deletes(self) -> bool:
        return self.local_sha == ZERO


def push_lines(text: str) -> list[PushLine]:
    """The well-formed lines of pre-push's stdin (anything else is ignored)."""
    found = []
    for line in text.splitlines()[:MAX_PUSH_LINES]:
        parts = line.split()
        if len(parts) == 4 and _HEX.match(parts[1]) and _HEX.match(parts[3]):
            found.append(PushLine(*parts))
    return found


def push_happened(lines: Iterable[PushLine], remote: Mapping[str, str]) -> bool:
    """True when the remote now shows at least one update of the push: a pushed ref at the
    local object, or a deleted ref gone. A dry run or a rejected push shows none."""
    for line in lines:
        now = remote.get(line.remote_ref)
        if line.deletes:
            if line.remote_sha != ZERO and now is None:
                return True
        elif now == line.local_sha:
            return True
    return False


def ls_remote(ws: Workspace, remote: str, timeout: float | None = None) -> dict[str, str]:
    """{ref: object id} of what `remote` has now (peeled tags as `<tag>^{}` too). Never prompts;
    a Failure (network.TimedOut too) when git cannot tell."""
    return network.ls_remote(ws.layout, remote, timeout)


# ---- what -----------------------------------------------------------------------------------


class Carry(NamedTuple):
    specs: list[str]  # `src:dst`, never `+`: a push never forces
    withheld: list[str]  # refs of ours that stay home this time, and why


def _chain_target(name: str, user: str) -> str | None:
    if name == "refs/agy/state" or (name.startswith("refs/agy/wt/") and name.endswith("/state")):
        return f"refs/agy/users/{user}/{name[len('refs/agy/') :]}"
    return None


def _email(field: str) -> str:
    return field.strip().strip("<>").strip().lower()


def plan(
    ws: Workspace,
    user: str | None,
    known: Mapping[str, str],
    remote_tips: Callable[[], Iterable[str]],
    pushing: Iterable[str] = (),
) -> Carry:
    """What of this person's travels to the agy remote now.

    `known`: refs the remote is known to have ({name: id}, possibly partial); `remote_tips`: every
    object id the remote's refs point at, asked only when a checkpoint's commit must be placed;
    `pushing`: the objects the user's own push is sending.
    """
    mine = own_emails(ws)
    specs: list[str] = []
    withheld: list[str] = []
    for name, oid, committer, kind, symref in gitcli.ref_fields(
        ws.layout,
        ("refname", "objectname", "committeremail", "objecttype", "symref"),
        "refs/agy/",
        DECISIONS_REF,
    ):
        if (kind != "commit" or symref) and name.startswith(("refs/agy/", DECISIONS_REF)):
            # A damaged ref travels nowhere (docs/exit-codes.md, "Damaged refs").
            what = f"a symbolic ref to {symref}" if symref else f"points at a {kind}"
            withheld.append(f"{name} ({what}, not a commit: git agy-state doctor)")
            continue
        if name == DECISIONS_REF:
            dst = name  # shared by the team: merged line-wise, one ref for everyone
        elif user is not None and _chain_target(name, user):
            dst = _chain_target(name, user) or name
        elif _chain_target(name, "x"):
            withheld.append(f"{name} (no agy.user or user.email: no name for it on the remote)")
            continue
        elif name.startswith(("refs/agy/archive/", "refs/agy/jobs/")):
            if _email(committer) not in mine:
                withheld.append(f"{name} (committed by {_email(committer) or 'nobody'}, not you)")
                continue
            dst = name
        else:
            continue  # fetched copies, the brain, anything else: not ours to send
        if known.get(dst) != oid:
            specs.append(f"{name}:{dst}")
    tags: dict[str, tuple[str, str]] = {}
    for name, oid, kind, tagger, commit, state in gitcli.ref_fields(
        ws.layout,
        (
            "refname",
            "objectname",
            "objecttype",
            "taggeremail",
            "*objectname",
            f"contents:trailers:key={STATE_TRAILER},valueonly,separator=%x2C",
        ),
        "refs/tags/checkpoint-*",
    ):
        if kind != "tag" or not state.strip():
            continue  # not a checkpoint of ours (a plain tag of that name)
        if _email(tagger) not in mine:
            withheld.append(f"{name} (tagged by {_email(tagger) or 'nobody'}, not you)")
        elif not _HEX.match(commit):
            withheld.append(f"{name} (does not tag a commit)")
        elif known.get(name) != oid:
            tags[name] = (oid, commit)
    if tags:
        placed = gitcli.reached(
            ws.layout, {commit for _, commit in tags.values()}, [*remote_tips(), *pushing]
        )
        for name, (_oid, commit) in sorted(tags.items()):
            if commit in placed:
                specs.append(f"{name}:{name}")
            else:
                withheld.append(
                    f"{name} (its commit {abbrev.short_id(ws.store, commit)} is not on the remote)"
                )
    return Carry(sorted(specs), withheld)


def _summary(withheld: list[str], limit: int = 20) -> str:
    if not withheld:
        return ""
    lines = [f"kept back: {w}" for w in withheld[:limit]]
    if len(withheld) > limit:
        lines.append(f"kept back: … and {len(withheld) - limit} more")
    return "\n" + "\n".join(lines)


# ---- the pre-push hook's step --------------------------------------------------------------


class Decision(NamedTuple):
    carried: bool  # a push of ours ran (its exit code is `code`)
    code: int
    text: str


def after_push(
    ws: Workspace, remote_arg: str, url: str | None, lines: list[PushLine], timeout: float
) -> Decision:
    """Once the user's push has ended: carry this person's refs to the agy remote if the push
    went there and really happened; else carry nothing, saying why."""
    team = team_remote(ws)
    if team is None:
        return Decision(False, 0, "nothing carried: no agy remote (git agy-state remote setup)")
    if not goes_to(ws, team, remote_arg, url):
        return Decision(False, 0, f"nothing carried: not the agy remote ({team})")
    if not lines:
        return Decision(False, 0, "nothing carried: the push sent no ref")
    try:
        remote = ls_remote(ws, team, timeout)
    except Failure as exc:
        return Decision(False, 0, f"nothing carried: {exc.message}")
    if not push_happened(lines, remote):
        return Decision(
            False, 0, f"nothing carried: {team} does not show the push (a dry run, or rejected)"
        )
    user = agy_user(ws)
    carry = plan(ws, user, remote, remote.values, [line.local_sha for line in lines])
    if not carry.specs:
        return Decision(True, 0, "nothing to carry" + _summary(carry.withheld))
    try:
        pushed = network.push(ws.layout, team, carry.specs, prompt=False, timeout=timeout)
    except network.TimedOut as exc:
        return Decision(True, 124, exc.message)
    return Decision(True, pushed.code, pushed.output + _summary(carry.withheld))
