"""`memory sync [REMOTE]`: fetch the brain's ref, merge, push fast-forward only (docs/memory.md).

Through the `git` command (credentials, ssh config and proxies just work), in the brain's own git
dir: the project's sync never carries refs/agy/memory. REMOTE is a URL, a path or a remote of the
brain, remembered as `agy.memoryRemote`. Diverged brains merge against their merge base (an
empty one for unrelated histories) with memory/document/merge.py; the merge is never refused,
never scanned (its content was scanned where it was written). A push that loses a race fetches,
merges and pushes again. The index catches up with the merged tip.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from typing import NamedTuple

from gitstate.errors import AgyError, Failure, UsageError, WorkAtRisk
from gitstate.memory.document import files
from gitstate.memory.document.merge import FileMerge, merge_trees
from gitstate.memory.storage.brain import Brain
from gitstate.memory.storage.layout import MEMORY_REF, REMOTE_KEY
from gitstate.memory.usecases.brain import memory_warning, open_brain
from gitstate.memory.usecases.search import reindex
from gitstate.storage import gitcli, network, refs, remote_url
from gitstate.storage import lock as lock_mod
from gitstate.storage.snapshots import compose_message

MAX_ROUNDS = 5
_SLUG_RE = re.compile(r"[^A-Za-z0-9._-]+")


class MemorySynced(NamedTuple):
    remote: str
    action: str  # up-to-date, ahead, fast-forward, adopted, merged
    commit: str | None
    pushed: bool
    rounds: int
    merged: tuple[FileMerge, ...]
    memory_lines: int
    warning: str | None

    def as_json(self) -> dict[str, object]:
        return {
            "remote": self.remote,
            "action": self.action,
            "commit": self.commit,
            "pushed": self.pushed,
            "rounds": self.rounds,
            "merged": [
                {"path": m.path, "how": m.how, "both_changed": list(m.both)} for m in self.merged
            ],
            "memory_lines": self.memory_lines,
            "over_limit": self.memory_lines > files.LINE_LIMIT,
            "warning": self.warning,
        }


def choose_remote(brain: Brain, given: str | None) -> tuple[str, str]:
    """(what git is given, a name for refs/agy-remotes/<name>/memory); remembers a new one."""
    names = brain.remote_names()
    value = given if given else brain.config(REMOTE_KEY)
    if not value:
        raise UsageError(
            "the brain has no remote yet",
            hint="git agy-state memory sync URL (a bare git repository; it is remembered)",
        )
    # Before anything is saved, and again for a value read back from the config (an older
    # version saved what it was given): `--upload-pack=CMD` would run CMD (docs/memory.md).
    gitcli.refuse_option_like(value, "the memory remote" if given else REMOTE_KEY)
    if value in names:
        name = value
    else:
        if os.path.isdir(value):
            value = os.path.abspath(value)  # a path stays right whatever the current directory
        elif "/" not in value and ":" not in value:
            raise UsageError(
                f"{value!r} is neither a remote of the brain nor a URL or path",
                hint="git agy-state memory sync URL",
            )
        slug = _SLUG_RE.sub("-", remote_url.public(value)).strip("-.")[-40:].strip("-.")
        name = "url-" + (slug or "remote")
    # A URL with a password or token is used, never written down: not into the config, the
    # commit subjects, the reflog or the output (docs/memory.md).
    if given and brain.config(REMOTE_KEY) != value and not remote_url.has_credentials(value):
        brain.set_config(REMOTE_KEY, value)
    return value, name


def _where(brain: Brain) -> network.Private:
    # Private: what git writes into the brain stays its owner's (umask 0o077, docs/memory.md).
    return network.Private(brain.layout.path)


def fetch(brain: Brain, remote: str, name: str) -> str:
    """Fetch the remote's brain ref into refs/agy-remotes/<name>/memory; returns that ref.
    A pattern refspec: a remote without the ref yet is no error."""
    target = f"refs/agy-remotes/{name}/memory"
    spec = f"+{MEMORY_REF}*:{target}*"
    network.fetch(_where(brain), remote, [spec], prune=False, prompt=False)
    return target


def merge(
    brain: Brain, remote_ref: str, source: str
) -> tuple[str, str | None, tuple[FileMerge, ...]]:
    """Bring the fetched ref into refs/agy/memory: adopt, fast-forward or merge (CAS, retried)."""
    with lock_mod.held(brain.layout.lock_path):
        for _attempt in refs.attempts(MEMORY_REF, "nothing was merged"):
            local, remote = brain.tip(), brain.tip(remote_ref)
            if remote is None:
                return ("ahead" if local else "up-to-date"), local, ()
            if local is None:
                if brain.compare_and_swap(None, remote, f"agy-state memory sync: adopt {source}"):
                    return "adopted", remote, ()
                continue
            if local == remote:
                return "up-to-date", local, ()
            if brain.descendant_of(local, remote):
                return "ahead", local, ()
            if brain.descendant_of(remote, local):
                if brain.compare_and_swap(local, remote, f"agy-state memory sync: {source}"):
                    return "fast-forward", remote, ()
                continue
            brain.check_format(remote)
            commit, merged = _merge_commit(brain, local, remote, source)
            if brain.compare_and_swap(local, commit, f"agy-state memory sync: merge {source}"):
                return "merged", commit, merged
    raise AssertionError("refs.attempts raises when they run out")


def _merge_commit(
    brain: Brain, local: str, remote: str, source: str
) -> tuple[str, tuple[FileMerge, ...]]:
    base = brain.merge_base(local, remote)  # None: unrelated histories, an empty base
    result = merge_trees(brain.files(base), brain.files(local), brain.files(remote))
    ours = brain.listing(local)
    changes: dict[str, bytes | None] = {p: None for p in ours if p not in result.files}
    changes.update(result.files)
    subject = f"memory sync: merge {source} ({remote[:7]})"
    body = "\n".join(f"{m.path}: {m.how}" for m in result.merged)
    message = compose_message(subject, [(files.FORMAT_TRAILER, files.FORMAT_VERSION)], body)
    return brain.commit(local, changes, [local, remote], message), result.merged


def push(brain: Brain, remote: str) -> tuple[bool, bool]:
    """(pushed something, rejected because the remote moved). Never forces."""
    spec = f"{MEMORY_REF}:{MEMORY_REF}"
    pushed = network.push(_where(brain), remote, [spec], prompt=False)
    for flag, _src, dst, summary in pushed.refs:
        if dst != MEMORY_REF:
            continue
        if flag == "!":
            if "fetch first" in summary or "non-fast-forward" in summary:
                return False, True
            raise Failure(f"{remote_url.public(remote)} refused {MEMORY_REF}: {summary}")
        return flag != "=", False
    if pushed.code != 0:
        raise pushed.failure(remote)
    return False, False


def sync(remote_arg: str | None = None) -> MemorySynced:
    brain, _ = open_brain(create=True)
    remote, name = choose_remote(brain, remote_arg)
    shown = remote_url.public(remote)
    with lock_mod.held(brain.layout.sync_lock_path, wait=120):
        rounds = 0
        actions: list[str] = []
        merged: list[FileMerge] = []
        pushed = False
        while True:
            rounds += 1
            fetched = fetch(brain, remote, name)
            action, _tip, files_merged = merge(brain, fetched, shown)
            actions.append(action)
            merged += files_merged
            brain.refresh_cache()
            did_push, retry = push(brain, remote)
            pushed = pushed or did_push
            if not retry:
                break
            if rounds >= MAX_ROUNDS:
                raise WorkAtRisk(
                    f"{shown} kept moving: the push was still rejected after {rounds} rounds",
                    hint="try again in a moment",
                )
            time.sleep(0.05 * rounds)  # someone is pushing right now: let them finish
    brain.maintain()  # a fetch of fewer than 100 objects leaves them loose
    with contextlib.suppress(AgyError):  # derived: the next search catches up by itself
        reindex()
    tip = brain.tip()
    lines = files.count_lines(brain.text(tip, files.MEMORY_FILE) or "")
    action = next((a for a in ("merged", "adopted", "fast-forward") if a in actions), actions[-1])
    warning = memory_warning(lines, " after the merge")
    return MemorySynced(shown, action, tip, pushed, rounds, tuple(merged), lines, warning)
