"""Where things live for one work tree, as plain strings: the layout the agent hooks use.

storage/layout.py's `Layout` holds pathlib paths, and importing pathlib (fnmatch, urllib.parse
and ipaddress come with it) costs an agent hook about 5 ms a turn, more than its own work
(docs/hooks.md, "Start-up cost"). So the walk up to the git dir, git's owner check and the paths
a hook reads are done here with `os.path` only, no namedtuple, no `typing` at run time;
layout.discover wraps this module's `discover`, so the CLI and the hooks find the same work tree
by the same code. `HookLayout.to_layout()` gives the pathlib `Layout` the rest of storage takes
(a save, the jobs' writers); it imports pathlib only then.
"""

from __future__ import annotations

import os
import stat

MAIN_STATE_REF = "refs/agy/state"
VIEW_NAME = "STATE.md"
AGY_DIR = "agy"  # the tool's folder inside a git dir: a work tree's own, and the common dir's

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from gitstate.storage.layout import Layout


class HookLayout:
    """Layout's four fields and its properties, as `str` (realpath'ed, as Layout's are)."""

    __slots__ = ("commondir", "gitdir", "workdir", "worktree")

    def __init__(
        self, workdir: str | None, gitdir: str, commondir: str, worktree: str | None
    ) -> None:
        self.workdir = workdir  # None in a bare repository
        self.gitdir = gitdir  # this work tree's own git dir (.git, or .git/worktrees/<name>)
        self.commondir = commondir  # shared by all work trees: objects, refs, config, hooks
        self.worktree = worktree  # the linked work tree's name; None for the main one

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HookLayout):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"HookLayout{self._key()!r}"

    def _key(self) -> tuple[str | None, str, str, str | None]:
        return (self.workdir, self.gitdir, self.commondir, self.worktree)

    @property
    def state_ref(self) -> str:
        if self.worktree is None:
            return MAIN_STATE_REF
        return f"refs/agy/wt/{self.worktree}/state"

    @property
    def view_path(self) -> str | None:
        return None if self.workdir is None else os.path.join(self.workdir, VIEW_NAME)

    @property
    def agy_dir(self) -> str:
        """This work tree's private files: view record, lock, overwritten views."""
        return os.path.join(self.gitdir, AGY_DIR)

    @property
    def common_agy_dir(self) -> str:
        """What every work tree of the repository shares (see Layout.common_agy_dir)."""
        return os.path.join(self.commondir, AGY_DIR)

    def to_layout(self) -> Layout:
        """The same place as storage/layout.py's Layout (pathlib), for the code that takes it."""
        from pathlib import Path

        from gitstate.storage.layout import Layout

        workdir = Path(self.workdir) if self.workdir is not None else None
        return Layout(workdir, Path(self.gitdir), Path(self.commondir), self.worktree)

    @classmethod
    def from_dirs(cls, gitdir: str | Path, workdir: str | Path | None) -> HookLayout:
        """A work tree's layout from its git dir: a linked one's `commondir` file names the
        shared git dir (relative to its own), and its folder name is the work tree's name."""
        gitdir = os.path.realpath(gitdir)
        common_file = os.path.join(gitdir, "commondir")
        commondir, worktree = gitdir, None
        common = _read_small(common_file)
        if common is not None:
            commondir = os.path.realpath(os.path.join(gitdir, common.strip()))
            worktree = os.path.basename(gitdir)
        top = os.path.realpath(workdir) if workdir else None
        return cls(top, gitdir, commondir, worktree)


if TYPE_CHECKING:
    from typing import TypeAlias

    # What the hooks' readers (view.py, gitconfig.py, the jobs' probe) take: either layout.
    AnyLayout: TypeAlias = "Layout | HookLayout"


def pathlib_layout(place: AnyLayout) -> Layout:
    """Either layout as storage/layout.py's pathlib Layout, for the code that needs Path fields
    (pygit2's Store, the commands); a HookLayout is converted, importing pathlib only then."""
    return place.to_layout() if isinstance(place, HookLayout) else place


