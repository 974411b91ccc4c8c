"""State snapshots as git commits (pygit2): build, compare-and-swap onto a chain, read back.

A snapshot is a commit whose tree holds STATE.md (the canonical rendering) and whose message
ends in `Agy-*` trailers. Nothing here touches HEAD, the index or any branch; every ref update
names the value it expects (compare-and-swap) and writes a reflog line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pygit2

from gitstate.errors import BrokenRef, CannotWrite, NotFound
from gitstate.storage import cmdconfig, refs
from gitstate.storage.layout import Layout
from gitstate.storage.snapshot_text import (
    DEFAULT_EMAIL,
    DEFAULT_NAME,
    reflog_ident,
    reflog_reason,
    when,
)

# The text of a snapshot is composed in one place for both writers (this one and loose.py);
# re-exported here for the readers that import it with the Store.
from gitstate.storage.snapshot_text import FORMAT_VERSION as FORMAT_VERSION
from gitstate.storage.snapshot_text import STATE_FILE as STATE_FILE
from gitstate.storage.snapshot_text import Snapshot as Snapshot
from gitstate.storage.snapshot_text import compose_message as compose_message
from gitstate.storage.snapshot_text import iso_time as iso_time
from gitstate.storage.snapshot_text import parse_trailers as parse_trailers

_BACK_RE = re.compile(r"^~(\d*)$")


class Store:
    """The object database and refs of one repository, seen from one work tree."""

    def __init__(self, layout: Layout, repo: pygit2.Repository | None = None) -> None:
        self.layout = layout
        self.repo = repo if repo is not None else pygit2.Repository(str(layout.gitdir))
        self._repo_config: pygit2.Config | None = None

    @property
    def config(self) -> pygit2.Config:
        """The repository's config, one wrapper for this store's life. `repo.config` makes a new
        Python wrapper at every use (≈ 12 µs of each ≈ 18 µs lookup) around the same libgit2
        object, which reads its files as it always does: holding it changes no value read."""
        if self._repo_config is None:
            self._repo_config = self.repo.config
        return self._repo_config

    # ---- identity -------------------------------------------------------------------------

    def signature(self, kind: str = "COMMITTER") -> pygit2.Signature:
        """Like git: GIT_<KIND>_NAME/EMAIL/DATE, then user.name/email; lenient when unset."""
        config = self.config
        name = os.environ.get(f"GIT_{kind}_NAME") or _config_str(config, "user.name")
        email = os.environ.get(f"GIT_{kind}_EMAIL") or _config_str(config, "user.email")
        seconds, offset = when(kind)
        return pygit2.Signature(name or DEFAULT_NAME, email or DEFAULT_EMAIL, seconds, offset)

    def head_info(self) -> tuple[str | None, str | None]:
        """(HEAD commit or None when unborn, branch short name or None when detached)."""
        repo = self.repo
        try:
            head_ref = repo.references["HEAD"]
        except KeyError:
            return None, None
        target = head_ref.target
        branch: str | None = None
        if isinstance(target, str):
            branch = target.removeprefix("refs/heads/")
        commit: str | None = None
        if not repo.head_is_unborn:
            commit = str(repo.head.target)
        return commit, branch

    # ---- reading --------------------------------------------------------------------------

    def tip(self, ref: str | None = None) -> str | None:
        """The commit `ref` points at, or None when it does not exist. A ref that cannot be a
        chain's tip (unreadable, symbolic, at a missing object or at anything but a commit) is
        a BrokenRef naming it, with the repair (docs/exit-codes.md)."""
        name = ref or self.layout.state_ref
        found = self.reference(name)
        if found is None:
            return None
        if found.type == pygit2.enums.ReferenceType.SYMBOLIC:
            raise BrokenRef(
                name,
                f"{name} is a symbolic ref (to {found.target}), not a commit",
                hint=self._repair_hint(name),
            )
        return self._commit_at(name, str(found.target))

    def reference(self, name: str) -> pygit2.Reference | None:
        try:
            return self.repo.references.get(name)
        except (pygit2.GitError, ValueError) as exc:
            path = self.layout.commondir / name
            raise BrokenRef(
                name,
                f"{name} is not a readable ref: {_ref_reason(name, exc)}",
                hint=f"remove the file {path}, then put a good commit back: git update-ref "
                f"{name} <commit> (earlier tips: {self.layout.commondir / 'logs' / name})",
            ) from None

    def _commit_at(self, name: str, oid: str) -> str:
        obj = self.repo.get(oid)
        if obj is None:
            raise BrokenRef(
                name,
                f"{name} points at {oid[:12]}, which is missing from this repository",
                hint=self._repair_hint(name),
            )
        if not isinstance(obj, pygit2.Commit):
            raise BrokenRef(
                name,
                f"{name} points at {_kind(obj)} ({oid[:12]}), not a commit",
                hint=self._repair_hint(name),
            )
        return oid

    def _repair_hint(self, name: str) -> str:
        log = self.layout.commondir / "logs" / name
        return (
            f"put a good commit back: git update-ref --no-deref {name} <commit> (earlier tips: "
            f"{log}), or drop it: git update-ref --no-deref -d {name}"
        )

    def _commit(self, commit: str) -> pygit2.Commit:
        """The snapshot commit `commit` (a tag is peeled); BrokenRef when it is missing or is
        not a commit (a chain whose parent is gone, a damaged object database)."""
        obj = self.repo.get(commit)
        if obj is None:
            raise BrokenRef(
                commit,
                f"snapshot {commit[:12]} is missing from this repository",
                hint=_SNAPSHOT_HINT.format(ref=self.layout.state_ref),
            )
        try:
            return obj.peel(pygit2.Commit)
        except (pygit2.GitError, ValueError):  # InvalidSpecError is a ValueError
            raise BrokenRef(
                commit,
                f"{commit[:12]} is {_kind(obj)}, not a snapshot commit",
                hint=_SNAPSHOT_HINT.format(ref=self.layout.state_ref),
            ) from None

    def snapshot(self, commit: str) -> Snapshot:
        obj = self._commit(commit)
        message = obj.message
        return Snapshot(
            commit=str(obj.id),
            time=iso_time(obj.commit_time, obj.commit_time_offset),
            subject=message.split("\n", 1)[0],
            trailers=parse_trailers(message),
            parents=tuple(str(p) for p in obj.parent_ids),
        )

    def message(self, commit: str) -> str:
        return str(self._commit(commit).message)

    def state_bytes(self, commit: str) -> bytes | None:
        """STATE.md as stored in a snapshot, or None (a closing snapshot has none). A STATE.md
        that is a directory, a link, a submodule or a missing blob is a BrokenRef."""
        blob = self._state_entry(commit)
        if blob is None:
            return None
        found = self.repo.get(blob)
        if not isinstance(found, pygit2.Blob):
            what = "missing from this repository" if found is None else f"{_kind(found)}"
            raise BrokenRef(
                commit,
                f"snapshot {commit[:12]} holds a STATE.md that is {what}",
                hint=_SNAPSHOT_HINT.format(ref=self.layout.state_ref),
            )
        return bytes(found.data)

    def state_text(self, commit: str) -> str | None:
        """STATE.md of a snapshot as text; BrokenRef when it is not UTF-8."""
        data = self.state_bytes(commit)
        if data is None:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise BrokenRef(
                commit,
                f"snapshot {commit[:12]} holds a STATE.md that is not UTF-8 text (line {line})",
                hint=_SNAPSHOT_HINT.format(ref=self.layout.state_ref),
            ) from None
        return text

    def state_blob(self, commit: str) -> str | None:
        return self._state_entry(commit)

    def has_object(self, oid: str) -> bool:
        """Is the object `oid` in this repository? (storage/graph.py asks the same)."""
        from gitstate.storage import graph

        return graph.has_object(self, oid)

    def _state_entry(self, commit: str) -> str | None:
        """The id of STATE.md's blob in a snapshot's tree, None when there is none."""
        tree = self._commit(commit).tree
        if STATE_FILE not in tree:
            return None
        entry = tree[STATE_FILE]
        if entry.filemode not in (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
            what = _MODES.get(entry.filemode, f"an entry of mode {entry.filemode:o}")
            raise BrokenRef(
                commit,
                f"snapshot {commit[:12]} holds STATE.md as {what}, not a file",
                hint=_SNAPSHOT_HINT.format(ref=self.layout.state_ref),
            )
        return str(entry.id)

    def walk(self, start: str | None, limit: int | None = None) -> Iterator[Snapshot]:
        """Newest first along first parents; reads only as many commits as asked for."""
        current = start
        count = 0
        while current is not None and (limit is None or count < limit):
            snap = self.snapshot(current)
            yield snap
            count += 1
            current = snap.parents[0] if snap.parents else None

    def resolve(self, rev: str | None) -> str:
        """A snapshot id from REV: empty (the tip), `~N`, a checkpoint tag, an archive name, or any
        revision."""
        tip = self.tip()
        if not rev:
            if tip is None:
                raise NotFound("no snapshot yet", hint="git agy-state save")
            return tip
        back = _BACK_RE.match(rev)
        if back:
            steps = int(back.group(1) or 1)
            if tip is None:
                raise NotFound("no snapshot yet", hint="git agy-state save")
            current = tip
            for _ in range(steps):
                parents = self._commit(current).parent_ids
                if not parents:
                    raise NotFound(f"the chain has fewer than {steps + 1} snapshots")
                current = str(parents[0])
            return current
        tagged = self._checkpoint(rev)
        if tagged is not None:
            return tagged
        for archived in (f"refs/agy/{rev}", f"refs/agy/archive/{rev}"):
            # `archive/<name>` or just `<name>` names an archived task's tip.
            if rev and self.reference(archived) is not None:
                found = self.tip(archived)
                assert found is not None
                return found
        try:
            obj = self.repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            what = "checkpoint" if rev.startswith("checkpoint-") else "snapshot"
            raise NotFound(f"no {what} {rev!r}", hint=_revision_hint(exc)) from None
        if "Agy-Format" not in parse_trailers(commit.message):
            raise NotFound(f"{rev!r} is not a state snapshot", hint="git agy-state log")
        return str(commit.id)

    def _checkpoint(self, name: str) -> str | None:
        ref = self.reference(f"refs/tags/{name}")
        if ref is None or ref.type == pygit2.enums.ReferenceType.SYMBOLIC:
            return None
        obj = self.repo.get(ref.target)
        if obj is None:
            raise BrokenRef(
                f"refs/tags/{name}",
                f"checkpoint {name} points at {str(ref.target)[:12]}, which is missing from this "
                "repository",
                hint=f"drop the tag: git tag -d {name}",
            )
        if not isinstance(obj, pygit2.Tag):
            return None
        state = parse_trailers("x\n\n" + obj.message.strip().split("\n\n")[-1]).get("Agy-State")
        if not state:
            return None
        try:
            return str(self.repo.revparse_single(state).peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError):
            raise NotFound(
                f"checkpoint {name} names snapshot {state[:12]}, which this repository lacks",
                hint="fetch the state chain first: git agy-state sync",
            ) from None

    # ---- writing --------------------------------------------------------------------------

    def create_snapshot(self, data: bytes | None, parents: list[str], message: str) -> str:
        """Write blob, tree and commit objects; no ref moves."""
        builder = self.repo.TreeBuilder()
        if data is not None:
            blob = self.repo.create_blob(data)
            builder.insert(STATE_FILE, blob, pygit2.GIT_FILEMODE_BLOB)
        return self._write_commit(builder.write(), parents, message)

    def commit_tree(self, tree: str | None, parents: list[str], message: str) -> str:
        """A commit of an existing tree (None: the empty tree); no ref moves."""
        tree_id = pygit2.Oid(hex=tree) if tree else self.repo.TreeBuilder().write()
        return self._write_commit(tree_id, parents, message)

    def _write_commit(self, tree: pygit2.Oid, parents: list[str], message: str) -> str:
        """A commit, signed as git would sign it when the user signs commits (docs/sync.md,
        "Signing"); with signing off, no program runs."""
        author = self.signature("AUTHOR")
        committer = self.signature("COMMITTER")
        if not self._signs():
            return str(self.repo.create_commit(None, author, committer, message, tree, parents))
        from gitstate.storage import signing

        values = {key: v for key in signing.KEYS if (v := self.config_value(key)) is not None}
        values["commit.gpgsign"] = "true"  # as _signs() read it: a bare `gpgsign` is true too
        who = signing.signer(values, f"{committer.name} <{committer.email}>")
        assert who is not None
        # pygit2's stubs say Oid; it returns the commit's text.
        payload = str(
            self.repo.create_commit_string(
                author, committer, message, tree, list[str | pygit2.Oid](parents)
            )
        )
        signature = signing.sign(who, payload.encode("utf-8"))
        return str(self.repo.create_commit_with_signature(payload, signature))

    def _signs(self) -> bool:
        try:
            return bool(self.config.get_bool("commit.gpgsign"))
        except (KeyError, pygit2.GitError, ValueError):
            return False

    def tree_of(self, commit: str) -> str:
        return str(self._commit(commit).tree_id)

    def compare_and_swap(self, ref: str, expected: str | None, new: str, reason: str) -> bool:
        """Move `ref` from `expected` (None: absent, a create-only write) to `new`; False when
        someone else moved or created it. Atomic across processes and work trees, with a
        reflog line (storage/refs.py).

        Any other failure is said as what it is, not retried as a race: a ref that is broken
        (BrokenRef) or one the file system would not let us write (CannotWrite: read-only,
        full, permission denied), with the ref left as it was."""
        reason = reflog_reason(reason)
        verb = "create" if expected is None else "update"
        if not refs.shared(ref) or not pygit2.reference_is_valid_name(ref):
            # The ref's file is written here, so its name must be one git takes, in the common
            # dir (git's words for a bad name).
            raise CannotWrite(
                f"cannot {verb} {ref}: refusing to update ref with bad name '{ref}'",
                hint="a ref name is refs/… without `..`, a control character, or a part that "
                "ends in .lock (git check-ref-format)",
            )
        try:
            return refs.update(
                self.layout.commondir,
                ref,
                expected,
                new,
                lambda: self._value(ref),
                f"{self._ident()}\t{reason}",
            )
        except OSError as exc:
            raise CannotWrite(
                f"cannot {verb} {ref}: {self._write_failure(exc, new)}",
                hint=_WRITE_HINT.format(ref=ref),
            ) from None

    def create_ref(self, ref: str, new: str, reason: str) -> bool:
        """Create `ref` at `new` only if it does not exist; False when it does (a clash)."""
        return self.compare_and_swap(ref, None, new, reason)

    def delete_ref(self, ref: str, expected: str, reason: str) -> bool:
        """Delete `ref` only if it still names `expected` (never what a symbolic ref points
        at); False when it names something else or is gone. git's compare-and-delete, under
        the ref's lock like every update here, and packed-refs too; deleting is rare (taking
        back a half-made archive), so the process is paid rarely. CannotWrite when git refuses
        while the ref still names `expected`."""
        from gitstate.storage import gitcli  # rare: a save must not load subprocess

        reason = reflog_reason(reason)
        proc = gitcli.run(
            self.layout, "update-ref", "--no-deref", "-m", reason, "-d", ref, expected
        )
        if proc.returncode == 0:
            return True
        if self._value(ref) != expected:
            return False
        said = (proc.stderr or "").strip().splitlines()
        cause = said[-1].removeprefix("fatal: ").removeprefix("error: ") if said else "git failed"
        raise CannotWrite(f"cannot delete {ref}: {cause}", hint=_WRITE_HINT.format(ref=ref))

    def _value(self, ref: str) -> str | None:
        """The ref's value as read under its lock: a commit id, a symbolic ref's target (which
        never equals an id), None when absent."""
        found = self.reference(ref)
        return None if found is None else str(found.target)

    def _ident(self) -> str:
        """`Name <email> seconds +hhmm`: the committer, as git writes a reflog line."""
        who = self.signature("COMMITTER")
        return reflog_ident(who.name, who.email, who.time, who.offset)

    def _write_failure(self, exc: BaseException, new: str) -> str:
        """Why a ref update failed when nobody moved the ref: the OS's words when it gave them;
        else what the file system says now (full, read-only)."""
        reason = _os_reason(exc)
        if reason in _OS_REASONS:
            return reason
        try:
            fs = os.statvfs(self.layout.commondir)
        except OSError:
            return reason
        if fs.f_flag & os.ST_RDONLY:
            return "read-only file system"
        if fs.f_bavail == 0 or fs.f_favail == 0:
            return "no space left on device"
        if self.repo.get(new) is None:
            return f"the new commit {new[:12]} was not written ({reason})"
        return reason

    def set_config(self, key: str, value: str) -> None:
        self.config[key] = value

    def config_value(self, key: str) -> str | None:
        # `git -c` values win over every file, as in git (libgit2 does not read them).
        given = cmdconfig.value(key)
        return given if given is not None else _config_str(self.config, key)


def _config_str(config: pygit2.Config, key: str) -> str | None:
    try:
        return str(config[key])
    except (KeyError, pygit2.GitError):
        return None


_SNAPSHOT_HINT = (
    "git agy-state log lists the chain's snapshots; git update-ref {ref} <commit> puts a sound "
    "one back as the tip (git agy-state doctor checks every agy ref)"
)
_MODES = {
    pygit2.GIT_FILEMODE_TREE: "a directory",
    pygit2.GIT_FILEMODE_LINK: "a symbolic link",
    pygit2.GIT_FILEMODE_COMMIT: "a submodule (gitlink)",
}


_WRITE_HINT = "{ref} was left as it was; make room or make the repository writable, then try again"


_OS_REASONS = (
    "read-only file system",
    "no space left on device",
    "disk quota exceeded",
    "permission denied",
    "operation not permitted",
)


def _os_reason(exc: BaseException) -> str:
    """`read-only file system`, `no space left on device`…: the OS's words, lower case."""
    errno = getattr(exc, "errno", None)
    if errno:
        return os.strerror(errno).lower()
    text = _first_line(exc) if isinstance(exc, Exception) else str(exc)
    return text.rsplit(": ", 1)[-1].lower() if ": " in text else text


def _kind(obj: object) -> str:
    for cls, name in (
        (pygit2.Blob, "a blob"),
        (pygit2.Tree, "a tree"),
        (pygit2.Tag, "a tag object"),
        (pygit2.Commit, "a commit"),
    ):
        if isinstance(obj, cls):
            return name
    return "an object of an unknown type"


def _ref_reason(name: str, exc: Exception) -> str:
    """libgit2's `NAME: corrupted loose reference file: NAME` as `corrupted loose reference file`."""
    text = _first_line(exc).removeprefix(f"{name}: ").removesuffix(f": {name}")
    return text or "unreadable"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _revision_hint(exc: Exception) -> str:
    if "ambiguous" in str(exc):
        return "the abbreviated id is ambiguous; give more characters"
    return "REV is a snapshot id, ~N (N snapshots back) or a checkpoint tag; see git agy-state log"
