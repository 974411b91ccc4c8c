"""Checking what a remote sent before anything reads it (docs/sync.md, "Received refs").

Every question goes to the `git` command and reads object headers, never whole objects, until
the size is known to be within the caps: a remote decides what lands in refs/agy-remotes/, not
how much memory or time a sync spends. Each check returns the reason a ref is bad, or None.
Standard library only; the caps are the policy's (gitstate.usecases.sync.trust) to pass in.
"""

from __future__ import annotations

import itertools
import subprocess
from typing import NamedTuple

from gitstate.storage import gitcli
from gitstate.storage.layout import Layout

REGULAR_FILE = "100644"
TIMEOUT = 120.0


class Entry(NamedTuple):
    mode: str
    kind: str  # blob, tree, commit (a gitlink)
    oid: str
    size: int  # -1 unless a blob
    name: bytes


class NewCommit(NamedTuple):
    oid: str
    author: str  # email
    committer: str  # email
    signature: str  # %G?: G good, U good but unknown validity, N none, B bad, … ("" unasked)
    key: str  # %GF: the fingerprint of the signing key ("" when none)


def _git(layout: Layout, *args: str, input: bytes | None = None) -> tuple[int, bytes]:
    """`git ARGS…` with byte output (names and blobs are bytes, not the locale's text)."""
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=layout.workdir or layout.commondir,
            env=gitcli.clean_env(GIT_DIR=str(layout.gitdir)),
            input=input if input is not None else b"",
            capture_output=True,
            check=False,
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 128, str(exc).encode()
    return proc.returncode, proc.stdout


def headers(layout: Layout, specs: list[str]) -> list[tuple[str, int] | None]:
    """(type, size) of each object named (`<id>`, `<id>^{tree}`…), None when missing: one
    `git cat-file --batch-check`, which reads only object headers."""
    if not specs:
        return []
    code, out = _git(
        layout, "cat-file", "--batch-check", input="".join(s + "\n" for s in specs).encode()
    )
    lines = out.decode("utf-8", "replace").splitlines()
    if code != 0 or len(lines) != len(specs):
        return [None] * len(specs)
    found: list[tuple[str, int] | None] = []
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            found.append((parts[1], int(parts[2])))
        else:
            found.append(None)  # `<spec> missing`, `<spec> ambiguous`
    return found


def tree_entries(layout: Layout, tree: str) -> list[Entry] | None:
    """The entries of one tree in the order they are stored (None: git cannot read it)."""
    code, out = _git(layout, "ls-tree", "-z", "--long", "--full-tree", tree)
    if code != 0:
        return None
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, tab, name = record.partition(b"\t")
        parts = meta.decode("ascii", "replace").split()
        if not tab or len(parts) != 4:
            return None
        mode, kind, oid, size = parts
        entries.append(Entry(mode, kind, oid, int(size) if size.isdigit() else -1, name))
    return entries


def _sort_key(entry: Entry) -> bytes:
    # git orders a tree's entries by name, a subtree's name compared as if it ended in "/".
    return entry.name + b"/" if entry.mode == "40000" else entry.name


def in_git_order(entries: list[Entry]) -> bool:
    """Strictly in git's order, no name twice. Lookups (git's, libgit2's) search a tree as if
    it were: in a tree that is not, a file that is there can read as absent."""
    keys = [_sort_key(e) for e in entries]
    names = [e.name for e in entries]
    return all(a < b for a, b in itertools.pairwise(keys)) and len(set(names)) == len(names)


def tip_problem(layout: Layout, oid: str, max_bytes: int) -> str | None:
    """Why the commit `oid` may not be read as a snapshot or record: its type, its size, and
    its tree — in git's order, holding only regular files of at most `max_bytes` each."""
    found = headers(layout, [oid, f"{oid}^{{tree}}"])
    head, tree = found[0], found[1]
    if head is None:
        return "its object is missing"
    if head[0] != "commit":
        return f"it points to a {head[0]}, not a commit"
    if head[1] > max_bytes:
        return f"its commit is {head[1]} bytes (the cap is {max_bytes})"
    if tree is None or tree[0] != "tree":
        return "its commit has no tree"
    if tree[1] > max_bytes:
        return f"its tree is {tree[1]} bytes (the cap is {max_bytes})"
    entries = tree_entries(layout, f"{oid}^{{tree}}")
    if entries is None:
        return "its tree cannot be read"
    if not in_git_order(entries):
        return "its tree is malformed (entries out of order or repeated)"
    for entry in entries:
        name = entry.name.decode("utf-8", "replace")
        if entry.mode != REGULAR_FILE or entry.kind != "blob":
            what = {"tree": "a directory", "commit": "a gitlink"}.get(entry.kind, entry.kind)
            if entry.mode in ("120000", "100755") and entry.kind == "blob":
                what = "a symlink" if entry.mode == "120000" else "an executable"
            return f"its {name} is {what}, not a regular file"
        if entry.size > max_bytes:
            return f"its {name} is {entry.size} bytes (the cap is {max_bytes})"
    return None


