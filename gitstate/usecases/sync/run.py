"""Sync with a git remote (docs/sync.md): fetch the agy refs, merge, push fast-forward only.

Fetch `refs/agy/*` into `refs/agy-remotes/<remote>/*` and the decision notes into
`refs/notes/agy-remotes/<remote>/*`; this person's chains (travelling as
`refs/agy/users/<user>/…`) fast-forward or merge three ways with a merge commit; decision notes
merge line-wise (`git notes merge -s cat_sort_uniq`); archives, job records and checkpoint tags
are shared; then push, never forcing, retrying fetch and merge when someone pushed in between.
The network goes through the `git` command so credentials, ssh config and proxies just work.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple, NoReturn

from gitstate.errors import Failure, NotFound, UsageError, WorkAtRisk
from gitstate.storage import exclude, gitcli, graph, multivar, network, remote_url, view
from gitstate.storage import lock as lock_mod
from gitstate.storage.layout import DECISIONS_REF, Layout
from gitstate.usecases.sync import carry
from gitstate.usecases.sync import trust as sync_trust
from gitstate.usecases.sync.results import ChainResult, Synced
from gitstate.usecases.workspace import Workspace

MAX_ROUNDS = 5


# ---- the remote ---------------------------------------------------------------------------


def remotes(ws: Workspace) -> list[str]:
    return gitcli.remotes(ws.layout)


def choose_remote(ws: Workspace, given: str | None) -> tuple[str, str]:
    """(what to pass to git, a name safe for refs/agy-remotes/<name>/…)."""
    names = remotes(ws)
    if given:
        gitcli.refuse_option_like(given)  # `--upload-pack=…` must never reach git as an option
        if given in names:
            return given, given
        if "/" in given or ":" in given or os.path.isdir(given):
            slug = carry.user_slug(remote_url.public(given)) or "remote"
            return given, "url-" + slug[-40:].strip("-.")
        raise UsageError(f"no remote {given!r}", hint="git remote -v lists them")
    team = carry.team_remote(ws)
    if team:
        return choose_remote(ws, team)
    branch = gitcli.current_branch(ws.layout)
    key = f"branch.{branch}.remote"
    upstream = gitcli.config(ws.layout, key).get(key) if branch else None
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


# The local refs a sync reads (with the fetched copies of `listed_copies`).
LISTED = ("refs/agy", "refs/notes/agy", "refs/tags/checkpoint-*")


def listed_copies(name: str) -> tuple[str, ...]:
    return (f"refs/agy-remotes/{name}", f"refs/notes/agy-remotes/{name}")


def fetch(ws: Workspace, remote: str, name: str) -> None:
    network.fetch(ws.layout, remote, fetch_specs(name))


# ---- chains ---------------------------------------------------------------------------------


def _worktree_workspace(ws: Workspace, name: str) -> Workspace:
    """The Workspace of the linked work tree `name` (its chain and its lock)."""
    gitdir = ws.layout.commondir / "worktrees" / name
    workdir: Path | None = None
    try:
        workdir = Path((gitdir / "gitdir").read_text().strip()).parent
    except OSError:
        workdir = None
    return Workspace(Layout.from_dirs(gitdir, workdir))


def own_chains(
    ws: Workspace, user: str, name: str, listing: dict[str, str]
) -> list[tuple[Workspace, str, str]]:
    """(work tree, local chain ref, fetched remote chain ref) for this person's chains."""
    prefix = f"refs/agy-remotes/{name}/users/{user}/"
    pairs: dict[str, str] = {"refs/agy/state": prefix + "state"}
    for ref in listing:
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
            chains.append((Workspace(main), local_ref, remote_ref))
        else:
            wt_name = local_ref[len("refs/agy/wt/") : -len("/state")]
            chains.append((_worktree_workspace(ws, wt_name), local_ref, remote_ref))
    return chains


def _main_workdir(ws: Workspace) -> Path | None:
    if ws.layout.worktree is None:
        return ws.layout.workdir
    return ws.layout.commondir.parent if ws.layout.commondir.name == ".git" else None


