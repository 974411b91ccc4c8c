"""State snapshots as git commits (pygit2): build, compare-and-swap onto a chain, read back.

A snapshot is a commit whose tree holds STATE.md (the canonical rendering) and whose message
ends in `Agy-*` trailers. Nothing here touches HEAD, the index or any branch; every ref update
names the value it expects (compare-and-swap) and writes a reflog line.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from typing import NamedTuple

import pygit2

from gitstate.errors import NotFound
from gitstate.storage.layout import VIEW_NAME, Layout

FORMAT_VERSION = "1"
STATE_FILE = VIEW_NAME
_TRAILER_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*): ?(.*)$")
_BACK_RE = re.compile(r"^~(\d*)$")


class Snapshot(NamedTuple):
    commit: str
    time: str  # ISO 8601 with the committer's offset
    subject: str
    trailers: dict[str, str]
    parents: tuple[str, ...]

    @property
    def sections(self) -> list[str]:
        raw = self.trailers.get("Agy-Sections", "")
        return [s.strip() for s in raw.split(",") if s.strip() and s.strip() != "none"]

    @property
    def head(self) -> str | None:
        return self.trailers.get("Agy-Head") or None

    @property
    def branch(self) -> str | None:
        return self.trailers.get("Agy-Branch") or None

    @property
    def phase(self) -> str:
        return self.trailers.get("Agy-Phase") or "IDLE"

    def as_json(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "time": self.time,
            "message": self.subject,
            "sections": self.sections,
            "head": self.head,
            "branch": self.branch,
            "phase": self.phase,
        }


def compose_message(subject: str, trailers: list[tuple[str, str]], body: str = "") -> str:
    """Subject, optional body, then one trailer block that `git interpret-trailers` reads."""
    parts = [" ".join(subject.split()) or "Update state"]
    if body.strip():
        parts.append(body.strip())
    parts.append("\n".join(f"{key}: {value}" for key, value in trailers))
    return "\n\n".join(parts) + "\n"


def parse_trailers(message: str) -> dict[str, str]:
    """The `Key: value` lines of the message's last paragraph (empty if it is not all trailers)."""
    paragraphs = [p for p in message.strip().split("\n\n") if p.strip()]
    if len(paragraphs) < 2:
        return {}
    found: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        match = _TRAILER_RE.match(line.strip())
        if match is None:
            return {}
        found[match.group(1)] = match.group(2).strip()
    return found


