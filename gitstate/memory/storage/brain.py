"""The brain repository (pygit2): a bare repository whose ref refs/agy/memory holds the memory.

Creates it with the same root commit on every machine (frozen templates, fixed author and time),
reads trees as path -> bytes, writes commits of changed files, and moves the ref only by
compare-and-swap with a reflog line (through Store). Knows files and commits, not what they
mean; never touches a work tree (the brain has none). The brain is private: its folder is 0700
(tightened on every open) and whatever it writes is written under a 0077 umask (docs/memory.md).
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from gitstate.errors import Failure, NotFound
from gitstate.memory.document import files
from gitstate.memory.storage import cache as memory_cache
from gitstate.memory.storage import packing
from gitstate.memory.storage.layout import MEMORY_REF, BrainLayout
from gitstate.storage import graph, private
from gitstate.storage.layout import Layout
from gitstate.storage.snapshots import Store, compose_message, parse_trailers

ROOT_TIME = 1767225600  # 2026-01-01T00:00:00Z: the root commit is the same everywhere
ROOT_AUTHOR = ("git-agy-state", "agy-state@localhost")
ROOT_SUBJECT = "memory: init"
OBJECT_WRITE_ATTEMPTS = 5


class Brain:
    """One brain repository, opened."""

    def __init__(self, layout: BrainLayout, repo: pygit2.Repository) -> None:
        self.layout = layout
        self._repo = repo
        path = Path(layout.path)
        self._store = Store(Layout(None, path, path, None), repo)
        private.tighten(path, private.DIR_MODE)  # a brain an older version made 0755

    # ---- opening --------------------------------------------------------------------------

    @classmethod
    def open(cls, layout: BrainLayout | None = None) -> Brain:
        layout = layout or BrainLayout()
        if not layout.exists():
            raise NotFound(
                f"no brain at {layout.path}",
                hint="git agy-state memory init (or set AGY_BRAIN to your brain repository)",
            )
        return cls(layout, _repository(layout.path))

    @classmethod
    def create(cls, layout: BrainLayout | None = None) -> tuple[Brain, bool]:
        """The brain, created if missing (a bare repository and the root commit); (brain,
        whether anything was created). Idempotent, and safe against a concurrent create."""
        layout = layout or BrainLayout()
        created = False
        if not layout.exists():
            path = Path(layout.path)
            if path.exists() and (not path.is_dir() or any(path.iterdir())):
                raise Failure(
                    f"{path} exists and is not a brain repository",
                    hint="set AGY_BRAIN to another path, or move it away",
                )
            private.make_dir(path)  # and its missing parents (the agy-state data dir), 0700
            with private.Umask():
                pygit2.init_repository(str(path), bare=True)
            created = True
        brain = cls(layout, _repository(layout.path))
        private.make_dir(layout.agy_dir)  # before the lock files, the index and the cache
        if brain.config("core.logAllRefUpdates") is None:
            # libgit2 keeps no reflog in a bare repository unless told to.
            brain.set_config("core.logAllRefUpdates", "true")
        if brain.tip() is None and brain.compare_and_swap(
            None, brain.root_commit(), "agy-state memory: init"
        ):
            created = True
        if brain._repo.head_is_unborn and brain.tip() is not None:
            # Plain `git --git-dir=<brain> log` then shows the memory.
            with private.Umask():
                brain._repo.references.create("HEAD", MEMORY_REF, force=True)
        return brain, created

    def root_commit(self) -> str:
        """The fixed root commit (written if absent): the templates, a fixed author and time."""
        contents = {files.MEMORY_FILE: files.MEMORY_TEMPLATE, files.USER_FILE: files.USER_TEMPLATE}
        tree = self._tree(None, {path: text.encode() for path, text in contents.items()})
        signature = pygit2.Signature(*ROOT_AUTHOR, ROOT_TIME, 0)
        message = compose_message(ROOT_SUBJECT, [(files.FORMAT_TRAILER, files.FORMAT_VERSION)])
        with private.Umask():
            oid = self._repo.create_commit(None, signature, signature, message, tree, [])
        return str(oid)

    # ---- reading --------------------------------------------------------------------------

    def tip(self, ref: str = MEMORY_REF) -> str | None:
        return self._store.tip(ref)

    def check_format(self, commit: str) -> None:
        """Refuse a brain written by a newer, incompatible version of the tool."""
        message = self._repo[commit].peel(pygit2.Commit).message
        version = parse_trailers(message).get(files.FORMAT_TRAILER, files.FORMAT_VERSION)
        if version.isdigit() and int(version) > int(files.FORMAT_VERSION):
            raise Failure(
                f"the brain's format is {version}; this git agy-state reads format "
                f"{files.FORMAT_VERSION}",
                hint="upgrade git agy-state",
            )

    def listing(self, commit: str | None) -> dict[str, str]:
        """path -> blob id of every file in the commit's tree."""
        if commit is None:
            return {}
        found: dict[str, str] = {}
        stack: list[tuple[str, pygit2.Tree]] = [("", self._repo[commit].peel(pygit2.Tree))]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree:
                path = prefix + (entry.name or "")
                if entry.type_str == "tree":
                    stack.append((path + "/", self._repo[entry.id].peel(pygit2.Tree)))
                elif entry.type_str == "blob":
                    found[path] = str(entry.id)
        return found

    def blob(self, blob_id: str) -> bytes:
        return bytes(self._repo[blob_id].peel(pygit2.Blob).data)

    def read(self, commit: str | None, path: str) -> bytes | None:
        if commit is None:
            return None
        tree = self._repo[commit].peel(pygit2.Tree)
        try:
            entry = tree[path]
        except KeyError:
            return None
        obj = self._repo[entry.id]
        return bytes(obj.data) if isinstance(obj, pygit2.Blob) else None

    def text(self, commit: str | None, path: str) -> str | None:
        data = self.read(commit, path)
        return None if data is None else data.decode("utf-8", "replace")

    def files(self, commit: str | None) -> dict[str, bytes]:
        return {path: self.blob(blob) for path, blob in self.listing(commit).items()}

    def commit_time(self, commit: str) -> int:
        return graph.commit_time(self._store, commit)

    def first_parents(self, commit: str | None, limit: int = 100_000) -> list[str]:
        """The commit and its first-parent ancestors, newest first."""
        found: list[str] = []
        current = commit
        while current is not None and len(found) < limit:
            found.append(current)
            parents = self._repo[current].peel(pygit2.Commit).parent_ids
            current = str(parents[0]) if parents else None
        return found

    def merge_base(self, a: str, b: str) -> str | None:
        return graph.merge_base(self._store, a, b)

    def descendant_of(self, commit: str, ancestor: str) -> bool:
        return graph.is_descendant(self._store, commit, ancestor)

    def entry_id(self, commit: str, name: str) -> str | None:
        """The id of the entry `name` at the top of the commit's tree (a file or a folder)."""
        tree = self._repo[commit].peel(pygit2.Tree)
        return str(tree[name].id) if name in tree else None

    def folder(self, commit: str, name: str) -> dict[str, str]:
        """entry name -> id of what the top-level folder `name` holds ({} when it is no folder)."""
        found = self.entry_id(commit, name)
        sub = self._repo[found] if found is not None else None
        if not isinstance(sub, pygit2.Tree):
            return {}
        return {entry.name or "": str(entry.id) for entry in sub}

    def remote_names(self) -> list[str]:
        """The brain's configured remotes."""
        return [name for name in self._repo.remotes.names() if name]

    # ---- writing --------------------------------------------------------------------------

    def _tree(self, parent: str | None, changes: dict[str, bytes | None]) -> pygit2.Oid:
        with private.Umask():
            return self._write_tree(parent, changes)

    def _write_tree(self, parent: str | None, changes: dict[str, bytes | None]) -> pygit2.Oid:
        """The parent's tree with `changes` applied by path: only the folders on a changed path
        are rewritten, every other entry is reused by id (a brain of 500 session logs writes
        the sessions/ folder and the root, not 500 entries through an index)."""
        base = self._repo[parent].peel(pygit2.Tree) if parent is not None else None
        return self._build(base, _nest(changes)) or self._repo.TreeBuilder().write()

    def _build(self, base: pygit2.Tree | None, changes: _Nested) -> pygit2.Oid | None:
        """`base` (None: an empty folder) with `changes`; None when nothing is left in it (an
        empty folder is no entry in git)."""
        builder = self._repo.TreeBuilder(base) if base is not None else self._repo.TreeBuilder()
        for name, change in sorted(changes.items()):
            entry = base[name] if base is not None and name in base else None
            if isinstance(change, dict):
                sub = self._repo[entry.id] if entry is not None else None
                oid = self._build(sub if isinstance(sub, pygit2.Tree) else None, change)
                if oid is not None:
                    builder.insert(name, oid, pygit2.enums.FileMode.TREE)
                elif entry is not None:
                    builder.remove(name)
            elif change is not None:
                builder.insert(name, self._repo.create_blob(change), pygit2.enums.FileMode.BLOB)
            elif entry is not None:
                builder.remove(name)
        return builder.write() if len(builder) else None

    def commit(
        self,
        base: str | None,
        changes: dict[str, bytes | None],
        parents: list[str],
        message: str,
    ) -> str:
        """A commit of `base`'s tree with `changes` (None deletes a path); no ref moves."""
        author = self._store.signature("AUTHOR")
        committer = self._store.signature("COMMITTER")
        for attempt in range(OBJECT_WRITE_ATTEMPTS):
            try:
                tree = self._tree(base, changes)
                with private.Umask():
                    oid = self._repo.create_commit(None, author, committer, message, tree, parents)
                return str(oid)
            except OSError:
                # A repack's prune-packed removes emptied objects/xx folders; libgit2 does not
                # retry a loose object whose folder went under it (git does). Objects are
                # content-addressed, so writing them again is harmless.
                if attempt + 1 == OBJECT_WRITE_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    def tree_id(self, commit: str) -> str:
        return str(self._repo[commit].peel(pygit2.Commit).tree_id)

    def compare_and_swap(self, expected: str | None, new: str, reason: str) -> bool:
        with private.Umask():  # the ref file and its reflog
            return self._store.compare_and_swap(MEMORY_REF, expected, new, reason)

    def refresh_cache(self) -> str | None:
        """Bring the plain-text cache to the tip (the agent hook reads it)."""
        tip = self.tip()
        cache = self.layout.cache_dir
        if tip is None or memory_cache.tip(cache) == tip:
            return tip
        memory_cache.update(cache, tip, self.listing(tip), self.blob)
        return tip

    def advance_cache(self, parent: str, commit: str, changes: dict[str, bytes | None]) -> None:
        """The cache moved from `parent` to `commit`, a commit of `changes` on it, touching only
        the changed files; a full refresh when the cache was not at `parent`."""
        cache = self.layout.cache_dir
        by_blob = {
            path: (None if data is None else (str(pygit2.hash(data)), data))
            for path, data in changes.items()
        }
        if not memory_cache.advance(cache, parent, commit, by_blob):
            self.refresh_cache()

    def maintain(self) -> bool:
        """Start a detached repack when loose objects outweigh the packs (storage/packing.py);
        whether one started. `gc.auto=0` in the brain's config turns it off."""
        objects = Path(self.layout.path) / "objects"
        level = packing.pressure(objects)
        if level * packing.SHARE <= 1 or self.config("gc.auto") == "0":
            return False
        # Past the cap the writes outrun the running repack: wait for it, then start the next.
        wait = packing.WAIT_LIMIT if level * packing.CAP > 1 else 0.0
        return packing.start(Path(self.layout.path), Path(self.layout.agy_dir), wait)

    # ---- config ---------------------------------------------------------------------------

    def config(self, key: str) -> str | None:
        return self._store.config_value(key)

    def set_config(self, key: str, value: str) -> None:
        with private.Umask():
            self._store.set_config(key, value)


