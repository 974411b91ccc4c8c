"""The agent hooks' own save: snapshot objects written as loose files, without pygit2.

A stop guard or pre-compact that finds STATE.md edited by hand saves it (docs/hooks.md). Through
pygit2 that save costs the hook more than everything else it does (pygit2's import alone is
about three times the interpreter's start). `LooseStore` offers the part of `Store` the
document writer calls on that path, with the standard library: the tip and its STATE.md read
from loose objects with zlib (a packed one through one `git cat-file --batch`, spawned without
the subprocess module), blob, one-entry tree and commit written as loose objects (temporary
file, then rename into objects/xx/), the ref moved by storage/refs.py as every writer does.

It is used only where it provably writes what pygit2's Store writes, byte for byte: `refusal`
lists what sends the hook to pygit2 instead (docs/hooks.md, "The hooks' own save"). Anything
unexpected on the way (an object of an odd shape, a symbolic ref, an identity libgit2 would
trim or refuse) is handed to pygit2's Store too, so every error reads as it always has; so is
any Store method not defined here.
"""

from __future__ import annotations

import os
import time
import zlib

from gitstate.storage import refs
from gitstate.storage.hooklayout import pathlib_layout
from gitstate.storage.rawobjects import commit_bytes, is_oid, read_ref, tree_bytes, write_loose
from gitstate.storage.snapshot_text import (
    DEFAULT_EMAIL,
    DEFAULT_NAME,
    STATE_FILE,
    Snapshot,
    iso_time,
    parse_trailers,
    plain_ident,
    reflog_ident,
    reflog_reason,
    signature,
    when,
)

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
# They also see LooseStore as a Store, so each method here is checked against Store's own.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitstate.storage.hooklayout import AnyLayout
    from gitstate.storage.layout import Layout
    from gitstate.storage.snapshots import Store

    _Base = Store
else:
    _Base = object

SYSTEM_CONFIG = "/etc/gitconfig"  # where libgit2 (pygit2's wheels) reads the system config
CAT_TIMEOUT = 10.0
# The environment that would make git, or libgit2, read or write somewhere else than we do.
_UNUSUAL_ENV = (
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG",
)
_FALSE = frozenset({"false", "no", "off", "0"})


class _Odd(Exception):
    """Something the standard-library reader does not handle: pygit2's Store answers."""


# ---- when the hooks may use it --------------------------------------------------------------


def config_files(layout: AnyLayout) -> list[str]:
    """The files libgit2 reads, lowest priority first: system, XDG, global, the repository's.
    (libgit2 reads the system file even under GIT_CONFIG_NOSYSTEM, and reads ~/.gitconfig
    whatever GIT_CONFIG_GLOBAL says: the save must resolve what pygit2 would.)"""
    home = os.environ.get("HOME") or ""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [
        SYSTEM_CONFIG,
        os.path.join(xdg, "git", "config"),
        os.path.join(home, ".gitconfig"),
        os.path.join(layout.commondir, "config"),
    ]


def read_config(layout: AnyLayout) -> dict[str, str | None] | None:
    """Every `section[.sub].name` of those files, the last value winning (None: a boolean with
    no value); None when a file holds anything this strict reader does not know for certain
    (a continuation line, an escape it does not know, text that is not UTF-8)."""
    found: dict[str, str | None] = {}
    for path in config_files(layout):
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return None
        try:
            entries = _parse_config(raw.decode("utf-8"))
        except (UnicodeDecodeError, _Odd):
            return None
        for key, value in entries:
            found[key] = value
    return found


def refusal(layout: AnyLayout) -> str | None:
    """Why the hooks' save must go through pygit2 here; None when LooseStore may write it."""
    return _refusal(layout)[0]


def open_for_hook(layout: AnyLayout) -> LooseStore | None:
    """A LooseStore when `refusal` finds nothing unusual, else None (pygit2's Store)."""
    reason, config = _refusal(layout)
    return LooseStore(layout, config) if reason is None and config is not None else None


def _refusal(layout: AnyLayout) -> tuple[str | None, dict[str, str | None] | None]:
    if not os.environ.get("HOME"):
        return "HOME is not set", None
    for name in _UNUSUAL_ENV:
        if os.environ.get(name):
            return f"{name} is set", None
    config = read_config(layout)
    if config is None:
        return "a config file this reader does not parse for certain", None
    return _unusual(config), config