def brain_dir() -> str:
    """Where the memory brain is (memory/storage/layout.py:brain_path, docs/memory.md):
    `AGY_BRAIN`, else `${XDG_DATA_HOME:-~/.local/share}/agy-state/brain.git`; here, in str, so
    that a hook learns there is no brain without loading the memory slice."""
    given = os.environ.get("AGY_BRAIN")
    if given:
        return _absolute(os.path.expanduser(given))
    data = os.environ.get("XDG_DATA_HOME")
    home = os.path.expanduser(os.environ.get("HOME", "~"))
    base = data if data else os.path.join(home, ".local", "share")
    return _absolute(os.path.join(base, "agy-state", "brain.git"))


def _absolute(path: str) -> str:
    """pathlib's absolute(): the current directory in front of a relative path, `..` kept."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _read_small(path: str, limit: int = 4096) -> str | None:
    """The start of a small regular file (a `.git` file, a worktree's `commondir`), or None.
    Bounded and non-blocking: these files sit in a work tree anyone may have shaped, and a FIFO
    or a huge file there must neither hang nor flood a hook."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _gitdir_of(dotgit: str) -> str | None:
    """The git dir a `.git` entry stands for: the directory itself, or a `gitdir:` file's target."""
    if os.path.isdir(dotgit):
        return dotgit if os.path.exists(os.path.join(dotgit, "HEAD")) else None
    text = _read_small(dotgit)
    if not text:
        return None
    first = text.splitlines()[0]
    if not first.startswith("gitdir:"):
        return None
    # os.path.join keeps an absolute target as it is, and reads a relative one from the work tree.
    return os.path.join(os.path.dirname(dotgit), first[len("gitdir:") :].strip())


def discover(start: str | Path | None = None) -> HookLayout | None:
    """The layout of the work tree containing `start` (default: the current directory).

    Honours GIT_DIR / GIT_WORK_TREE as git does. Returns None when no work tree is found by
    walking up (inside a git dir, or in a bare repository: callers that must handle those fall
    back to pygit2, storage/discovery.py)."""
    env_gitdir = os.environ.get("GIT_DIR")
    if env_gitdir:
        work = os.environ.get("GIT_WORK_TREE")
        return HookLayout.from_dirs(env_gitdir, work if work else os.getcwd())
    directory = os.path.realpath(start if start is not None else os.getcwd())
    ceiling = os.environ.get("GIT_CEILING_DIRECTORIES", "")
    ceilings = {os.path.realpath(p) for p in ceiling.split(os.pathsep) if p}
    while True:
        if os.path.basename(directory) == ".git":
            return None  # inside a git dir: leave it to pygit2
        dotgit = os.path.join(directory, ".git")
        if os.path.exists(dotgit):
            found = _gitdir_of(dotgit)
            if found is not None:
                return HookLayout.from_dirs(found, directory)
        parent = os.path.dirname(directory)
        if directory in ceilings or parent == directory:
            return None
        directory = parent


# ---- git's owner check (safe.directory), for the agent hooks --------------------------------


def _owned_by_caller(path: str | Path) -> bool:
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


def owner_refusal(layout: AnyLayout) -> str | None:
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
    paths: list[str | Path] = [layout.gitdir]
    top = layout.workdir
    if top is not None:
        dotgit = os.path.join(top, ".git")  # lstat'ed, as git does: a symlinked .git is its own
        paths = [top, dotgit] if os.path.isdir(dotgit) else [dotgit, top, layout.gitdir]
    if not os.environ.get("GIT_TEST_ASSUME_DIFFERENT_OWNER") and all(
        _owned_by_caller(p) for p in paths
    ):
        return None
    return _ask_git(top if top is not None else layout.gitdir)


def _ask_git(where: str | Path) -> str | None:
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
