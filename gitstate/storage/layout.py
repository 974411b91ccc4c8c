"""Where things live for one work tree: its root, git dir, common dir, and its state ref.

Standard library only: the agent hooks use this on every turn, where importing pygit2 would cost
more than the whole hook. The rest of the storage layer builds on it. `owner_refusal` is git's
`safe.directory` owner check for the hooks (docs/hooks.md, "Whose repository").
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

MAIN_STATE_REF = "refs/agy/state"
# The decisions notes ref, named here (stdlib only) for sync and the git hooks, which may not
# load pygit2 to learn it; storage/notes.py reads and writes it.
DECISIONS_REF = "refs/notes/agy/decisions"
VIEW_NAME = "STATE.md"
AGY_DIR = "agy"  # the tool's folder inside a git dir: a work tree's own, and the common dir's

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

    class _Fields(NamedTuple):
        workdir: Path | None  # None in a bare repository
        gitdir: Path  # this work tree's own git dir (.git, or .git/worktrees/<name>)
        commondir: Path  # shared by all work trees: objects, refs, config, hooks
        worktree: str | None  # the linked work tree's name; None for the main one

else:
    # Importing `typing` costs an agent hook ~3 ms on every turn: at run time the fields come
    # from collections (already loaded by the interpreter); type checkers see the typed form.
    _Fields = namedtuple("_Fields", "workdir gitdir commondir worktree")


class Layout(_Fields):
    __slots__ = ()

    @property
    def state_ref(self) -> str:
        if self.worktree is None:
            return MAIN_STATE_REF
        return f"refs/agy/wt/{self.worktree}/state"

    @property
    def view_path(self) -> Path | None:
        return None if self.workdir is None else self.workdir / VIEW_NAME

    @property
    def agy_dir(self) -> Path:
        """This work tree's private files: view record, lock, overwritten views."""
        return self.gitdir / AGY_DIR

    @property
    def common_agy_dir(self) -> Path:
        """What every work tree of the repository shares: the ref writers' lock, the sync and
        decisions locks, pitfalls.md, the jobs' folders and their queue."""
        return self.commondir / AGY_DIR

    @classmethod
    def from_dirs(cls, gitdir: Path, workdir: Path | None) -> Layout:
        gitdir = gitdir.resolve()
        common_file = gitdir / "commondir"
        if common_file.is_file():
            common = Path(common_file.read_text().strip())
            commondir = (common if common.is_absolute() else gitdir / common).resolve()
            worktree: str | None = gitdir.name
        else:
            commondir, worktree = gitdir, None
        return cls(workdir.resolve() if workdir else None, gitdir, commondir, worktree)


def _gitdir_of(dotgit: Path) -> Path | None:
    """The git dir a `.git` entry stands for: the directory itself, or a `gitdir:` file's target."""
    if dotgit.is_dir():
        return dotgit if (dotgit / "HEAD").exists() else None
    try:
        first = dotgit.read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    target = Path(first[len("gitdir:") :].strip())
    return target if target.is_absolute() else (dotgit.parent / target)


def discover(start: Path | str | None = None) -> Layout | None:
    """The layout of the work tree containing `start` (default: the current directory).

    Honours GIT_DIR / GIT_WORK_TREE as git does. Returns None when no work tree is found by
    walking up; callers that must also handle bare repositories fall back to pygit2.
    """
    env_gitdir = os.environ.get("GIT_DIR")
    if env_gitdir:
        gitdir = Path(env_gitdir)
        work = os.environ.get("GIT_WORK_TREE")
        return Layout.from_dirs(gitdir, Path(work) if work else Path.cwd())
    here = Path(start if start is not None else os.getcwd()).resolve()
    ceiling = os.environ.get("GIT_CEILING_DIRECTORIES", "")
    ceilings = {Path(p).resolve() for p in ceiling.split(os.pathsep) if p}
    for directory in (here, *here.parents):
        if directory.name == ".git":
            return None  # inside a git dir: leave it to pygit2
        dotgit = directory / ".git"
        if dotgit.exists():
            found = _gitdir_of(dotgit)
            if found is not None:
                return Layout.from_dirs(found, directory)
        if directory in ceilings:
            break
    return None


# ---- git's owner check (safe.directory), for the agent hooks --------------------------------


def _owned_by_caller(path: Path) -> bool:
    """git's is_path_owned_by_current_uid(): lstat's owner is the effective uid; as root, a
    root-owned path, or one owned by the uid in SUDO_UID (read as git's strtoul reads it)."""
    try:
        owner = os.lstat(path).st_uid
    except OSError:
        return False
    euid = os.geteuid()
    if euid == 0:
        if owner == 0:
            return True
        euid = _sudo_uid(os.environ.get("SUDO_UID"), euid)
    return owner == euid


def _sudo_uid(value: str | None, default: int) -> int:
    """SUDO_UID as git's extract_id_from_env(): strtoul with the whole string consumed; an
    empty, partial or overflowing value leaves the uid as it was."""
    if not value:
        return default
    text = value.lstrip(" \t\n\r\f\v")
    negative = text[:1] == "-"
    if text[:1] in ("+", "-"):
        text = text[1:]
    if not text or not text.isascii() or not text.isdigit():
        return default
    number = int(text)
    if number > 2**64 - 1:
        return default  # ERANGE
    if negative:
        number = (2**64 - number) % 2**64
    return number & 0xFFFFFFFF  # uid_t


def owner_refusal(layout: Layout) -> str | None:
    """Why git would refuse to open this repository (its `safe.directory` owner check), or
    None when git would open it.

    As git does: with GIT_DIR set nothing is checked; otherwise the `.git` file (if any), the
    work tree and the git dir must be owned by the caller (see _owned_by_caller). When one is
    not, whether `safe.directory` lets it through is decided by git itself (`git rev-parse`),
    because only git knows its protected configuration exactly: the system file of its build,
    the global files, `-c` and GIT_CONFIG_COUNT/GIT_CONFIG_PARAMETERS, includes, `*`, `/*`
    prefixes and the empty value that resets the list; never the repository's own config. So
    the usual case costs three lstat calls and no process.
    """
    if os.environ.get("GIT_DIR"):
        return None
    paths = [layout.gitdir]
    top = layout.workdir
    if top is not None:
        dotgit = top / ".git"  # lstat'ed, as git does: a symlinked .git is the link's owner
        paths = [top, dotgit] if dotgit.is_dir() else [dotgit, top, layout.gitdir]
    if not os.environ.get("GIT_TEST_ASSUME_DIFFERENT_OWNER") and all(
        _owned_by_caller(p) for p in paths
    ):
        return None
    return _ask_git(top if top is not None else layout.gitdir)


def _ask_git(where: Path) -> str | None:
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "--git-dir"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"not owned by you, and git could not be asked about safe.directory ({exc})"
    if proc.returncode == 0:
        return None
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    return (lines[0] if lines else f"git rev-parse exited {proc.returncode}").removeprefix(
        "fatal: "
    )