def _unusual(config: dict[str, str | None]) -> str | None:
    """What in the config could make our objects differ from pygit2's (docs/hooks.md)."""
    for key, value in config.items():
        section = key.partition(".")[0]
        if section in ("include", "includeif"):
            return "a config file includes another"
        if section == "extensions" and not (key == "extensions.objectformat" and value == "sha1"):
            return f"{key} is set"
    if (config.get("core.repositoryformatversion") or "0") not in ("0", "1"):
        return "core.repositoryformatversion is not 0 or 1"
    if "commit.gpgsign" in config:
        value = config["commit.gpgsign"]
        if value is None or value.strip().lower() not in _FALSE:
            return "commit.gpgsign is set"
    for key in ("user.useconfigonly", "core.sharedrepository", "core.fsync"):
        if key in config:
            return f"{key} is set"
    if "core.fsyncobjectfiles" in config or "core.fsyncmethod" in config:
        return "core.fsyncObjectFiles or core.fsyncMethod is set"
    for key in ("user.name", "user.email", "agy.language", "gc.auto"):
        if key in config and config[key] is None:
            return f"{key} has no value"
    return None


# ---- the store ------------------------------------------------------------------------------


class LooseStore(_Base):
    """The Store methods the document writer calls on a hook's save; the rest are pygit2's."""

    def __init__(self, place: AnyLayout, config: dict[str, str | None]) -> None:
        # The hook's save passes its str HookLayout: every path here is joined with os.path,
        # and pathlib is loaded only if pygit2's Store (or a caller) asks for `layout`.
        self.place = place
        self._config = config
        self._objects = os.path.join(place.commondir, "objects")
        self._cache: dict[str, tuple[bytes, bytes]] = {}
        self._store: Store | None = None

    def __getattr__(self, name: str) -> Any:
        """Anything not written here is pygit2's Store's (opened on first use)."""
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._full(), name)

    @property  # read-only here, derived from `place`; Store's is an attribute
    def layout(self) -> Layout:  # type: ignore[override]
        """The pathlib Layout pygit2's Store has, for the callers that ask a store for it."""
        return pathlib_layout(self.place)

    def _full(self) -> Store:
        if self._store is None:
            from gitstate.storage.snapshots import Store

            self._store = Store(self.layout)
        return self._store

    # ---- config and identity ----------------------------------------------------------------

    def config_value(self, key: str) -> str | None:
        section, _, name = key.partition(".")
        return self._config.get(f"{section.lower()}.{name.lower()}")

    def _person(self, kind: str) -> tuple[str, str, int, int]:
        """(name, email, seconds, offset) as Store.signature resolves them; _Odd for a name or
        email libgit2 would trim or refuse (pygit2 then says what it says)."""
        name = os.environ.get(f"GIT_{kind}_NAME") or self.config_value("user.name")
        email = os.environ.get(f"GIT_{kind}_EMAIL") or self.config_value("user.email")
        name, email = name or DEFAULT_NAME, email or DEFAULT_EMAIL
        for text in (name, email):
            if not plain_ident(text):
                raise _Odd(text)
        seconds, offset = when(kind)
        return name, email, seconds, offset

    def head_info(self) -> tuple[str | None, str | None]:
        try:
            with open(os.path.join(self.place.gitdir, "HEAD"), "rb") as handle:
                head = handle.read(4096).decode("utf-8").strip()
            if is_oid(head):
                return head, None
            target = head.removeprefix("ref: ").strip()
            if not head.startswith("ref: ") or not refs.shared(target):
                raise _Odd(head)
            value = self._ref_value(target)
            if value is not None and not is_oid(value):
                raise _Odd(value)
            return value, target.removeprefix("refs/heads/")
        except (OSError, UnicodeDecodeError, _Odd):
            return self._full().head_info()

    # ---- reading ----------------------------------------------------------------------------

    def _ref_value(self, ref: str) -> str | None:
        """The ref's loose file (its text) or its packed-refs line (the id), None when absent;
        _Odd for a name outside the common dir or a file that cannot be read."""
        if not refs.shared(ref) or ".." in ref.split("/"):
            raise _Odd(ref)
        try:
            return read_ref(self.place.commondir, ref)
        except (OSError, UnicodeDecodeError):
            raise _Odd(ref) from None

    def tip(self, ref: str | None = None) -> str | None:
        name = ref or self.place.state_ref
        try:
            value = self._ref_value(name)
            if value is None:
                return None
            if not is_oid(value) or self._object(value)[0] != b"commit":
                raise _Odd(value)
            return value
        except _Odd:
            return self._full().tip(ref)

    def has_object(self, oid: str) -> bool:
        try:
            self._object(oid)
        except _Odd:
            return self._full().has_object(oid)
        return True

    def snapshot(self, commit: str) -> Snapshot:
        try:
            headers, message = self._read_commit(commit)
            who = headers.get("committer", "").rsplit(" ", 2)
            if len(who) != 3 or not who[1].isdigit():
                raise _Odd(commit)
            offset = _offset(who[2])
            return Snapshot(
                commit=commit,
                time=iso_time(int(who[1]), offset),
                subject=message.split("\n", 1)[0],
                trailers=parse_trailers(message),
                parents=tuple(headers.get("parents", "").split()),
            )
        except _Odd:
            return self._full().snapshot(commit)

    def message(self, commit: str) -> str:
        try:
            return self._read_commit(commit)[1]
        except _Odd:
            return self._full().message(commit)

    def state_blob(self, commit: str) -> str | None:
        try:
            return self._state_entry(commit)
        except _Odd:
            return self._full().state_blob(commit)

    def state_bytes(self, commit: str) -> bytes | None:
        try:
            blob = self._state_entry(commit)
            if blob is None:
                return None
            kind, body = self._object(blob)
            if kind != b"blob":
                raise _Odd(blob)
            return body
        except _Odd:
            return self._full().state_bytes(commit)

    def state_text(self, commit: str) -> str | None:
        data = self.state_bytes(commit)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return self._full().state_text(commit)  # its BrokenRef names the line

    def _read_commit(self, commit: str) -> tuple[dict[str, str], str]:
        """A commit's headers (`parents` joined by spaces) and its message, as UTF-8 text."""
        kind, body = self._object(commit)
        if kind != b"commit":
            raise _Odd(commit)
        head, sep, message = body.partition(b"\n\n")
        headers: dict[str, str] = {}
        parents: list[str] = []
        try:
            for line in head.decode("utf-8").split("\n"):
                key, _, value = line.partition(" ")
                if key == "parent":
                    parents.append(value)
                elif key in ("tree", "author", "committer"):
                    headers[key] = value
                else:
                    raise _Odd(key)  # encoding, gpgsig, mergetag…: pygit2 reads those
            text = message.decode("utf-8")
        except UnicodeDecodeError:
            raise _Odd(commit) from None
        if not sep or "tree" not in headers:
            raise _Odd(commit)
        headers["parents"] = " ".join(parents)
        return headers, text

    def _state_entry(self, commit: str) -> str | None:
        tree = self._read_commit(commit)[0]["tree"]
        kind, body = self._object(tree)
        if kind != b"tree":
            raise _Odd(tree)
        at = 0
        while at < len(body):
            end = body.index(b"\0", at)
            mode, _, name = body[at:end].partition(b" ")
            if name == STATE_FILE.encode():
                if mode not in (b"100644", b"100755"):
                    raise _Odd(commit)  # a folder, a link, a submodule: Store says which
                return body[end + 1 : end + 21].hex()
            at = end + 21
        return None

    def _object(self, oid: str) -> tuple[bytes, bytes]:
        """(type, body) of an object: loose with zlib, else packed from `git cat-file`, which
        is asked for the commit's tree and STATE.md at once (the tip's three objects in one
        process); _Odd when it is in neither."""
        if not is_oid(oid, (40,)):
            raise _Odd(oid)
        found = self._cache.get(oid) or self._loose(oid)
        if found is None:
            for name, kind, body in _cat(
                os.fspath(self.place.commondir), [oid, f"{oid}^{{tree}}", f"{oid}:{STATE_FILE}"]
            ):
                self._cache[name] = (kind, body)
            found = self._cache.get(oid)
            if found is None:
                raise _Odd(oid)
        self._cache[oid] = found
        return found

    def _loose(self, oid: str) -> tuple[bytes, bytes] | None:
        try:
            with open(os.path.join(self._objects, oid[:2], oid[2:]), "rb") as handle:
                data = zlib.decompress(handle.read())
        except (OSError, zlib.error):
            return None
        head, sep, body = data.partition(b"\0")
        kind, _, size = head.partition(b" ")
        if not sep or not size.isdigit() or int(size) != len(body):
            return None
        return kind, body

    # ---- writing ----------------------------------------------------------------------------

    def create_snapshot(self, data: bytes | None, parents: list[str], message: str) -> str:
        """Blob, tree and commit as pygit2's Store writes them (byte for byte); no ref moves."""
        try:
            author = signature(*self._person("AUTHOR"))
            committer = signature(*self._person("COMMITTER"))
            (author + committer + message).encode()  # a lone surrogate fails before any write
        except (_Odd, UnicodeEncodeError):
            return self._full().create_snapshot(data, parents, message)
        try:
            entries = [] if data is None else [(STATE_FILE, self._write("blob", data))]
            tree = self._write("tree", tree_bytes(entries))
            return self._write("commit", commit_bytes(tree, parents, author, committer, message))
        except OSError:
            return self._full().create_snapshot(data, parents, message)  # its error, its words

    def _write(self, kind: str, body: bytes) -> str:
        """One loose object (storage/rawobjects.py), kept for the reads that follow the save.
        A config that asks for fsync sends the save to pygit2 (`refusal`)."""
        oid = write_loose(self._objects, kind, body)
        self._cache[oid] = (kind.encode(), body)
        return oid

    def compare_and_swap(self, ref: str, expected: str | None, new: str, reason: str) -> bool:
        """Store.compare_and_swap for the chain's own ref (storage/refs.py, the same lock and
        reflog); any other ref, or a failure to say in words, is pygit2's Store's."""
        if ref != self.place.state_ref:
            return self._full().compare_and_swap(ref, expected, new, reason)
        try:
            name, email, seconds, offset = self._person("COMMITTER")
        except _Odd:
            return self._full().compare_and_swap(ref, expected, new, reason)
        log = f"{reflog_ident(name, email, seconds, offset)}\t{reflog_reason(reason)}"
        try:
            return refs.update(self.place.commondir, ref, expected, new, self._reader(ref), log)
        except OSError:
            # Nothing moved; Store says why in its words (it meets the same refusal).
            return self._full().compare_and_swap(ref, expected, new, reason)

    def _reader(self, ref: str) -> refs.Reader:
        def current() -> str | None:
            try:
                value = self._ref_value(ref)
            except _Odd:
                return self._full()._value(ref)
            return value.removeprefix("ref: ") if value is not None else None

        return current


