"""Where the brain lives: the bare repository, its ref, and our files inside its git dir.

Standard library only (no pygit2, no `typing` at run time, pathlib only when a Path property
is read): the agent hook finds the brain and its plain-text cache through this module on every
session start; whether there is a brain at all it asks storage/hooklayout.py:brain_dir.
"""

from __future__ import annotations

import os

from gitstate.storage.hooklayout import brain_dir

MEMORY_REF = "refs/agy/memory"
REMOTE_KEY = "agy.memoryRemote"
INJECT_KEY = "agy.memoryInject"
BUDGET_KEY = "agy.memoryBudget"
DEFAULT_BUDGET = 14000  # bytes, about 3,500 tokens
INJECT_MODES = ("core", "off")

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from gitstate.storage.hooklayout import AnyLayout as Layout


def brain_path() -> Path:
    """`AGY_BRAIN`, else `${XDG_DATA_HOME:-~/.local/share}/agy-state/brain.git`."""
    from pathlib import Path

    return Path(brain_dir())


class BrainLayout:
    """The files of one brain; `root` is the bare repository (its git dir) as a str.

    `memory search` on a current index goes through the str attributes (`root`, `agy_root`,
    `cache_root`, `index_file`) and never imports pathlib (docs/memory.md, "Search"); the Path
    properties, for everything else, import it on first use.
    """

    __slots__ = ("root",)

    def __init__(self, path: str | Path | None = None) -> None:
        self.root = os.fspath(path) if path is not None else brain_dir()

    @property
    def path(self) -> Path:
        from pathlib import Path

        return Path(self.root)

    @property
    def agy_root(self) -> str:
        return os.path.join(self.root, "agy")

    @property
    def cache_root(self) -> str:
        return os.path.join(self.root, "agy", "cache")

    @property
    def index_file(self) -> str:
        return os.path.join(self.root, "agy", "index.sqlite")

    @property
    def agy_dir(self) -> Path:
        return self.path / "agy"

    @property
    def cache_dir(self) -> Path:
        """A plain-text mirror of the ref's tip, for readers that must not load pygit2."""
        return self.agy_dir / "cache"

    @property
    def index_path(self) -> Path:
        """The SQLite FTS5 index: derived from the ref, rebuilt from it at any time."""
        return self.agy_dir / "index.sqlite"

    @property
    def lock_path(self) -> Path:
        return self.agy_dir / "lock"

    @property
    def sync_lock_path(self) -> Path:
        return self.agy_dir / "sync.lock"

    @property
    def injected_path(self) -> Path:
        """Conversation ids (agy) that already got the memory core."""
        return self.agy_dir / "injected"

    def exists(self) -> bool:
        """A git dir is there (HEAD and objects): `memory init` or a write made it."""
        return os.path.isfile(os.path.join(self.root, "HEAD")) and os.path.isdir(
            os.path.join(self.root, "objects")
        )

    def tip(self) -> str | None:
        """The commit refs/agy/memory names, read as git stores it (storage/rawobjects.py: the
        loose file, else packed-refs), without pygit2; None when there is none or it cannot be
        read this way (a symbolic ref, a file that is not text). Here rather than in
        memory/storage/mirror.py: a search on a current index needs the ref and nothing of the
        cache, so it imports one module fewer."""
        if not self.exists():
            return None
        from gitstate.storage.rawobjects import is_oid, read_ref

        try:
            value = read_ref(self.root, MEMORY_REF)  # the brain is bare: its git dir is the root
        except (OSError, UnicodeDecodeError):
            return None
        return value if value is not None and is_oid(value) else None


def inject_settings(layout: Layout | None) -> tuple[str, int]:
    """(`agy.memoryInject`: core or off, `agy.memoryBudget` in bytes) from the git config the
    work tree sees (its own, then the user's); an unknown mode reads as core."""
    from gitstate.storage import gitconfig

    mode = (gitconfig.get(layout, INJECT_KEY) or "core").strip().lower()
    if mode in ("false", "no", "0", "none"):
        mode = "off"
    budget = gitconfig.get_int(layout, BUDGET_KEY, DEFAULT_BUDGET)
    return ("off" if mode == "off" else "core"), max(budget, 0)


def work_tree_name(layout: Layout | None, fallback: str | Path | None = None) -> str:
    """The project's name: the main work tree's folder (a linked worktree, e.g. a job's, belongs
    to the same project), else the folder of `fallback` (or the current directory)."""
    if layout is not None:
        common = os.fspath(layout.commondir)
        if os.path.basename(common) == ".git" and layout.worktree is not None:
            return os.path.basename(os.path.dirname(common))
        if layout.workdir is not None:
            return os.path.basename(os.fspath(layout.workdir))
    from pathlib import Path

    return Path(fallback if fallback is not None else os.getcwd()).absolute().name
