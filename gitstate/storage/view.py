"""STATE.md in the work tree: reading it safely, replacing it atomically, knowing if it is clean.

The view record (`<gitdir>/agy/view`) remembers which snapshot was last written to the view, the
git blob id of the bytes written, and that snapshot's author, so "clean or dirty" and "who wrote
it" need no pygit2 (hooks read this). Standard library only, and nothing heavier than `os` at
import (no pathlib: paths are joined with os.path, so the hooks' str layout and storage's
pathlib Layout both work; storage/hooklayout.py): the agent hooks import this on every turn. The view is written before its record: a
crash in between leaves a view that reads as dirty but equals the tip, which the next save
recognises; never the reverse.

`read_regular` is the one reader of STATE.md: only a regular file (a symlink, FIFO, device or
directory is refused, never followed or opened for reading), opened non-blocking, read bounded
(docs/hooks.md, "What is injected").
"""

from __future__ import annotations

import os
import stat
import time

from gitstate.storage.rawobjects import is_oid, read_ref

TMP_PREFIX = ".STATE.md.agy-"
LIMIT = 1024 * 1024  # = document.model.MAX_BYTES (not imported: the hooks load no parser)


# Type checkers take this as typing.TYPE_CHECKING (True); at run time `typing` stays unloaded:
# the stop guard reads the record on every agent stop (see storage/layout.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from gitstate.errors import InvalidDocument
    from gitstate.storage.hooklayout import AnyLayout as Layout


class Record:
    """What the view was last written from (a plain class, not a namedtuple: building one at
    import costs each hook a tenth of a millisecond)."""

    __slots__ = ("author", "blob", "ref", "snapshot")

    def __init__(self, ref: str, snapshot: str, blob: str, author: str | None = None) -> None:
        self.ref = ref  # the chain the view belongs to
        self.snapshot = snapshot  # commit id last written to the view
        self.blob = blob  # git blob id of the bytes written
        self.author = author  # that snapshot's author, as git stores it: `Name <e> T +0000`

    def _key(self) -> tuple[str, str, str, str | None]:
        return (self.ref, self.snapshot, self.blob, self.author)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "Record(ref={!r}, snapshot={!r}, blob={!r}, author={!r})".format(*self._key())


