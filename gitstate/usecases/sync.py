"""Sync with a git remote (DESIGN.md §9): fetch the agy refs, merge, push fast-forward only.

Fetch `refs/agy/*` into `refs/agy-remotes/<remote>/*` and the decision notes into
`refs/notes/agy-remotes/<remote>/*`; this person's chains (travelling as
`refs/agy/users/<user>/…`) fast-forward or merge three ways with a merge commit; decision notes
merge line-wise (`git notes merge -s cat_sort_uniq`); archives, job records and checkpoint tags
are shared; then push, never forcing, retrying fetch and merge when someone pushed in between.
The network goes through the `git` command so credentials, ssh config and proxies just work.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

import pygit2

from gitstate.document.language import KEYS
from gitstate.document.model import Document, render, template
from gitstate.errors import Failure, NotFound, UsageError, WorkAtRisk
from gitstate.storage import lock as lock_mod
from gitstate.storage import view
from gitstate.storage.layout import Layout
from gitstate.storage.snapshots import FORMAT_VERSION, Store, compose_message
from gitstate.usecases import carry
from gitstate.usecases.workspace import Workspace

MAX_ROUNDS = 5
DECISIONS_REF = "refs/notes/agy/decisions"
_PORCELAIN_RE = re.compile(r"^(.)\t([^:\t]*):([^\t]+)\t(.*)$")


class ChainResult(NamedTuple):
    ref: str
    action: str  # up-to-date, ahead, fast-forward, adopted, merged
    commit: str | None
    conflicts: tuple[str, ...] = ()
    over_limit: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {
            "ref": self.ref,
            "action": self.action,
            "commit": self.commit,
            "conflicts": list(self.conflicts),
            "over_limit": list(self.over_limit),
        }


class Synced(NamedTuple):
    remote: str
    user: str
    chains: list[ChainResult]
    notes: str
    received: list[str]  # shared refs (archives, jobs, tags) created or moved here
    clashes: list[str]  # shared refs that differ on both sides, left alone
    pushed: list[str]
    view: str  # refreshed, removed, kept (dirty), missing, unchanged
    rounds: int
    overwritten: Path | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "remote": self.remote,
            "user": self.user,
            "chains": [c.as_json() for c in self.chains],
            "notes": self.notes,
            "received": self.received,
            "clashes": self.clashes,
            "pushed": self.pushed,
            "view": self.view,
            "rounds": self.rounds,
            "overwritten": str(self.overwritten) if self.overwritten else None,
        }


# ---- the remote ---------------------------------------------------------------------------


def remotes(ws: Workspace) -> list[str]:
    return [n for n in ws.store.repo.remotes.names() if n]


def choose_remote(ws: Workspace, given: str | None) -> tuple[str, str]:
    """(what to pass to git, a name safe for refs/agy-remotes/<name>/…)."""
    names = remotes(ws)
    if given:
        if given in names:
            return given, given
        if "/" in given or ":" in given or os.path.isdir(given):
            return given, "url-" + (carry.user_slug(given) or "remote")[-40:].strip("-.")
        raise UsageError(f"no remote {given!r}", hint="git remote -v lists them")
    _, branch = ws.store.head_info()
    upstream = ws.store.config_value(f"branch.{branch}.remote") if branch else None
    if upstream and upstream in names:
        return upstream, upstream
    if "origin" in names:
        return "origin", "origin"
    if len(names) == 1:
        return names[0], names[0]
    raise UsageError(
        "which remote?" if names else "this repository has no remote",
        hint="git agy-state sync REMOTE" if names else "git remote add origin URL",
    )


def fetch_specs(name: str) -> list[str]:
    return [
        f"+refs/agy/*:refs/agy-remotes/{name}/*",
        f"+refs/notes/agy/*:refs/notes/agy-remotes/{name}/*",
        f"+refs/tags/checkpoint-*:refs/agy-remotes/{name}/tags/checkpoint-*",
    ]


def _git(
    ws: Workspace, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = carry.clean_env(GIT_DIR=str(ws.layout.gitdir))
    try:
        return subprocess.run(
            ["git", *args],
            cwd=ws.layout.workdir or ws.layout.commondir,
            env={**base, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        raise Failure(f"cannot run git: {exc.strerror}") from None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def fetched_copy(name: str, ref: str) -> str:
    """Where `fetch` puts the remote's `ref` (one of the refs that push sends)."""
    for prefix, copies in (
        ("refs/agy/", f"refs/agy-remotes/{name}/"),
        ("refs/notes/agy/", f"refs/notes/agy-remotes/{name}/"),
        ("refs/tags/", f"refs/agy-remotes/{name}/tags/"),
    ):
        if ref.startswith(prefix):
            return copies + ref[len(prefix) :]
    raise ValueError(f"{ref} is not a ref sync sends")


