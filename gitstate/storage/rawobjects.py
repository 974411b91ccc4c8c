"""Git objects and refs as files, with the standard library only: one copy for every writer
that skips pygit2 (the agent hooks' save in storage/loose.py, the job record in
jobs/storage/record_commit.py) and the hooks' reads (storage/view.py).

Objects are written as git writes loose ones (docs/hooks.md, "The hooks' own save"): zlib over
`<type> <size>\\0<body>`, named by its SHA-1, made whole in a temporary file in objects/xx/ and
renamed into place, read-only. Nothing but `os` is imported at load time: the hooks' read
path loads this module, and zlib and sha1 are only for writing.
"""

from __future__ import annotations

import os

_HEX = frozenset("0123456789abcdef")
PACKED_LINE_LIMIT = 8192  # bytes of one packed-refs line: an id, a space, a ref name


def is_oid(value: str, lengths: tuple[int, ...] = (40, 64)) -> bool:
    """A full object id: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits."""
    return len(value) in lengths and _HEX.issuperset(value)


def read_ref(commondir: str | os.PathLike[str], ref: str) -> str | None:
    """A ref's value as git stores it: its loose file's text (an id, or `ref: …` for a symbolic
    ref), else its packed-refs id; None when it is in neither. OSError or UnicodeDecodeError
    for a file that cannot be read as text: the caller decides what that means."""
    try:
        with open(os.path.join(commondir, ref), "rb") as handle:
            return handle.read(4096).decode("utf-8").strip()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        pass
    try:
        handle = open(os.path.join(commondir, "packed-refs"), "rb")  # noqa: SIM115 (with below)
    except FileNotFoundError:
        return None
    want = ref.encode("utf-8")
    with handle:
        # Line by line, each read bounded: a repository's packed-refs may be large, and a
        # hostile one a single endless line; neither is read whole into memory.
        while line := handle.readline(PACKED_LINE_LIMIT):
            if len(line) == PACKED_LINE_LIMIT and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # no ref name is that long: skip it
                    line = handle.readline(PACKED_LINE_LIMIT)
                continue
            value, _, name = line.partition(b" ")
            if name.strip() == want and not line.startswith((b"#", b"^")):
                return value.decode("utf-8")
    return None


def write_loose(objects: str | os.PathLike[str], kind: str, body: bytes) -> str:
    """Store one loose object and return its id; one already there is left alone. A killed
    writer leaves at most a `tmp_obj_*` file, which git's prune removes. Not fsynced: neither
    git (core.fsync leaves loose objects out by default) nor libgit2 do."""
    import zlib

    try:
        # CPython's built-in SHA-1: hashlib's OpenSSL start-up costs a hook milliseconds.
        from _sha1 import sha1  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - another interpreter
        from hashlib import sha1
    data = b"%s %d\0" % (kind.encode(), len(body)) + body
    oid: str = sha1(data).hexdigest()
    folder = os.path.join(objects, oid[:2])
    path = os.path.join(folder, oid[2:])
    if os.path.exists(path):
        return oid
    try:  # noqa: SIM105 - contextlib would be one more import on the hooks' read path
        os.mkdir(folder, 0o777)
    except FileExistsError:
        pass
    tmp = os.path.join(folder, f"tmp_obj_{os.getpid()}_{os.urandom(6).hex()}")
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
    try:
        try:
            os.write(out, zlib.compress(data, 1))  # core.looseCompression's default
        finally:
            os.close(out)
        os.rename(tmp, path)  # a concurrent writer's copy holds the same bytes
    except BaseException:
        try:  # noqa: SIM105 - as above
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return oid


def tree_bytes(entries: list[tuple[str, str]]) -> bytes:
    """A tree of regular files: (name, blob id) pairs, sorted as git sorts plain file names
    (bytewise, which is code point order for UTF-8)."""
    return b"".join(
        b"100644 " + name.encode() + b"\0" + bytes.fromhex(oid) for name, oid in sorted(entries)
    )


def commit_bytes(tree: str, parents: list[str], author: str, committer: str, text: str) -> bytes:
    """A commit object's body as libgit2 writes it for Store: no signature, no encoding header.
    `author` and `committer` are `Name <email> seconds +hhmm` (snapshot_text.signature)."""
    head = [f"tree {tree}", *(f"parent {parent}" for parent in parents)]
    head += [f"author {author}", f"committer {committer}"]
    return ("\n".join(head) + "\n\n" + text).encode()