def _parse_config(text: str) -> list[tuple[str, str | None]]:
    """`section[.sub].name` and value of each entry of one config file; _Odd for anything a
    strict reading cannot be sure of (docs/hooks.md lists what sends the save to pygit2)."""
    entries: list[tuple[str, str | None]] = []
    current: str | None = None
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            raise _Odd("a continuation line")
        if line[0] == "[":
            end = line.find("]")
            rest = line[end + 1 :].strip() if end > 0 else "x"
            if rest and rest[0] not in "#;":
                raise _Odd(line)
            current = _section(line[1:end])
            continue
        name, eq, value = line.partition("=")
        name = name.strip().lower()
        if current is None or not name.isascii() or not name[:1].isalpha():
            raise _Odd(line)
        if not name.replace("-", "").isalnum():
            raise _Odd(line)
        entries.append((f"{current}.{name}", _config_value(value) if eq else None))
    return entries


def _section(head: str) -> str:
    """`core`, `remote "origin"` (subsection kept as written) or the old `[branch.main]`."""
    name, _, sub = head.strip().partition(" ")
    if not name.replace("-", "").replace(".", "").isalnum() or not name.isascii():
        raise _Odd(head)
    if not sub:
        return name.lower()
    sub = sub.strip()
    if "." in name or len(sub) < 2 or sub[0] != '"' or sub[-1] != '"':
        raise _Odd(head)
    inner = sub[1:-1]
    if '"' in inner or "\\" in inner:
        raise _Odd(head)
    return f"{name.lower()}.{inner}"


