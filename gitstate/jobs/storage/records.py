"""The git side of a job (pygit2): its branch and worktree, what it changed, its record commits.

Worktrees live under the MAIN work tree's `.agy/worktrees/<id>` (also when a job is started
from a linked worktree), on branch `agy/<id>`. What a job changed is always read from git
(`<base>..agy/<id>`), never taken from the agent's word. Each finished round is one commit on
`refs/agy/jobs/<id>` (record_commit.py writes it without pygit2; `commit_record` here is its
pygit2 writer, for what that one does not speak for).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pygit2

from gitstate.errors import Failure, WorkAtRisk
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.storage import record_commit
from gitstate.jobs.storage.record_commit import (
    RECORD_FILES,
    record_contents,
    record_ref,
    subject_of,
)
from gitstate.storage import exclude, refs
from gitstate.storage.layout import Layout
from gitstate.storage.snapshots import Store, parse_trailers

EXCLUDE_LINES = (".agy/", "/STATE.md")
__all__ = ["record_contents", "record_ref", "subject_of"]  # the record's text: record_commit.py


def branch_name(job_id: str) -> str:
    return f"agy/{job_id}"


def main_store(layout: Layout) -> Store:
    """The store of the main work tree (job records and branches are repository-wide)."""
    repo = pygit2.Repository(str(layout.commondir))
    workdir = Path(repo.workdir) if repo.workdir else None
    main = Layout(workdir.resolve() if workdir else None, layout.commondir, layout.commondir, None)
    return Store(main, repo)


def main_workdir(store: Store) -> Path:
    workdir = store.layout.workdir
    if workdir is None:
        raise Failure("jobs need a work tree; the repository is bare")
    return workdir


def worktree_path(store: Store, job_id: str) -> Path:
    return main_workdir(store) / ".agy" / "worktrees" / jobfiles.check_id(job_id)


def ensure_excluded(store: Store) -> None:
    """`.agy/` and `/STATE.md` in info/exclude: a job's worktree and view are never committed."""
    exclude.ensure(store.layout, EXCLUDE_LINES)