# A change set as folders: name -> new bytes, None (delete) or the changes inside a folder.
_Nested = dict[str, "bytes | _Nested | None"]


def _nest(changes: dict[str, bytes | None]) -> _Nested:
    """path -> change as nested folders; a path with an empty, `.` or `..` part is a bug of the
    caller (memory paths are checked before they get here), never written."""
    root: _Nested = {}
    for path, data in changes.items():
        *folders, name = path.split("/")
        if any(part in ("", ".", "..") for part in (*folders, name)):
            raise ValueError(f"not a path inside the brain: {path!r}")
        node = root
        for folder in folders:
            child = node.get(folder)
            if not isinstance(child, dict):
                child = node[folder] = {}
            node = child
        node[name] = data
    return root


def _repository(path: Path) -> pygit2.Repository:
    try:
        repo = pygit2.Repository(str(path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except (pygit2.GitError, KeyError):
        raise Failure(
            f"{path} is not a git repository",
            hint="point AGY_BRAIN at a brain (git agy-state memory init creates one)",
        ) from None
    if not repo.is_bare:
        # A project's repository would carry refs/agy/memory along with its own sync.
        raise Failure(
            f"{path} has a work tree; the brain must be a bare repository of its own",
            hint="unset AGY_BRAIN, or point it at a bare repository",
        )
    return repo