def read_blob(layout: Layout, spec: str, max_bytes: int) -> bytes | None:
    """The blob `spec` (e.g. `<commit>:STATE.md`) when it is one of at most `max_bytes`."""
    head = headers(layout, [spec])[0]
    if head is None or head[0] != "blob" or head[1] > max_bytes:
        return None
    code, out = _git(layout, "cat-file", "blob", spec)
    return out if code == 0 else None


def within(layout: Layout, local: str | None, remote: str, limit: int) -> bool:
    """Does `remote` bring at most `limit` commits that `local` lacks (on every parent)? The
    count stops at limit + 1."""
    args = ["rev-list", "--count", f"--max-count={limit + 1}", remote]
    if local:
        args += ["--not", local]
    code, out = _git(layout, *args)
    text = out.decode("ascii", "replace").strip()
    return code == 0 and text.isdigit() and int(text) <= limit


def new_commits(
    layout: Layout, local: str | None, remote: str, limit: int, signatures: bool = False
) -> list[NewCommit] | None:
    """The commits of `remote` not in `local` along first parents, newest first; None when
    there are more than `limit` (the walk stops there). `signatures` asks git to verify each
    (it runs the user's verifier once per commit)."""
    # Each field cut at 256 characters (git pads it with blanks): what a commit claims costs
    # no more than that here, however long the remote made it.
    cut = "%<(256,trunc)"
    fields = f"%H%x00{cut}%ae%x00{cut}%ce" + (f"%x00%G?%x00{cut}%GF" if signatures else "")
    args = [  # log, not rev-list: rev-list does not read the signing config to verify with
        "log",
        "--no-show-signature",
        "--no-color",
        "--first-parent",
        f"--max-count={limit + 1}",
        f"--format={fields}",
        remote,
    ]
    if local:
        args += ["--not", local]
    code, out = _git(layout, *args)
    if code != 0:
        return None
    found = []
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split("\0")
        if len(parts) not in (3, 5):
            continue
        oid, author, committer, *signed = (part.strip() for part in parts)
        sig, key = (signed[0], signed[1]) if signed else ("", "")
        found.append(NewCommit(oid, author, committer, sig, key))
    return None if len(found) > limit else found


def changed_blobs(layout: Layout, old: str | None, new: str) -> list[tuple[str, str]] | None:
    """(path, blob id) of every file that `new`'s tree adds or changes against `old`'s,
    recursively (None: git cannot read them)."""
    if old:
        args = ["diff-tree", "-r", "-z", "--no-renames", old, new]
    else:
        args = ["ls-tree", "-r", "-z", new]
    code, out = _git(layout, *args)
    if code != 0:
        return None
    found = []
    records = out.split(b"\0")
    if old:
        # `:<old mode> <new mode> <old id> <new id> <status>\0<path>\0`
        for meta, path in zip(records[0::2], records[1::2], strict=False):
            parts = meta.decode("ascii", "replace").split()
            if len(parts) == 5 and parts[4] != "D":
                found.append((path.decode("utf-8", "replace"), parts[3]))
    else:
        for record in records:
            meta, tab, path = record.partition(b"\t")
            parts = meta.decode("ascii", "replace").split()
            if tab and len(parts) == 3:
                found.append((path.decode("utf-8", "replace"), parts[2]))
    return found


def read_blobs(layout: Layout, oids: list[str]) -> list[bytes] | None:
    """The blobs, in one `git cat-file --batch` (callers have checked their sizes)."""
    if not oids:
        return []
    code, out = _git(layout, "cat-file", "--batch", input="".join(o + "\n" for o in oids).encode())
    if code != 0:
        return None
    blobs = []
    at = 0
    for _ in oids:
        end = out.find(b"\n", at)
        parts = out[at:end].split()
        if end < 0 or len(parts) != 3 or not parts[2].isdigit():
            return None
        size = int(parts[2])
        blobs.append(out[end + 1 : end + 1 + size])
        at = end + 1 + size + 1
    return blobs
