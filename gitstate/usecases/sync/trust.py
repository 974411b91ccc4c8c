"""What sync takes from a remote, and whose (docs/sync.md, "Received refs" and "Whose chain").

Every fetched ref is checked here before sync reads or moves anything with it: object types,
the caps below, a tree git can search; for this person's chains also who wrote the new
snapshots and, with `agy.requireSigned`, who signed them. A check returns the reason the ref
is skipped, or None. Only the `git` command is asked (gitstate.storage.received): no pygit2.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from gitstate.document.language import counted
from gitstate.document.model import MAX_BYTES, parse
from gitstate.errors import AgyError, Failure
from gitstate.storage import abbrev, gitcli, received, signing
from gitstate.storage.received import NewCommit
from gitstate.usecases.sync import carry
from gitstate.usecases.workspace import Workspace

# The caps (docs/sync.md): what one sync reads from a remote is bounded by these, not by it.
MAX_OBJECT_BYTES = MAX_BYTES  # a received commit, tree or STATE.md: the document limit, 1 MiB
MAX_NEW_SNAPSHOTS = 10_000  # commits a chain may bring in one sync (what a merge walks)
MAX_NOTE_BYTES = MAX_BYTES  # one note (all records on one commit); = storage/notes.py's
MAX_RECORD_BYTES = 256 * 1024  # one record: a line of a note
MAX_NEW_NOTES = 10_000  # notes added or changed in one sync
MAX_NEW_NOTE_BYTES = 16 * MAX_BYTES  # their bytes together
GOOD_SIGNATURES = ("G", "U")  # git's %G?: good (U: good, the key's validity unknown)


class Trust(NamedTuple):
    user: str  # the name on the remote (refs/agy/users/<user>/…)
    emails: frozenset[str]  # lower-cased: user.email and the identity snapshots are made with
    accept_foreign: bool  # `sync --from <yourself>`: take what others wrote onto your chain
    require_signed: bool  # agy.requireSigned
    keys: frozenset[str]  # fingerprints of user.signingkey (with require_signed)
    # An address whose slug is the name counts as yours only when agy.user is unset or already
    # a plain name (as init and remote setup write it): an agy.user such as `a b`, whose name
    # `a-b` is made by replacing characters, claims no one's address (docs/sync.md, "Your name
    # on the remote").
    by_slug: bool = True

    def mine(self, email: str) -> bool:
        if email.strip().lower() in self.emails:
            return True
        return self.by_slug and carry.user_slug(email) == self.user


def trust_of(ws: Workspace, user: str, accept_foreign: bool) -> Trust:
    # Lower-case keys: `git config --get-regexp` matches the canonical (lower-cased) names.
    values = gitcli.config(
        ws.layout, "user.email", "user.name", "agy.user", "agy.requiresigned", *signing.KEYS
    )
    given = values.get("agy.user", "").strip()
    # The addresses you commit as (carry's one rule), and GIT_AUTHOR_EMAIL as well: snapshots
    # are written with git's identity rules (GIT_AUTHOR_EMAIL… first) and their authors are
    # checked here, so the identity this sync's own commits carry is the user's too. Wider than
    # what travels out on purpose (carry.committer_emails says why).
    author = os.environ.get("GIT_AUTHOR_EMAIL", "").strip().lower()
    emails = carry.committer_emails(values.get("user.email")) | ({author} if author else set())
    require = signing.enabled(values.get("agy.requiresigned"))
    keys: set[str] = set()
    if require:
        # gpg's key when user.signingkey is unset: the committer, as the snapshots name it.
        name = os.environ.get("GIT_COMMITTER_NAME") or values.get("user.name", "")
        email = os.environ.get("GIT_COMMITTER_EMAIL") or values.get("user.email", "")
        ident = f"{name} <{email}>"
        keys = signing.fingerprints(signing.key_of(values, ident))
        if not keys:
            raise Failure(
                "agy.requireSigned is on, but the key in user.signingkey cannot be read",
                hint="git config user.signingkey KEY (and gpg.format ssh for an ssh key)",
            )
    return Trust(
        user,
        frozenset(emails),
        accept_foreign,
        require,
        frozenset(keys),
        not given or carry.user_slug(given) == given.lower(),
    )


def kind_problem(ws: Workspace, oid: str) -> str | None:
    """Cheap, before git is asked about ancestry: a chain ref must name a commit."""
    head = received.headers(ws.layout, [oid])[0]
    if head is None:
        return "its object is missing"
    return None if head[0] == "commit" else f"it points to a {head[0]}, not a commit"


def snapshot_problem(ws: Workspace, oid: str) -> str | None:
    """A snapshot that may be read: sane objects, and a STATE.md (if any) that is a document."""
    problem = received.tip_problem(ws.layout, oid, MAX_OBJECT_BYTES)
    if problem is not None:
        return problem
    spec = f"{oid}:STATE.md"
    if received.headers(ws.layout, [spec])[0] is None:
        return None  # a closing snapshot (the tree, checked above, can be searched)
    data = received.read_blob(ws.layout, spec, MAX_OBJECT_BYTES)
    if data is None:
        return "its STATE.md cannot be read"
    try:
        parse(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, AgyError):
        return "its STATE.md is not a state document"
    return None


def _taken(
    ws: Workspace, local: str | None, remote: str, trust: Trust, commits: list[NewCommit]
) -> bool:
    """Whether the remote chain under this person's name is someone else's altogether: not one
    new snapshot is theirs, and it shares no history with their chain (a teammate who wrote
    onto your chain built on it, and is reported as such instead)."""
    if any(trust.mine(c.author) or trust.mine(c.committer) for c in commits):
        return False
    if local is None:
        return True
    return gitcli.histories_disjoint(ws.layout, local, remote)


def chain_problem(ws: Workspace, local: str | None, remote: str, trust: Trust | None) -> str | None:
    """Why sync may not adopt, fast-forward or merge `remote` into `local`; `trust` for this
    person's own chains (None: a teammate's chain asked for with --from)."""
    problem = snapshot_problem(ws, remote)
    if problem is not None:
        return problem
    over = f"it brings more than {MAX_NEW_SNAPSHOTS} new snapshots (the most a sync walks)"
    if not received.within(ws.layout, local, remote, MAX_NEW_SNAPSHOTS):
        return over
    if trust is None or trust.accept_foreign:
        return None
    commits = received.new_commits(
        ws.layout, local, remote, MAX_NEW_SNAPSHOTS, signatures=trust.require_signed
    )
    if commits is None:
        return over
    # Along first parents: a merge commit of yours vouches for what it merged (your other
    # machine's `sync --from`); every other new snapshot must be yours.
    foreign = sorted({e for c in commits for e in (c.author, c.committer) if not trust.mine(e)})
    if foreign and _taken(ws, local, remote, trust, commits):
        # Two values of agy.user or user.email can give one name: the second is refused.
        return (
            f"the name {trust.user} is taken on the remote: its snapshots are by "
            f"{', '.join(foreign[:3])}, none by you, and share no history with yours (choose "
            f"another name: git config agy.user NAME; if that is you: sync --from {trust.user})"
        )
    if foreign:
        return (
            f"it has snapshots written by {', '.join(foreign[:3])}, not by you "
            f"(sync --from {trust.user} takes them)"
        )
    if trust.require_signed:
        unsigned = [c for c in commits if c.signature not in GOOD_SIGNATURES]
        if unsigned:
            return (
                f"agy.requireSigned: {counted(len(unsigned), 'new snapshot')} without a good "
                "signature "
                f"(first {abbrev.short_id(ws.store, unsigned[0].oid)})"
            )
        others = [c for c in commits if c.key.upper() not in {k.upper() for k in trust.keys}]
        if others:
            return (
                f"agy.requireSigned: {counted(len(others), 'new snapshot')} signed by another key "
                f"({others[0].key or 'unknown'}, not yours)"
            )
    return None


def record_problem(ws: Workspace, oid: str) -> str | None:
    """A job record's tip: sane objects (its files are regular files within the cap)."""
    return received.tip_problem(ws.layout, oid, MAX_OBJECT_BYTES)