def bring_chain(
    ws: Workspace,
    local_ref: str,
    remote_ref: str,
    source: str,
    listing: dict[str, str],
    trust: sync_trust.Trust | None,
) -> ChainResult:
    """Decide with git what a chain needs; load pygit2 (chains.py) only when it must move.

    What the remote sent is checked first (`trust`: this person's own chain; None: a
    teammate's asked for with --from); a copy that fails is `skipped`, with the reason."""
    local, remote = listing.get(local_ref), listing.get(remote_ref)
    # A damaged ref stops sync before a push (docs/exit-codes.md). A ref that plainly names a
    # whole loose commit is proven so without pygit2 (its import is most of a sync's own cost);
    # anything else is Store.tip's to judge, and to name.
    if (
        local is not None
        and ws.layout.gitdir.is_dir()
        and not view.names_loose_commit(ws.place, local_ref, local)
    ):
        ws.store.tip(local_ref)
    if remote is None:
        return ChainResult(local_ref, "ahead" if local else "up-to-date", local)
    if local == remote:
        return ChainResult(local_ref, "up-to-date", local)
    if not ws.layout.gitdir.is_dir():
        # A linked work tree this repository does not have (a job run on another machine):
        # the chain stays in its fetched copy until a work tree of that name exists here.
        return ChainResult(local_ref, "elsewhere", local)
    problem = sync_trust.kind_problem(ws, remote)
    if problem is None and local is not None and gitcli.is_ancestor(ws.layout, remote, local):
        return ChainResult(local_ref, "ahead", local)
    problem = problem or sync_trust.chain_problem(ws, local, remote, trust)
    if problem is not None:
        return ChainResult(local_ref, "skipped", local, reason=problem)
    from gitstate.usecases.sync.chains import merge_chain  # the chain moves: pygit2 from here

    return merge_chain(ws, local_ref, remote, source)


# ---- notes and shared refs -----------------------------------------------------------------


def merge_notes(ws: Workspace, name: str, listing: dict[str, str], skipped: dict[str, str]) -> str:
    """Fast-forward or merge the fetched decision notes, once they pass the checks (a copy
    that fails is recorded in `skipped` and left alone: "skipped")."""
    remote_ref = f"refs/notes/agy-remotes/{name}/decisions"
    remote, known = listing.get(remote_ref), listing.get(DECISIONS_REF)
    if remote is None:
        return "none on the remote"
    problem = sync_trust.kind_problem(ws, remote) if known != remote else None
    if problem is None and (
        known == remote or (known and gitcli.is_ancestor(ws.layout, remote, known))
    ):
        return "up-to-date"
    problem = problem or sync_trust.notes_problem(ws, known, remote)
    if problem is not None:
        skipped[remote_ref] = problem
        return "skipped"
    store = ws.store
    with lock_mod.held(ws.layout.common_agy_dir / "decisions.lock"):
        local = store.tip(DECISIONS_REF)
        if local == remote or (local and graph.is_descendant(store, local, remote)):
            result = "up-to-date"
        elif local is None or graph.is_descendant(store, remote, local):
            if not store.compare_and_swap(DECISIONS_REF, local, remote, "agy-state sync: notes"):
                raise WorkAtRisk("the decision notes moved during sync; try again")
            result = "fast-forward"
        else:
            why = gitcli.notes_merge(ws.layout, DECISIONS_REF, remote_ref, _identity(ws))
            if why is not None:
                raise Failure(f"merging the decision notes failed: {why}")
            result = "merged"
    if result != "up-to-date":
        from gitstate.usecases.decisions.records import refresh_pitfalls

        refresh_pitfalls(ws)
    return result


def _identity(ws: Workspace) -> dict[str, str]:
    """user.name and user.email for git's own merge commit, for those the user has not set."""
    found = {}
    known = gitcli.config(ws.layout, "user.name", "user.email")
    if not (os.environ.get("GIT_COMMITTER_NAME") or known.get("user.name")):
        found["user.name"] = "git-agy-state"
    if not (os.environ.get("GIT_COMMITTER_EMAIL") or known.get("user.email")):
        found["user.email"] = "agy-state@localhost"
    return found


def receive_shared(
    ws: Workspace, name: str, listing: dict[str, str], skipped: dict[str, str]
) -> tuple[list[str], list[str]]:
    """Create or fast-forward local archives, job records and checkpoint tags from the fetched
    copies; a ref that differs on both sides is reported and left alone (never forced); one
    whose copy fails the checks is recorded in `skipped` and left alone."""
    received: list[str] = []
    clashes: list[str] = []
    prefix = f"refs/agy-remotes/{name}/"
    for fetched, theirs in sorted(listing.items()):
        if not fetched.startswith(prefix):
            continue
        rest = fetched[len(prefix) :]
        if rest.startswith(("archive/", "jobs/")):
            local_ref = "refs/agy/" + rest
        elif rest.startswith("tags/checkpoint-"):
            local_ref = "refs/" + rest
        else:
            continue
        mine = listing.get(local_ref)  # tags: the tag objects, compared as such
        if theirs == mine:
            continue
        job = rest.startswith("jobs/")
        if mine is not None and not job:
            clashes.append(local_ref)
            continue
        problem = sync_trust.kind_problem(ws, theirs) if job else None
        if problem is None and mine is not None:
            if gitcli.is_ancestor(ws.layout, theirs, mine):
                continue  # ours is ahead
            if not gitcli.is_ancestor(ws.layout, mine, theirs):
                clashes.append(local_ref)
                continue
        problem = problem or _shared_problem(ws, rest, theirs)
        if problem is not None:
            skipped[fetched] = problem
        elif ws.store.compare_and_swap(local_ref, mine, theirs, "agy-state sync: receive"):
            received.append(local_ref)
    return received, clashes