def _config_value(raw: str) -> str:
    """A value as git reads it: quotes joined, `\\n \\t \\b \\\\ \\"` unescaped, a `#`/`;`
    outside quotes ends it, outer whitespace dropped. Whitespace other than single spaces
    outside quotes (git turns each into a space, libgit2 may not) is _Odd."""
    out: list[str] = []
    quoted = False
    spaces = 0  # unquoted spaces seen: kept only when more of the value follows
    text = raw.strip()
    i = 0
    while i < len(text):
        char = text[i]
        i += 1
        if not quoted and char.isspace():
            if char != " " or spaces:
                raise _Odd(raw)
            spaces = 1 if out else 0
            continue
        if not quoted and char in "#;":
            break
        out.append(" " * spaces)
        spaces = 0
        if char == '"':
            quoted = not quoted
        elif char == "\\":
            escaped = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}.get(text[i : i + 1])
            if escaped is None:
                raise _Odd(raw)
            out.append(escaped)
            i += 1
        else:
            out.append(char)
    if quoted:
        raise _Odd(raw)
    return "".join(out)


def _cat(commondir: str, revs: list[str]) -> list[tuple[str, bytes, bytes]]:
    """(id, type, body) of each of `revs` git has, from one `git cat-file --batch`. Spawned
    with os.posix_spawnp: the subprocess module would cost the hook more than the read."""
    import select

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    argv = ["git", f"--git-dir={commondir}", "--no-replace-objects", "cat-file", "--batch"]
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    try:
        pid = os.posix_spawnp(
            "git",
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, stdin_r, 0),
                (os.POSIX_SPAWN_DUP2, stdout_w, 1),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ],
        )
    except OSError:
        for fd in (stdin_r, stdin_w, stdout_r, stdout_w):
            os.close(fd)
        return []  # no git: the caller hands the read to pygit2
    os.close(stdin_r)
    os.close(stdout_w)
    chunks: list[bytes] = []
    ended = False
    try:
        os.write(stdin_w, "".join(f"{rev}\n" for rev in revs).encode())  # far below a pipe's size
        os.close(stdin_w)
        stdin_w = -1
        deadline = time.monotonic() + CAT_TIMEOUT
        poller = select.poll()
        poller.register(stdout_r, select.POLLIN)
        while (left := deadline - time.monotonic()) > 0:
            if not poller.poll(left * 1000):
                break
            chunk = os.read(stdout_r, 1 << 20)
            if not chunk:
                ended = True
                break
            chunks.append(chunk)
    except OSError:
        chunks = []
    finally:
        if stdin_w >= 0:
            os.close(stdin_w)
        os.close(stdout_r)
        _reap(pid, ended)
    return _batch_output(b"".join(chunks))


def _reap(pid: int, ended: bool) -> None:
    """Wait for git, which closed its output and is leaving; kill it first when it did not."""
    if not ended:
        import signal

        try:  # not contextlib.suppress: a saving hook does not load contextlib
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            os.waitpid(pid, 0)  # it left meanwhile
            return
    os.waitpid(pid, 0)


def _batch_output(out: bytes) -> list[tuple[str, bytes, bytes]]:
    """`<id> <type> <size>\\n<body>\\n` per object found (`<rev> missing` lines skipped)."""
    found = []
    at = 0
    while at < len(out):
        end = out.find(b"\n", at)
        if end < 0:
            break
        fields = out[at:end].split()
        at = end + 1
        if len(fields) != 3 or not fields[2].isdigit():
            continue  # missing, ambiguous
        size = int(fields[2])
        if at + size > len(out):
            break  # cut short
        found.append((fields[0].decode("ascii"), fields[1], out[at : at + size]))
        at += size + 1
    return found


def _offset(text: str) -> int:
    if len(text) != 5 or text[0] not in "+-" or not text[1:].isdigit():
        raise _Odd(text)
    minutes = int(text[1:3]) * 60 + int(text[3:5])
    return -minutes if text[0] == "-" else minutes