class NotRegular(Exception):
    """STATE.md exists but is no regular file (or cannot be read): never followed or read."""

    def __init__(self, path: Path | str, what: str) -> None:
        super().__init__(f"{path} is {what}")
        self.path = str(path)
        self.what = what  # "a symbolic link", "a FIFO", "a directory", "unreadable: …"


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob (SHA-1 repositories)."""
    try:
        # CPython's built-in SHA-1: the stop guard runs every turn, and hashlib's OpenSSL
        # start-up costs it a few milliseconds.
        from _sha1 import sha1  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import sha1
    digest: str = sha1(b"blob %d\x00" % len(data) + data).hexdigest()
    return digest


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, what in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def read_regular(path: Path | str, limit: int) -> bytes | None:
    """At most `limit` bytes of the regular file `path`; None if there is none.

    NotRegular for anything else: a symlink (even one pointing inside the work tree or at
    nothing), a FIFO, socket, device or directory. The file is lstat'ed first (a device is
    never opened), then opened with O_NOFOLLOW|O_NONBLOCK (a FIFO swapped in meanwhile cannot
    block, a symlink swapped in cannot be followed) and fstat'ed: it must be the same regular
    file."""
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as exc:
        raise NotRegular(path, f"unreadable: {exc.strerror}") from None
    what = _kind(before.st_mode)
    if what is not None:
        raise NotRegular(path, what)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise NotRegular(path, f"unreadable: {exc.strerror}") from None
    try:
        now = os.fstat(fd)
        what = _kind(now.st_mode)
        if what is not None or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise NotRegular(path, what or "replaced while it was read")
        chunks = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except BlockingIOError:
        raise NotRegular(path, "unreadable: it would block") from None
    except NotRegular:
        raise
    except OSError as exc:
        raise NotRegular(path, f"unreadable: {exc.strerror}") from None
    finally:
        os.close(fd)


def read(layout: Layout, limit: int = LIMIT + 1) -> bytes | None:
    """The view's bytes (at most `limit`: enough to know it is too big), or None if missing.

    A view that is not a regular file is refused with InvalidDocument (exit 1, with a hint):
    not "no view", because a later rename onto it would fail, or replace what the user
    keeps there, after the ref had moved."""
    path = layout.view_path
    if path is None:
        return None
    try:
        return read_regular(path, limit)
    except NotRegular as exc:
        raise unreadable(exc) from None


def unreadable(exc: NotRegular) -> InvalidDocument:
    from gitstate.document.validate import Problem
    from gitstate.errors import InvalidDocument

    if exc.what.startswith("unreadable"):
        message = f"cannot read {exc.path}: {exc.what.removeprefix('unreadable: ')}"
        hint = "STATE.md must be a readable file"
    else:
        message = f"{exc.path} is {exc.what}, not a regular file: git agy-state does not follow it"
        hint = (
            "move it away (mv STATE.md STATE.md.old), then git agy-state checkout writes the view "
            "from the tip"
        )
    return InvalidDocument(message, (Problem(None, message, "not_a_file"),), hint=hint)


def size(layout: Layout) -> int | None:
    path = layout.view_path
    try:
        return None if path is None else os.lstat(path).st_size
    except FileNotFoundError:
        return None


def _record_path(layout: Layout) -> str:
    return os.path.join(layout.agy_dir, "view")


def read_record(layout: Layout) -> Record | None:
    """The record: a line `<snapshot> <blob> <ref>`, then optionally `author <ident>`;
    anything else counts as no record."""
    try:  # a regular file only, never blocking: the stop guard reads it every turn
        data = read_regular(_record_path(layout), 4096)
        text = data.decode() if data is not None else ""
    except (NotRegular, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    fields = lines[0].split() if lines else []
    if len(fields) != 3:
        return None
    snapshot, blob, ref = fields
    author = None
    if len(lines) > 1 and lines[1].startswith("author "):
        author = lines[1][len("author ") :].strip() or None
    return Record(ref, snapshot, blob, author)


# ---- the valid mark: view bytes the stop guard already found valid ------------------------


def _mark_path(layout: Layout) -> str:
    return os.path.join(layout.agy_dir, "view-valid")


def read_valid_mark(layout: Layout) -> str | None:
    """The mark the stop guard left when it last found the view valid (hooks/agent.py:
    _valid_mark: the bytes' blob id, the version, the language settings), or None."""
    try:
        data = read_regular(_mark_path(layout), 4096)
        return data.decode() if data is not None else None
    except (NotRegular, UnicodeDecodeError):
        return None


def write_valid_mark(layout: Layout, mark: str) -> None:
    """Remember `mark` (best effort: a read-only git dir only costs the next stop a check)."""
    if read_valid_mark(layout) == mark:
        return
    try:
        write_atomic(_mark_path(layout), mark.encode())
    except OSError:
        return


def write_atomic(path: Path | str, data: bytes) -> None:
    """Replace `path` with `data` in one rename; a reader sees the old bytes or the new."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f"{TMP_PREFIX}{os.getpid()}-{time.monotonic_ns()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        try:
            os.replace(tmp, path)
        except IsADirectoryError:  # name what is in the way, not our temporary file
            import errno

            raise IsADirectoryError(errno.EISDIR, "it is a directory", str(path)) from None
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: Path | str) -> None:
    try:  # noqa: SIM105 (contextlib is not loaded by the hooks, and costs them ~0.8 ms)
        os.unlink(path)
    except FileNotFoundError:
        pass


def check_record_writable(layout: Layout) -> None:
    """Refuse before any ref moves when the record could not be replaced afterwards: its path
    holds a directory or another non-regular file (CannotWrite, exit 1)."""
    path = _record_path(layout)
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    what = _kind(mode)
    if what is not None:
        from gitstate.errors import CannotWrite

        raise CannotWrite(
            f"cannot write {path}: it is {what}, not a regular file; nothing was saved",
            hint=f"move it away (mv {path} {path}.old), then try again",
        )


def write_record(layout: Layout, record: Record) -> None:
    text = f"{record.snapshot} {record.blob} {record.ref}\n"
    if record.author:
        text += f"author {_one_line(record.author)}\n"
    write_atomic(_record_path(layout), text.encode())


def _one_line(text: str) -> str:
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())


def drop_record(layout: Layout) -> None:
    _unlink(_record_path(layout))


def write(layout: Layout, data: bytes, snapshot: str, author: str | None = None) -> None:
    """Write the view from a snapshot, then record it (in that order; see the module doc).

    `author` is the snapshot's author ident (`Name <email> <time> <tz>`); read from the
    commit when not given, so the hooks can say who wrote what they inject."""
    path = layout.view_path
    assert path is not None, "a bare repository has no view"
    write_atomic(path, data)
    if author is None:
        author = commit_author(layout, snapshot)
    write_record(layout, Record(layout.state_ref, snapshot, blob_id(data), author))


def remove(layout: Layout) -> None:
    path = layout.view_path
    if path is not None:
        _unlink(path)
    drop_record(layout)


def clean_stale_tmp(layout: Layout) -> None:
    """Remove temp files a killed writer left (called under the work tree's lock)."""
    if layout.workdir is None:
        return
    try:
        names = os.listdir(layout.workdir)
    except OSError:
        return
    for name in names:
        if name.startswith(TMP_PREFIX) and name.endswith(".tmp"):
            _unlink(os.path.join(layout.workdir, name))


def keep_overwritten(layout: Layout, data: bytes) -> Path:
    """Save view bytes about to be overwritten where the user can find them; returns the path."""
    from pathlib import Path  # only a save that keeps the user's text pays for pathlib

    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    path = Path(layout.agy_dir, "overwritten", f"STATE-{stamp}-{blob_id(data)[:8]}.md")
    write_atomic(path, data)
    return path


def status(layout: Layout, data: bytes | None) -> str:
    """`missing`, `clean` (bytes equal what was last written from the recorded snapshot) or `dirty`."""
    if data is None:
        return "missing"
    record = read_record(layout)
    if record is None or record.ref != layout.state_ref:
        return "dirty"
    if record.blob == blob_id(data):
        return "clean"
    # The title (its timestamp) never counts (docs/format.md): a view that differs from what
    # was written only there is clean. The written blob is loose until a gc, read with zlib;
    # a packed one is left to Workspace.view_state (pygit2), so the hooks stay cheap.
    written = _loose_blob(layout, record.blob, len(data) + 4096)
    if written is not None and same_but_title(written, data):
        return "clean"
    return "dirty"


def same_but_title(a: bytes, b: bytes) -> bool:
    """Whether two STATE.md texts are equal after their first line (the title)."""
    return a.partition(b"\n")[2] == b.partition(b"\n")[2] and a[:2] == b[:2] == b"# "


def _inflate(layout: Layout, oid: str, read: int, out: int) -> tuple[bytes, bool] | None:
    """A loose object's inflated start (at most `out` bytes, from at most `read` bytes of its
    file; -1: the whole file), and whether that was the whole object (its zlib stream ended,
    nothing after it); None when it is not loose or not zlib."""
    if len(oid) not in (40, 64) or not all(c in "0123456789abcdef" for c in oid):
        return None
    path = os.path.join(layout.commondir, "objects", oid[:2], oid[2:])
    try:
        with open(path, "rb") as handle:
            raw = handle.read(read)
    except OSError:
        return None
    import zlib

    stream = zlib.decompressobj()
    try:
        data = stream.decompress(raw, out)
    except zlib.error:
        return None
    return data, stream.eof and not stream.unused_data


def _loose_blob(layout: Layout, oid: str, limit: int) -> bytes | None:
    """A loose blob's content when it is at most `limit` bytes, else None."""
    found = _inflate(layout, oid, -1, limit + 64)
    if found is None:
        return None
    head, sep, body = found[0].partition(b"\0")
    if not sep or head != b"blob %d" % len(body):
        return None  # not a blob, or longer than the view by more than `limit` allows
    return body


# ---- provenance: who wrote a snapshot, and the chain's tip, without pygit2 --------------------


def commit_author(layout: Layout, commit: str) -> str | None:
    """The author line of `commit` as git stores it (`Name <email> 1767323045 +0000`), or None.

    A loose object is read with zlib (a fresh snapshot is loose); a packed one is asked of
    `git cat-file` (one process, only then)."""
    header = _loose_object(layout, commit, 1 << 16)
    if header is None:
        header = _git_cat(layout, "commit", commit)
    if header is None:
        return None
    for line in header.split(b"\n"):
        if not line:
            break  # the end of the headers
        if line.startswith(b"author "):
            return line[len(b"author ") :].decode("utf-8", "replace")
    return None


def _loose_object(layout: Layout, oid: str, limit: int) -> bytes | None:
    """The start (at most `limit` bytes) of a loose commit's body, or None."""
    found = _inflate(layout, oid, limit, limit)
    if found is None:
        return None
    head, sep, body = found[0].partition(b"\0")
    if not sep or not head.startswith(b"commit "):
        return None
    return body


def _git_cat(layout: Layout, kind: str, rev: str) -> bytes | None:
    import subprocess

    from gitstate.storage.gitcli import clean_env

    try:
        proc = subprocess.run(
            ["git", f"--git-dir={layout.commondir}", "--no-replace-objects", "cat-file", kind, rev],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=clean_env(),
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def ref_tip(layout: Layout, ref: str) -> str | None:
    """The commit a ref names: its loose file, else packed-refs (storage/rawobjects.py); None
    when it is absent, unreadable or not a plain id."""
    try:
        value = read_ref(layout.commondir, ref)
    except (OSError, UnicodeDecodeError):
        return None
    return value if value is not None and is_oid(value) else None


COMMIT_LIMIT = 1024 * 1024  # a loose commit read whole to prove it one (ours are < 1 KB)


def names_loose_commit(layout: Layout, ref: str, oid: str) -> bool:
    """Whether `ref` (its own file, else packed-refs) names `oid`, and `oid` is a whole loose
    commit: the zlib stream ends, its header says `commit <size>` and the body is that size.
    What Store.tip accepts, proven without loading pygit2 (sync checks each chain so before a
    push). False proves nothing: a packed object, a symbolic ref, a blob, a damaged file; the
    caller then asks Store.tip, which says what is wrong (docs/exit-codes.md)."""
    if ref_tip(layout, ref) != oid:
        return False
    found = _inflate(layout, oid, COMMIT_LIMIT + 1, COMMIT_LIMIT + 64)
    if found is None:
        return False
    data, whole = found
    head, sep, body = data.partition(b"\0")
    kind, _, size = head.partition(b" ")
    return whole and bool(sep) and kind == b"commit" and size.isdigit() and int(size) == len(body)


def tip_state(layout: Layout, limit: int = LIMIT) -> tuple[str, str | None, bytes] | None:
    """The chain's tip as (commit, author ident, its STATE.md), read with `git cat-file`; None
    with no tip, no STATE.md blob in it, or one over `limit` bytes (never read whole)."""
    import subprocess

    from gitstate.storage.gitcli import clean_env

    tip = ref_tip(layout, layout.state_ref)
    if tip is None:
        return None
    author = commit_author(layout, tip)
    try:
        proc = subprocess.Popen(
            ["git", f"--git-dir={layout.commondir}", "--no-replace-objects", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=clean_env(),
        )
    except OSError:
        return None
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(f"{tip}:STATE.md\n".encode())
        proc.stdin.close()
        fields = proc.stdout.readline(200).split()
        if len(fields) != 3 or fields[1] != b"blob" or not fields[2].isdigit():
            return None
        size = int(fields[2])
        if size > limit:
            return None
        data = proc.stdout.read(size)
        return (tip, author, data) if len(data) == size else None
    except OSError:
        return None
    finally:
        proc.kill()
        proc.wait(timeout=10)