def _shared_problem(ws: Workspace, rest: str, oid: str) -> str | None:
    if rest.startswith("archive/"):
        return sync_trust.snapshot_problem(ws, oid)
    if rest.startswith("jobs/"):
        return sync_trust.record_problem(ws, oid)
    return sync_trust.tag_problem(ws, oid)


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


def remote_has(name: str, listing: dict[str, str]) -> dict[str, str]:
    """{ref on the remote: id} as the fetch of `name` in `listing` shows them."""
    found: dict[str, str] = {}
    for prefix, remote_prefix in (
        (f"refs/agy-remotes/{name}/tags/", "refs/tags/"),
        (f"refs/agy-remotes/{name}/", "refs/agy/"),
        (f"refs/notes/agy-remotes/{name}/", "refs/notes/agy/"),
    ):
        for ref, oid in listing.items():
            if ref.startswith(prefix):
                found.setdefault(remote_prefix + ref[len(prefix) :], oid)
    return found


def push(
    ws: Workspace,
    remote: str,
    user: str,
    hold: frozenset[str] = frozenset(),
    known: Mapping[str, str] | None = None,
) -> Pushed:
    """`hold`: remote refs not to push this round (their fetched copy was skipped: ours would
    be rejected as not a fast-forward, and must not be forced); `known`: what the remote has."""
    known = known or {}
    # Only this person's own refs, by the pre-push hook's rules (docs/sync.md): teammates' refs
    # received here never travel on; a checkpoint only once its commit is on the remote.
    carried = carry.plan(ws, user, known, lambda: carry.ls_remote(ws, remote).values())
    specs = [spec for spec in carried.specs if spec.rpartition(":")[2] not in hold]
    if not specs:
        return Pushed([], [], [], [], [])
    done = network.push(ws.layout, remote, specs)
    result = Pushed([], [], [], [], [])
    for flag, _src, dst, summary in done.refs:
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
    if done.code != 0 and not (result.retry or result.refused or result.clashes or result.lost):
        raise done.failure(remote)
    return result


# ---- the view ---------------------------------------------------------------------------------


def refresh_view(ws: Workspace, force: bool) -> tuple[str, Path | None]:
    """A clean or missing view follows the new tip; a dirty one is left alone (or, with force,
    overwritten with its text kept)."""
    if ws.layout.workdir is None:
        return "none", None
    with ws.locked():
        data = ws.view_bytes()
        record = view.read_record(ws.layout)
        tip = gitcli.refs(ws.layout, ws.layout.state_ref).get(ws.layout.state_ref)
        if (
            data is not None
            and record is not None
            and record.ref == ws.layout.state_ref
            and record.snapshot == tip
            and record.blob == view.blob_id(data)
        ):
            return "unchanged", None  # the view is the tip, as recorded: no need for pygit2
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
        exclude.ensure_view(ws.layout)
        return "refreshed", kept


# ---- the whole sync ---------------------------------------------------------------------------


def sync(
    ws: Workspace, remote_arg: str | None = None, from_user: str | None = None, force: bool = False
) -> Synced:
    user = carry.agy_user(ws)
    if user is None:
        why, hint = carry.no_name(ws)
        raise Failure(f"sync needs your name for the remote: {why}", hint=hint)
    remote, name = choose_remote(ws, remote_arg)
    # `remote` (maybe with user:TOKEN@) goes to git alone; everything written or said uses this.
    shown = remote_url.public(remote)
    teammate = carry.user_slug(from_user) if from_user else None
    if from_user and not teammate:
        raise UsageError(f"{from_user!r} is not a user name")
    # `--from <yourself>` takes what others wrote onto your own chain (docs/sync.md).
    trust = sync_trust.trust_of(ws, user, accept_foreign=teammate == user)
    skipped: dict[str, str] = {}  # received ref -> why it was left alone (one warning each)
    with lock_mod.held(ws.layout.common_agy_dir / "sync.lock", wait=120):
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
            listing = gitcli.refs(ws.layout, *LISTED, *listed_copies(name))
            _refuse_lost(lost, listing, name, shown)
            chains, hold = _bring_chains(ws, user, teammate, name, shown, listing, trust, skipped)
            notes = merge_notes(ws, name, listing, skipped)
            if notes == "skipped":
                hold.add(DECISIONS_REF)
            got, clashes = receive_shared(ws, name, listing, skipped)
            received += got
            outcome = push(ws, remote, user, frozenset(hold), remote_has(name, listing))
            pushed += outcome.ok
            clashes += [c for c in outcome.clashes if c not in clashes]
            _refuse_refused(outcome, shown)
            lost = {ref: (listing.get(fetched_copy(name, ref)), why) for ref, why in outcome.lost}
            if not (outcome.retry or lost):
                break
            if rounds >= MAX_ROUNDS:
                _give_up(outcome, lost, rounds, shown)
            time.sleep(0.05 * rounds)  # someone is pushing right now: let them finish
        view_state, overwritten = refresh_view(ws, force)
    return Synced(
        shown,
        user,
        chains,
        notes,
        received,
        clashes,
        pushed,
        view_state,
        rounds,
        overwritten,
        tuple(skipped.items()),
    )