def tag_problem(ws: Workspace, oid: str) -> str | None:
    """A checkpoint tag: an annotated tag within the cap, on a commit."""
    found = received.headers(ws.layout, [oid, f"{oid}^{{}}"])
    tag, target = found[0], found[1]
    if tag is None or tag[0] != "tag":
        return f"it is a {tag[0] if tag else 'missing object'}, not an annotated tag"
    if tag[1] > MAX_OBJECT_BYTES:
        return f"its tag is {tag[1]} bytes (the cap is {MAX_OBJECT_BYTES})"
    if target is None or target[0] != "commit":
        return "it does not point to a commit"
    return None


def notes_problem(ws: Workspace, known: str | None, remote: str) -> str | None:
    """Why the fetched decision notes may not be merged: what they add against `known` is
    read only after its sizes are within the caps."""
    head = received.headers(ws.layout, [remote])[0]
    if head is None or head[0] != "commit":
        return f"it points to a {head[0] if head else 'missing object'}, not a commit"
    if head[1] > MAX_OBJECT_BYTES:
        return f"its commit is {head[1]} bytes (the cap is {MAX_OBJECT_BYTES})"
    changed = received.changed_blobs(ws.layout, known, remote)
    if changed is None:
        return "its tree cannot be read"
    if len(changed) > MAX_NEW_NOTES:
        return f"it brings more than {MAX_NEW_NOTES} new notes"
    sizes = received.headers(ws.layout, [oid for _path, oid in changed])
    total = 0
    for (path, _oid), found in zip(changed, sizes, strict=True):
        if found is None or found[0] != "blob":
            return f"its note {path} is not a file"
        if found[1] > MAX_NOTE_BYTES:
            return f"its note {path} is {found[1]} bytes (the cap is {MAX_NOTE_BYTES})"
        total += found[1]
    if total > MAX_NEW_NOTE_BYTES:
        return f"it brings {total} bytes of notes (the cap is {MAX_NEW_NOTE_BYTES})"
    blobs = received.read_blobs(ws.layout, [oid for _path, oid in changed])
    if blobs is None:
        return "its notes cannot be read"
    for (path, _oid), data in zip(changed, blobs, strict=True):
        if any(len(line) > MAX_RECORD_BYTES for line in data.split(b"\n")):
            return f"its note {path} has a record over {MAX_RECORD_BYTES} bytes"
    return None