def create_worktree(store: Store, job_id: str, base: str) -> tuple[Path, str]:
    """Branch agy/<id> at `base` and a worktree for it; returns (path, branch)."""
    repo = store.repo
    name = branch_name(job_id)
    branch = repo.branches.local.create(name, repo[base].peel(pygit2.Commit))
    path = worktree_path(store, job_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    repo.add_worktree(job_id, str(path), branch)
    return path, name


def recreate_worktree(store: Store, job_id: str) -> Path:
    """The worktree again, from the branch (after cleanup removed it)."""
    repo = store.repo
    path = worktree_path(store, job_id)
    if path.exists() and job_id in repo.list_worktrees():
        return path
    branch = repo.branches.local.get(branch_name(job_id))
    if branch is None:
        raise Failure(
            f"branch {branch_name(job_id)} is gone, so the job's worktree cannot be re-created",
            hint="start a new job: git agy-state job run",
        )
    _forget_worktree(repo, job_id)
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    repo.add_worktree(job_id, str(path), branch)
    return path


def uncommitted(path: Path) -> list[str]:
    """Files the agent left changed or untracked in the worktree (ignored files aside)."""
    try:
        status = pygit2.Repository(str(path)).status()
    except (pygit2.GitError, KeyError):
        return []
    return sorted(p for p, flags in status.items() if not flags & pygit2.GIT_STATUS_IGNORED)


def tracked_changes(workdir: Path, store: Store | None = None) -> list[str]:
    """Tracked files with uncommitted changes in a work tree (untracked and ignored aside);
    [] when it cannot be read as a repository. `store`: that work tree's, open already."""
    try:
        repo = store.repo if store is not None else pygit2.Repository(str(workdir))
        status = repo.status(untracked_files="no")
    except (pygit2.GitError, TypeError):
        return []
    return [p for p, flags in status.items() if not flags & pygit2.GIT_STATUS_IGNORED]


def worktree_head(path: str | None) -> str | None:
    """The commit HEAD names in the work tree at `path`; None when there is none to name."""
    try:
        return str(pygit2.Repository(path).head.target)
    except Exception:  # no path, no repository there, an unborn HEAD: no tip to report
        return None


def remove_worktree(store: Store, job_id: str, force: bool) -> bool:
    """Remove the worktree and its directory; refuses (5) to drop uncommitted work unless
    `force`. Returns False when there was nothing to remove."""
    path = worktree_path(store, job_id)
    known = job_id in store.repo.list_worktrees()
    if not path.exists() and not known:
        return False
    if path.exists() and not force:
        left = uncommitted(path)
        if left:
            shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
            raise WorkAtRisk(
                f"the worktree of {job_id} has uncommitted changes: {shown}",
                hint="commit them on the job's branch, or --force to throw them away",
            )
    _forget_worktree(store.repo, job_id)
    shutil.rmtree(path, ignore_errors=True)  # libgit2's prune leaves the directory on disk
    return True


def _forget_worktree(repo: pygit2.Repository, job_id: str) -> None:
    with contextlib.suppress(KeyError, pygit2.GitError):
        repo.lookup_worktree(job_id).prune(True)


def branch_tip(store: Store, job_id: str) -> str | None:
    branch = store.repo.branches.local.get(branch_name(job_id))
    return str(branch.target) if branch is not None else None


def merged(store: Store, job_id: str) -> bool:
    """Whether agy/<id> is reachable from the main work tree's HEAD (as `git branch -d` asks)."""
    tip = branch_tip(store, job_id)
    if tip is None:
        return True
    repo = store.repo
    if repo.head_is_unborn:
        return False
    head = str(repo.head.target)
    return head == tip or bool(repo.descendant_of(head, tip))


def delete_chain(store: Store, job_id: str) -> bool:
    """Drop the job worktree's own state chain (refs/agy/wt/<id>/state), as a submission that
    failed half-way leaves it; False when there is none, or when someone moved it meanwhile
    (compare-and-delete: only the tip the failed submission left goes)."""
    ref = f"refs/agy/wt/{job_id}/state"
    seeded = store.repo.references.get(ref)
    if seeded is None or seeded.type != pygit2.enums.ReferenceType.DIRECT:
        return False
    return store.delete_ref(ref, str(seeded.target), f"agy job: {job_id} not submitted")


def delete_branch(store: Store, job_id: str) -> bool:
    name = branch_name(job_id)
    if store.repo.branches.local.get(name) is None:
        return False
    store.repo.branches.local.delete(name)
    return True


def changes(store: Store, base: str, tip: str | None) -> tuple[list[str], str]:
    """(`git diff --name-only base..tip`, `git diff --stat base..tip`)."""
    if not tip or tip == base:
        return [], ""
    repo = store.repo
    diff = repo.diff(repo[base].peel(pygit2.Commit), repo[tip].peel(pygit2.Commit))
    diff.find_similar()  # git diff detects renames by default; so do we
    names = sorted({delta.new_file.path for delta in diff.deltas})
    stat = diff.stats.format(pygit2.enums.DiffStatsFormat.FULL, 80) if names else ""
    return names, str(stat)


# ---- records ------------------------------------------------------------------------------


def commit_record(
    store: Store, job_id: str, round_no: int, state: str, contents: dict[str, str], subject: str
) -> str:
    """One commit on refs/agy/jobs/<id> for a finished round (compare-and-swap, retried), by
    pygit2: record_commit.commit's writer for what its own does not speak for."""
    repo = store.repo
    builder = repo.TreeBuilder()
    for name in RECORD_FILES:
        if name in contents:
            builder.insert(
                name, repo.create_blob(contents[name].encode()), pygit2.GIT_FILEMODE_BLOB
            )
    tree = str(builder.write())
    message = record_commit.message(job_id, round_no, state, subject)
    ref = record_ref(job_id)

    def attempt() -> str | None:
        tip = store.tip(ref)
        commit = store.commit_tree(tree, [tip] if tip else [], message)
        if store.compare_and_swap(ref, tip, commit, f"agy-state: job {job_id} round {round_no}"):
            return commit
        return None

    return refs.retry(ref, attempt, "the round's record was not written")


def recorded_round(store: Store, job_id: str) -> int | None:
    tip = store.tip(record_ref(job_id))
    if tip is None:
        return None
    value = parse_trailers(store.message(tip)).get("Agy-Job-Round", "")
    return int(value) if value.isdigit() else None


def ensure_committed(layout: Layout, job_id: str, round_no: int) -> None:
    """Commit the round's record from the runtime files if the supervisor did not get to it."""
    store = main_store(layout)
    if recorded_round(store, job_id) == round_no:
        return
    job = jobfiles.files(layout, job_id)
    result = jobfiles.read_json(job.result)
    if not isinstance(result, dict) or result.get("round") != round_no:
        return
    contents, _ = record_contents(job, jobfiles.read_text(job.result))
    record_commit.commit(
        layout, job_id, round_no, str(result.get("state")), contents, subject_of(result)
    )