def _refuse_lost(
    lost: dict[str, tuple[str | None, str]], listing: dict[str, str], name: str, shown: str
) -> None:
    """A ref the remote could not update last round, which nobody has moved since: the remote
    refuses it for a reason of its own, and another round would only be refused again."""
    for ref, (seen, why) in lost.items():
        if listing.get(fetched_copy(name, ref)) == seen:
            raise Failure(
                f"{shown} refused {ref}: {why}",
                hint=f"{shown} could not update it, and nobody else had moved it; "
                "the remote's server log says why",
            )


def _bring_chains(
    ws: Workspace,
    user: str,
    teammate: str | None,
    name: str,
    shown: str,
    listing: dict[str, str],
    trust: sync_trust.Trust,
    skipped: dict[str, str],
) -> tuple[list[ChainResult], set[str]]:
    """One round's merge of your chains (and a teammate's with --from) with the remote's copies;
    also the refs to hold back from the push (a chain skipped, or kept elsewhere)."""
    chains: list[ChainResult] = []
    hold: set[str] = set()
    for chain_ws, local_ref, remote_ref in own_chains(ws, user, name, listing):
        chain = bring_chain(chain_ws, local_ref, remote_ref, shown, listing, trust)
        chains.append(chain)
        if chain.action == "skipped":
            skipped.setdefault(remote_ref, chain.reason)
        if chain.action in ("skipped", "elsewhere") and chain.commit:
            hold.add(f"refs/agy/users/{user}/{local_ref[len('refs/agy/') :]}")
    if teammate and teammate != user:
        teammate_ref = f"refs/agy-remotes/{name}/users/{teammate}/state"
        if teammate_ref not in listing:
            raise NotFound(f"{shown} has no state chain of {teammate}")
        chain = bring_chain(
            ws, ws.layout.state_ref, teammate_ref, f"{teammate} on {shown}", listing, None
        )
        chains.append(chain)
        if chain.action == "skipped":
            skipped.setdefault(teammate_ref, chain.reason)
    return chains, hold


def _refuse_refused(outcome: Pushed, shown: str) -> None:
    if outcome.refused:
        ref, why = outcome.refused[0]
        raise Failure(
            f"{shown} refused {ref}: {why}",
            hint="the remote may not accept refs outside refs/heads and refs/tags; "
            "ask for refs/agy/* and refs/notes/agy/* to be allowed",
        )


def _give_up(
    outcome: Pushed, lost: dict[str, tuple[str | None, str]], rounds: int, shown: str
) -> NoReturn:
    moving = ", ".join([*outcome.retry, *sorted(lost)])
    raise WorkAtRisk(
        f"{shown} kept moving: {moving} still rejected after "
        f"{rounds} rounds of fetch, merge and push",
        hint="try again in a moment",
    )


# ---- remote setup -----------------------------------------------------------------------------


def setup(ws: Workspace, remote_arg: str | None) -> list[str]:
    """Record `remote` as the agy remote (`agy.remote`: pre-push and sync carry this person's
    refs there only) and make a plain `git fetch` bring the agy refs; never set
    remote.<name>.push."""
    remote, name = choose_remote(ws, remote_arg)
    if remote != name:
        raise UsageError("remote setup needs a configured remote", hint="git remote add NAME URL")
    key = f"remote.{remote}.fetch"
    done = []
    for spec in fetch_specs(name)[:2]:
        if multivar.add(ws.store, key, spec):
            done.append(f"added {key} {spec}")
    if ws.store.config_value(carry.AGY_REMOTE) != remote:
        ws.store.set_config(carry.AGY_REMOTE, remote)
        done.append(f"set {carry.AGY_REMOTE}={remote}: your agy refs are carried there only")
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