def fetch(ws: Workspace, remote: str, name: str) -> None:
    proc = _git(ws, "fetch", "--quiet", "--no-tags", "--prune", remote, *fetch_specs(name))
    if proc.returncode != 0:
        raise Failure(f"git fetch {remote} failed: {_last_line(proc.stderr)}")


# ---- chains ---------------------------------------------------------------------------------


def _doc(ws: Workspace, commit: str | None) -> Document | None:
    return ws.snapshot_document(commit)


def _newer(store: Store, a: str, b: str) -> bool:
    """Is b's commit newer than a's? (Ties: not newer; the local side wins.)"""
    repo = store.repo
    return bool(repo[b].peel(pygit2.Commit).commit_time > repo[a].peel(pygit2.Commit).commit_time)


def _merge_commit(
    ws: Workspace, local: str, remote: str, source: str
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A merge commit of two diverged chains; (commit, conflicts, over_limit)."""
    # Here, not at the top: only a sync that merges pays for them (~10 ms of start-up).
    from gitstate.document.merge import merge_documents
    from gitstate.usecases.state import now_stamp

    store = ws.store
    base_id = store.repo.merge_base(local, remote)
    base = str(base_id) if base_id else None
    ours, theirs = _doc(ws, local), _doc(ws, remote)
    theirs_newer = _newer(store, local, remote)
    phase = store.snapshot(remote if theirs_newer else local).phase
    extra: list[tuple[str, str]] = []
    conflicts: tuple[str, ...] = ()
    over: tuple[str, ...] = ()
    result: Document | None
    if ours is None and theirs is None:
        result = None
        archived = store.snapshot(local).trailers.get("Agy-Archived") or store.snapshot(
            remote
        ).trailers.get("Agy-Archived")
        if archived:
            extra.append(("Agy-Archived", archived))
        phase = "IDLE"
    elif ours is None or theirs is None:
        result, extra, phase = _archive_meets_edits(ws, local, remote, base, ours, theirs, phase)
    else:
        base_doc = _doc(ws, base) or template(ours.lang, ours.stamp)
        merged = merge_documents(
            base_doc, ours, theirs, label=remote[:7], stamp=now_stamp(), theirs_newer=theirs_newer
        )
        result, conflicts, over = merged.document, merged.conflicts, merged.over_limit
    changed = (
        tuple(result.changed_keys(ours)) if result is not None and ours is not None else tuple(KEYS)
    )
    head, branch = store.head_info()
    trailers = [("Agy-Format", FORMAT_VERSION), ("Agy-Sections", ", ".join(changed) or "none")]
    if head:
        trailers.append(("Agy-Head", head))
    if branch:
        trailers.append(("Agy-Branch", branch))
    trailers.append(("Agy-Phase", phase))
    if over:
        trailers.append(("Agy-Conflict", ", ".join(over)))
    trailers += extra
    subject = f"sync: merge {source} ({remote[:7]})"
    if conflicts:
        subject += " with conflicts in " + ", ".join(conflicts)
    data = render(result).encode() if result is not None else None
    commit = store.create_snapshot(data, [local, remote], compose_message(subject, trailers))
    return commit, conflicts, over


def _archive_meets_edits(
    ws: Workspace,
    local: str,
    remote: str,
    base: str | None,
    ours: Document | None,
    theirs: Document | None,
    phase: str,
) -> tuple[Document | None, list[tuple[str, str]], str]:
    """One side closed the task, the other side has a document: if that side went on editing
    since the base, the task reopens from it with a note; else it stays closed (DESIGN.md §6)."""
    from gitstate.usecases.state import now_stamp

    store = ws.store
    closed_side, open_doc = (local, theirs) if ours is None else (remote, ours)
    assert open_doc is not None
    base_doc = _doc(ws, base)
    archived = store.snapshot(closed_side).trailers.get("Agy-Archived")
    if base_doc is not None and open_doc.same_content(base_doc):
        extra = [("Agy-Archived", archived)] if archived else []
        return None, extra, "IDLE"
    if archived:
        note = (
            f"- (sync) this task was archived elsewhere as {archived}; reopened: work went on here"
        )
        open_doc = open_doc.with_section("open_issues", [*open_doc.section("open_issues"), note])
    return open_doc.with_stamp(now_stamp()), [], phase


def merge_chain(ws: Workspace, local_ref: str, remote_ref: str, source: str) -> ChainResult:
    """Bring `remote_ref` into `local_ref`: adopt, fast-forward, or merge. CAS with retry."""
    store = ws.store
    for _attempt in range(20):
        local, remote = store.tip(local_ref), store.tip(remote_ref)
        if remote is None:
            return ChainResult(local_ref, "ahead" if local else "up-to-date", local)
        if local is None:
            if store.compare_and_swap(local_ref, None, remote, f"agy-state sync: adopt {source}"):
                return ChainResult(local_ref, "adopted", remote)
            continue
        if local == remote:
            return ChainResult(local_ref, "up-to-date", local)
        if store.repo.descendant_of(local, remote):
            return ChainResult(local_ref, "ahead", local)
        if store.repo.descendant_of(remote, local):
            if store.compare_and_swap(local_ref, local, remote, f"agy-state sync: {source}"):
                return ChainResult(local_ref, "fast-forward", remote)
            continue
        commit, conflicts, over = _merge_commit(ws, local, remote, source)
        if store.compare_and_swap(local_ref, local, commit, f"agy-state sync: merge {source}"):
            return ChainResult(local_ref, "merged", commit, conflicts, over)
    raise WorkAtRisk(f"{local_ref} kept moving during sync; try again")


def _worktree_workspace(ws: Workspace, name: str) -> Workspace:
    """The Workspace of the linked work tree `name` (its chain and its lock)."""
    gitdir = ws.layout.commondir / "worktrees" / name
    workdir: Path | None = None
    try:
        workdir = Path((gitdir / "gitdir").read_text().strip()).parent
    except OSError:
        workdir = None
    layout = Layout.from_dirs(gitdir, workdir)
    return Workspace(layout, Store(layout, ws.store.repo))


def own_chains(ws: Workspace, user: str, name: str) -> list[tuple[Workspace, str, str]]:
    """(work tree, local chain ref, fetched remote chain ref) for this person's chains."""
    prefix = f"refs/agy-remotes/{name}/users/{user}/"
    pairs: dict[str, str] = {"refs/agy/state": prefix + "state"}
    for ref in ws.store.repo.references:
        if ref.startswith("refs/agy/wt/") and ref.endswith("/state"):
            pairs[ref] = prefix + ref[len("refs/agy/") :]
        elif ref.startswith(prefix + "wt/") and ref.endswith("/state"):
            pairs["refs/agy/" + ref[len(prefix) :]] = ref
    chains = []
    for local_ref, remote_ref in sorted(pairs.items()):
        if local_ref == ws.layout.state_ref:
            chains.append((ws, local_ref, remote_ref))
        elif local_ref == "refs/agy/state":
            main = Layout.from_dirs(ws.layout.commondir, _main_workdir(ws))
            chains.append((Workspace(main, Store(main, ws.store.repo)), local_ref, remote_ref))
        else:
            wt_name = local_ref[len("refs/agy/wt/") : -len("/state")]
            chains.append((_worktree_workspace(ws, wt_name), local_ref, remote_ref))
    return chains


def _main_workdir(ws: Workspace) -> Path | None:
    if ws.layout.worktree is None:
        return ws.layout.workdir
    return ws.layout.commondir.parent if ws.layout.commondir.name == ".git" else None


# ---- notes and shared refs -----------------------------------------------------------------


def merge_notes(ws: Workspace, name: str) -> str:
    store = ws.store
    remote_ref = f"refs/notes/agy-remotes/{name}/decisions"
    remote = store.tip(remote_ref)
    if remote is None:
        return "none on the remote"
    with lock_mod.held(ws.layout.commondir / "agy" / "decisions.lock"):
        local = store.tip(DECISIONS_REF)
        if local == remote or (local and store.repo.descendant_of(local, remote)):
            result = "up-to-date"
        elif local is None or store.repo.descendant_of(remote, local):
            if not store.compare_and_swap(DECISIONS_REF, local, remote, "agy-state sync: notes"):
                raise WorkAtRisk("the decision notes moved during sync; try again")
            result = "fast-forward"
        else:
            proc = _git(
                ws,
                *_identity(ws),
                "notes",
                f"--ref={DECISIONS_REF}",
                "merge",
                "-q",
                "-s",
                "cat_sort_uniq",
                remote_ref,
            )
            if proc.returncode != 0:
                raise Failure(f"merging the decision notes failed: {_last_line(proc.stderr)}")
            result = "merged"
    from gitstate.usecases.decisions import refresh_pitfalls

    refresh_pitfalls(ws)
    return result


def _identity(ws: Workspace) -> list[str]:
    """`-c user.name/email` for git's own merge commit when the user has none configured."""
    args = []
    if not (os.environ.get("GIT_COMMITTER_NAME") or ws.store.config_value("user.name")):
        args += ["-c", "user.name=git-agy-state"]
    if not (os.environ.get("GIT_COMMITTER_EMAIL") or ws.store.config_value("user.email")):
        args += ["-c", "user.email=agy-state@localhost"]
    return args


def receive_shared(ws: Workspace, name: str) -> tuple[list[str], list[str]]:
    """Create or fast-forward local archives, job records and checkpoint tags from the fetched
    copies; a ref that differs on both sides is reported and left alone (never forced)."""
    store = ws.store
    received: list[str] = []
    clashes: list[str] = []
    prefix = f"refs/agy-remotes/{name}/"
    for fetched in sorted(store.repo.references):
        if not fetched.startswith(prefix):
            continue
        rest = fetched[len(prefix) :]
        if rest.startswith(("archive/", "jobs/")):
            local_ref = "refs/agy/" + rest
        elif rest.startswith("tags/checkpoint-"):
            local_ref = "refs/" + rest
        else:
            continue
        theirs, mine = store.tip(fetched), store.tip(local_ref)
        target = str(store.repo.references[fetched].target)  # tags: the tag object itself
        if theirs is None or theirs == mine:
            continue
        if mine is None:
            if store.compare_and_swap(local_ref, None, target, "agy-state sync: receive"):
                received.append(local_ref)
        elif rest.startswith("jobs/") and store.repo.descendant_of(theirs, mine):
            if store.compare_and_swap(local_ref, mine, target, "agy-state sync: receive"):
                received.append(local_ref)
        elif not (rest.startswith("jobs/") and store.repo.descendant_of(mine, theirs)):
            clashes.append(local_ref)
    return received, clashes


# ---- push -------------------------------------------------------------------------------------


class Pushed(NamedTuple):
    ok: list[str]
    retry: list[str]  # rejected because the remote moved: fetch and merge again
    refused: list[tuple[str, str]]  # the remote will not take these (hooks, policy)
    clashes: list[str]  # a tag of the same name with other content
    # The remote could not update the ref: most likely another push moved it after ours began
    # (git checks the old value under the ref's lock), so fetch and merge again; if the next
    # fetch shows it did not move, it was no race and is refused.
    lost: list[tuple[str, str]]


# receive-pack's reasons when the ref moved under it (`cannot lock ref …: is at X but expected
# Y`, `reference already exists`): older and newer git word them differently.
_LOST_RACE = ("failed to update ref", "failed to lock", "cannot lock ref", "incorrect old value")


def push(ws: Workspace, remote: str, user: str) -> Pushed:
    specs = carry.refspecs(ws, user)
    if not specs:
        return Pushed([], [], [], [], [])
    proc = _git(
        ws, "push", "--porcelain", "--no-verify", remote, *specs, env={"AGY_STATE_IN_HOOK": "1"}
    )
    result = Pushed([], [], [], [], [])
    for line in proc.stdout.splitlines():
        match = _PORCELAIN_RE.match(line)
        if match is None:
            continue
        flag, _src, dst, summary = match.groups()
        if flag != "!":
            if flag != "=":
                result.ok.append(dst)
            continue
        if dst.startswith("refs/tags/") and "already exists" in summary:
            result.clashes.append(dst)
        elif "[rejected]" in summary and (
            "fetch first" in summary or "non-fast-forward" in summary
        ):
            result.retry.append(dst)
        elif "[remote rejected]" in summary and any(r in summary for r in _LOST_RACE):
            result.lost.append((dst, summary))
        else:
            result.refused.append((dst, summary))
    if proc.returncode != 0 and not (
        result.retry or result.refused or result.clashes or result.lost
    ):
        raise Failure(f"git push {remote} failed: {_last_line(proc.stderr)}")
    return result


# ---- the view ---------------------------------------------------------------------------------


def refresh_view(ws: Workspace, force: bool) -> tuple[str, Path | None]:
    """A clean or missing view follows the new tip; a dirty one is left alone (or, with force,
    overwritten with its text kept)."""
    if ws.layout.workdir is None:
        return "none", None
    with ws.locked():
        tip = ws.store.tip()
        data = ws.view_bytes()
        tip_bytes = ws.store.state_bytes(tip) if tip else None
        if data is not None and data == tip_bytes:
            return "unchanged", None
        kept = None
        if data is not None and ws.view_state(data, tip) == "dirty":
            if not force:
                return "kept", None
            kept = view.keep_overwritten(ws.layout, data)
        if tip_bytes is None:
            if data is None:
                return "missing", None
            view.remove(ws.layout)
            return "removed", kept
        assert tip is not None
        view.write(ws.layout, tip_bytes, tip)
        return "refreshed", kept


# ---- the whole sync ---------------------------------------------------------------------------


def sync(
    ws: Workspace, remote_arg: str | None = None, from_user: str | None = None, force: bool = False
) -> Synced:
    user = carry.agy_user(ws)
    if user is None:
        raise Failure(
            "sync needs your name for the remote: neither agy.user nor user.email is set",
            hint="git config user.email you@example.com (or git config agy.user NAME)",
        )
    remote, name = choose_remote(ws, remote_arg)
    teammate = carry.user_slug(from_user) if from_user else None
    if from_user and not teammate:
        raise UsageError(f"{from_user!r} is not a user name")
    with lock_mod.held(ws.layout.commondir / "agy" / "sync.lock", wait=120):
        rounds = 0
        chains: list[ChainResult] = []
        received: list[str] = []
        clashes: list[str] = []
        notes = "up-to-date"
        pushed: list[str] = []
        # Refs the remote could not update last round: (their fetched copy then, the reason).
        lost: dict[str, tuple[str | None, str]] = {}
        while True:
            rounds += 1
            fetch(ws, remote, name)
            for ref, (seen, why) in lost.items():
                if ws.store.tip(fetched_copy(name, ref)) == seen:
                    raise Failure(
                        f"{remote} refused {ref}: {why}",
                        hint=f"{remote} could not update it, and nobody else had moved it; "
                        "the remote's server log says why",
                    )
            chains = [
                merge_chain(chain_ws, local_ref, remote_ref, remote)
                for chain_ws, local_ref, remote_ref in own_chains(ws, user, name)
            ]
            if teammate:
                teammate_ref = f"refs/agy-remotes/{name}/users/{teammate}/state"
                if ws.store.tip(teammate_ref) is None:
                    raise NotFound(f"{remote} has no state chain of {teammate}")
                chains.append(
                    merge_chain(ws, ws.layout.state_ref, teammate_ref, f"{teammate} on {remote}")
                )
            notes = merge_notes(ws, name)
            got, clashing = receive_shared(ws, name)
            received += got
            clashes = clashing
            outcome = push(ws, remote, user)
            pushed += outcome.ok
            clashes += [c for c in outcome.clashes if c not in clashes]
            if outcome.refused:
                ref, why = outcome.refused[0]
                raise Failure(
                    f"{remote} refused {ref}: {why}",
                    hint="the remote may not accept refs outside refs/heads and refs/tags; "
                    "ask for refs/agy/* and refs/notes/agy/* to be allowed",
                )
            lost = {ref: (ws.store.tip(fetched_copy(name, ref)), why) for ref, why in outcome.lost}
            if not (outcome.retry or lost):
                break
            if rounds >= MAX_ROUNDS:
                moving = ", ".join([*outcome.retry, *sorted(lost)])
                raise WorkAtRisk(
                    f"{remote} kept moving: {moving} still rejected after "
                    f"{rounds} rounds of fetch, merge and push",
                    hint="try again in a moment",
                )
            time.sleep(0.05 * rounds)  # someone is pushing right now: let them finish
        view_state, overwritten = refresh_view(ws, force)
    return Synced(
        remote, user, chains, notes, received, clashes, pushed, view_state, rounds, overwritten
    )


# ---- remote setup -----------------------------------------------------------------------------


def setup(ws: Workspace, remote_arg: str | None) -> list[str]:
    """Make a plain `git fetch` bring the agy refs; never set remote.<name>.push."""
    remote, name = choose_remote(ws, remote_arg)
    if remote != name:
        raise UsageError("remote setup needs a configured remote", hint="git remote add NAME URL")
    config = ws.store.repo.config
    key = f"remote.{remote}.fetch"
    try:
        current = [str(v) for v in config.get_multivar(key)]
    except KeyError:
        current = []
    done = []
    for spec in fetch_specs(name)[:2]:
        if spec not in current:
            config.set_multivar(key, "^$", spec)
            done.append(f"added {key} {spec}")
    user = carry.agy_user(ws)
    if not ws.store.config_value("agy.user") and user:
        ws.store.set_config("agy.user", user)
        done.append(f"set agy.user={user}")
    if user is None:
        done.append("agy.user is not set: git config agy.user NAME (or user.email)")
    else:
        done.append(
            f"push the state with: git push {remote} refs/agy/state:refs/agy/users/{user}/state"
        )
    return done