def _parse_date(value: str) -> tuple[int, int] | None:
    """(seconds, offset minutes) from a GIT_*_DATE value: `@secs tz`, `secs tz` or ISO 8601."""
    text = value.strip()
    match = re.match(r"^@?(\d+)(?:\s+([+-])(\d{2})(\d{2}))?$", text)
    if match:
        sign = -1 if match.group(2) == "-" else 1
        offset = sign * (int(match.group(3) or 0) * 60 + int(match.group(4) or 0))
        return int(match.group(1)), offset
    from datetime import datetime, timedelta  # rare: only an ISO GIT_*_DATE needs it

    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.astimezone()
    delta = when.utcoffset() or timedelta(0)
    return int(when.timestamp()), int(delta.total_seconds() // 60)


def iso_time(seconds: int, offset_minutes: int) -> str:
    """ISO 8601 with the given offset, as datetime.isoformat() writes it (without datetime's
    import cost on the save path)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds + offset_minutes * 60))
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{stamp}{sign}{hours:02d}:{minutes:02d}"


def _local_offset(seconds: int) -> int:
    local = time.localtime(seconds)
    return (local.tm_gmtoff or 0) // 60


class Store:
    """The object database and refs of one repository, seen from one work tree."""

    def __init__(self, layout: Layout, repo: pygit2.Repository | None = None) -> None:
        self.layout = layout
        self.repo = repo if repo is not None else pygit2.Repository(str(layout.gitdir))

    # ---- identity -------------------------------------------------------------------------

    def signature(self, kind: str = "COMMITTER") -> pygit2.Signature:
        """Like git: GIT_<KIND>_NAME/EMAIL/DATE, then user.name/email; lenient when unset."""
        config = self.repo.config
        name = os.environ.get(f"GIT_{kind}_NAME") or _config_str(config, "user.name")
        email = os.environ.get(f"GIT_{kind}_EMAIL") or _config_str(config, "user.email")
        parsed = _parse_date(os.environ.get(f"GIT_{kind}_DATE", "") or "")
        if parsed is None:
            now = int(time.time())
            parsed = (now, _local_offset(now))
        return pygit2.Signature(
            name or "git-agy-state", email or "agy-state@localhost", parsed[0], parsed[1]
        )

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
        found = self.repo.references.get(ref or self.layout.state_ref)
        if found is None:
            return None
        return str(found.resolve().target)

    def snapshot(self, commit: str) -> Snapshot:
        obj = self.repo[commit].peel(pygit2.Commit)
        message = obj.message
        return Snapshot(
            commit=str(obj.id),
            time=iso_time(obj.commit_time, obj.commit_time_offset),
            subject=message.split("\n", 1)[0],
            trailers=parse_trailers(message),
            parents=tuple(str(p) for p in obj.parent_ids),
        )

    def message(self, commit: str) -> str:
        return str(self.repo[commit].peel(pygit2.Commit).message)

    def state_bytes(self, commit: str) -> bytes | None:
        """STATE.md as stored in a snapshot, or None (a closing snapshot has none)."""
        tree = self.repo[commit].peel(pygit2.Tree)
        if STATE_FILE not in tree:
            return None
        return bytes(self.repo[tree[STATE_FILE].id].peel(pygit2.Blob).data)

    def state_blob(self, commit: str) -> str | None:
        tree = self.repo[commit].peel(pygit2.Tree)
        return str(tree[STATE_FILE].id) if STATE_FILE in tree else None

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
                parents = self.repo[current].peel(pygit2.Commit).parent_ids
                if not parents:
                    raise NotFound(f"the chain has fewer than {steps + 1} snapshots")
                current = str(parents[0])
            return current
        tagged = self._checkpoint(rev)
        if tagged is not None:
            return tagged
        for archived in (f"refs/agy/{rev}", f"refs/agy/archive/{rev}"):
            # `archive/<name>` or just `<name>` names an archived task's tip.
            if rev and self.repo.references.get(archived) is not None:
                return str(self.repo.references[archived].resolve().target)
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
        ref = self.repo.references.get(f"refs/tags/{name}")
        if ref is None:
            return None
        obj = self.repo[ref.target]
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
            return bool(self.repo.config.get_bool("commit.gpgsign"))
        except (KeyError, pygit2.GitError, ValueError):
            return False

    def tree_of(self, commit: str) -> str:
        return str(self.repo[commit].peel(pygit2.Commit).tree_id)

    def compare_and_swap(self, ref: str, expected: str | None, new: str, reason: str) -> bool:
        """Move `ref` from `expected` (None: absent) to `new`; False when someone else moved it."""
        self._ensure_reflog(ref)
        refs = self.repo.references
        try:
            if expected is None:
                return self._create(ref, new, reason)
            current = refs.get(ref)
            if current is None or str(current.target) != expected:
                return False
            # libgit2 checks under the ref's lock that it still holds the value we looked up.
            current.set_target(new, reason)
            return True
        except (pygit2.GitError, OSError, pygit2.AlreadyExistsError):
            self._clear_stale_ref_lock(ref)
            return False

    def _create(self, ref: str, new: str, reason: str) -> bool:
        """Create `ref` only if it does not exist, atomically across processes and worktrees.

        libgit2's create checks that the ref is absent before it takes the ref's lock, so two
        creators could both "win" and one would overwrite the other's first write (a lost
        note, a lost first snapshot). `git update-ref REF NEW ""` checks under the lock.
        Creation happens once per ref, so the subprocess is paid rarely.
        """
        from gitstate.storage import gitcli

        proc = gitcli.run(self.layout, "update-ref", "-m", reason, ref, new, "")
        return proc.returncode == 0

    def _ensure_reflog(self, ref: str) -> None:
        # libgit2 logs updates of refs outside refs/heads only when the log file already exists
        # (or core.logAllRefUpdates=always, which we must not impose on the user's other refs).
        log = self.layout.commondir / "logs" / ref
        if not log.exists():
            log.parent.mkdir(parents=True, exist_ok=True)
            log.touch()

    def _clear_stale_ref_lock(self, ref: str) -> None:
        """Wait out a ref lock held by someone else; remove one left by a killed writer.

        Callers hold our work-tree lock, so no other git-agy-state writer of this chain is
        alive; a foreign git process holds a ref lock for milliseconds. A lock that outlives
        STALE_REF_LOCK_SECONDS belongs to a writer killed inside libgit2's update.
        """
        lock = self.layout.commondir / (ref + ".lock")
        delay = 0.005
        while True:
            try:
                age = time.time() - lock.stat().st_mtime
            except OSError:
                return  # gone: retry the update
            if age > STALE_REF_LOCK_SECONDS:
                lock.unlink(missing_ok=True)
                return
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def set_config(self, key: str, value: str) -> None:
        self.repo.config[key] = value

    def config_value(self, key: str) -> str | None:
        return _config_str(self.repo.config, key)


STALE_REF_LOCK_SECONDS = 2.0


def _config_str(config: pygit2.Config, key: str) -> str | None:
    try:
        return str(config[key])
    except (KeyError, pygit2.GitError):
        return None


def _revision_hint(exc: Exception) -> str:
    if "ambiguous" in str(exc):
        return "the abbreviated id is ambiguous; give more characters"
    return "REV is a snapshot id, ~N (N snapshots back) or a checkpoint tag; see git agy-state log"
