"""A finished round's record: one commit on `refs/agy/jobs/<id>`, written without pygit2.

The record holds plan.md, prompt.txt, result.json and diffstat.txt, scanned for credentials
first: matching lines are redacted in the record, never refused, and the hits are named in
result.json (docs/jobs.md, "Files and records").

The supervisor writes it, one process per job: importing pygit2 there would cost more CPU than
the rest of the round (docs/jobs.md, "Cost per job"). So the blobs, the tree and the commit are
written here as loose objects (zlib and sha1, a temporary file linked into place, as git does),
with the identity and dates by storage/snapshots.py's Store's rule, byte for byte what it would
write; with signing configured, or a date only git reads, `git commit-tree` writes the commit.
The ref is moved by compare-and-swap through storage/refs.py. A
repository this writer does not speak for (a sha256 object format, core.sharedRepository, a
record ref that is not a plain commit id) goes through records.commit_record (pygit2) instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitstate import secrets
from gitstate.jobs.storage import files as jobfiles
from gitstate.storage import gitcli, refs
from gitstate.storage.layout import Layout

RECORD_FORMAT = "1"
RECORD_FILES = ("plan.md", "prompt.txt", "result.json", "diffstat.txt")
DEFAULT_NAME = "git-agy-state"  # Store.signature's identity when nothing names one
DEFAULT_EMAIL = "agy-state@localhost"
# Read in the one `git config` call a record costs: the identity, and what sends the write to
# pygit2 (an object format or shared permissions this writer does not produce).
# Lower case: git matches the pattern against its lower-cased key names.
CONFIG_KEYS = (
    "user.name",
    "user.email",
    "commit.gpgsign",
    "extensions.objectformat",
    "core.sharedrepository",
)
_OID_CHARS = frozenset("0123456789abcdef")

if TYPE_CHECKING:
    from hashlib import sha1
else:
    try:  # CPython's own sha1: hashlib would load OpenSSL first, a cost every supervisor pays
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - another interpreter
        from hashlib import sha1
_DATE_RE = re.compile(r"^@?(\d+)(?:\s+([+-])(\d{2})(\d{2}))?$")  # Store's forms; ISO is git's
# A name or email written as given: no angle brackets or control characters, no outer spaces.
_IDENT_OK = re.compile(r"^[^<>\x00-\x1f\x7f\s](?:[^<>\x00-\x1f\x7f]*[^<>\x00-\x1f\x7f\s])?$")


def record_ref(job_id: str) -> str:
    return f"refs/agy/jobs/{job_id}"


def record_contents(job: jobfiles.JobFiles, result_text: str) -> tuple[dict[str, str], list[Any]]:
    """The record's files, redacted, and the credential hits as {file, line, kind} dicts."""
    texts = {
        "plan.md": jobfiles.read_text(job.plan),
        "prompt.txt": jobfiles.read_text(job.prompt),
        "result.json": result_text,
        "diffstat.txt": _diff_stat_of(result_text),
    }
    redacted: dict[str, str] = {}
    hits: list[Any] = []
    for name, text in texts.items():
        clean, found = secrets.redact(text)
        redacted[name] = clean
        hits += [{"file": name, "line": hit.line, "kind": hit.kind} for hit in found]
    return redacted, hits


def subject_of(result: dict[str, Any]) -> str:
    # Redacted before it is cut: a cut token would no longer look like one (docs/secrets.md).
    summary = " ".join(secrets.redact(str(result.get("summary") or ""))[0].split())[:72]
    head = f"job {result.get('job_id')} round {result.get('round')}: {result.get('state')}"
    return f"{head} — {summary}" if summary else head


def message(job_id: str, round_no: int, state: str, subject: str) -> str:
    """The record commit's message: the subject and the Agy-Job trailers (as compose_message)."""
    trailers = (
        ("Agy-Job-Format", RECORD_FORMAT),
        ("Agy-Job", job_id),
        ("Agy-Job-Round", str(round_no)),
        ("Agy-Job-State", state),
    )
    head = " ".join(subject.split()) or "Update state"
    return head + "\n\n" + "\n".join(f"{key}: {value}" for key, value in trailers) + "\n"


def commit(
    layout: Layout,
    job_id: str,
    round_no: int,
    state: str,
    contents: dict[str, str],
    subject: str,
    settings: dict[str, str] | None = None,
) -> str:
    """Commit the round's record on refs/agy/jobs/<id> (compare-and-swap, retried). `settings`:
    CONFIG_KEYS as the caller read them already (lower-case keys), else read here."""
    if settings is None:
        settings = gitcli.config(layout, *CONFIG_KEYS)
    if settings.get("extensions.objectformat", "sha1").lower() != "sha1" or settings.get(
        "core.sharedrepository"
    ):
        return _with_pygit2(layout, job_id, round_no, state, contents, subject)
    objects = layout.commondir / "objects"
    entries = [
        (name, write_object(objects, "blob", contents[name].encode()))
        for name in RECORD_FILES
        if name in contents
    ]
    tree = write_object(objects, "tree", _tree_bytes(entries))
    text = message(job_id, round_no, state, subject)
    ref = record_ref(job_id)
    for _attempt in refs.attempts(ref, "the round's record was not written"):
        tip = _ref_value(layout.commondir, ref)
        if tip is not None and not _is_oid(tip):
            return _with_pygit2(layout, job_id, round_no, state, contents, subject)
        now = int(time.time())
        who = _identity(settings, now)
        if who.lines is not None and "commit.gpgsign" not in settings:
            new = write_object(objects, "commit", _commit_bytes(tree, tip, who, text))
        else:  # signing, or a date or name git reads its own way: git writes the commit
            parents = ["-p", tip] if tip else []
            proc = gitcli.run(layout, "commit-tree", tree, *parents, env=who.env, input=text)
            new = proc.stdout.strip()
            if proc.returncode != 0 or not _is_oid(new):
                # git refuses what Store takes (an identity it will not guess, a signing key
                # it cannot use): the pygit2 writer says why, or writes it as Store has.
                return _with_pygit2(layout, job_id, round_no, state, contents, subject)
        log = f"{who.ident}\tagy-state: job {job_id} round {round_no}"
        if refs.update(
            layout.commondir, ref, tip, new, lambda: _ref_value(layout.commondir, ref), log
        ):
            return new
    raise AssertionError("refs.attempts raises when they run out")


def write_object(objects: Path, kind: str, data: bytes) -> str:
    """Store one loose object (as git writes it: a temporary file in its folder, linked into
    place, read-only); an object already there is left alone. Returns its id."""
    raw = f"{kind} {len(data)}\0".encode() + data
    oid = sha1(raw).hexdigest()  # git's object id (sha1 repositories only)
    folder = objects / oid[:2]
    final = folder / oid[2:]
    if final.exists():
        return oid
    folder.mkdir(exist_ok=True)
    tmp = folder / f"tmp_obj_{os.getpid()}_{time.monotonic_ns()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
    try:
        with open(fd, "wb") as handle:
            handle.write(zlib.compress(raw, 1))  # core.looseCompression's default
        with contextlib.suppress(FileExistsError):  # a concurrent writer stored the same bytes
            os.link(tmp, final)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return oid


def _tree_bytes(entries: list[tuple[str, str]]) -> bytes:
    """A tree of regular files (git sorts plain file names bytewise)."""
    return b"".join(
        b"100644 " + name.encode() + b"\0" + bytes.fromhex(oid) for name, oid in sorted(entries)
    )


class _Who:
    def __init__(self, env: dict[str, str], ident: str, lines: tuple[str, str] | None) -> None:
        self.env = env  # for git commit-tree: both identities resolved, the date when unset
        self.ident = ident  # `Name <email> seconds +hhmm`, the reflog line's committer
        self.lines = lines  # (author, committer) as Store writes them; None: git must say


def _identity(settings: dict[str, str], now: int) -> _Who:
    """Store.signature's rule: GIT_<KIND>_NAME/EMAIL, then user.name/email, then ours; the
    date GIT_<KIND>_DATE, else now in the local offset."""
    env: dict[str, str] = {}
    lines: list[str] = []
    plain = True  # everything as Store would write it, so this process can write the commit
    for kind in ("AUTHOR", "COMMITTER"):
        name = os.environ.get(f"GIT_{kind}_NAME") or settings.get("user.name") or DEFAULT_NAME
        email = os.environ.get(f"GIT_{kind}_EMAIL") or settings.get("user.email") or DEFAULT_EMAIL
        env[f"GIT_{kind}_NAME"], env[f"GIT_{kind}_EMAIL"] = name, email
        given = (os.environ.get(f"GIT_{kind}_DATE") or "").strip()
        match = _DATE_RE.match(given) if given else None
        if not given:
            stamp = _stamp(now, (time.localtime(now).tm_gmtoff or 0) // 60)
            env[f"GIT_{kind}_DATE"] = f"@{stamp}"
        elif match:
            sign = -1 if match.group(2) == "-" else 1
            minutes = int(match.group(3) or 0) * 60 + int(match.group(4) or 0)
            stamp = _stamp(int(match.group(1)), sign * minutes)
        else:  # an ISO date, say: git reads it
            stamp, plain = "", False
        plain = plain and _IDENT_OK.match(name) is not None and _IDENT_OK.match(email) is not None
        lines.append(f"{name} <{email}> {stamp}")
    if not lines[1].endswith(" "):
        ident = lines[1]
    else:
        ident = _crudless(env["GIT_COMMITTER_NAME"], env["GIT_COMMITTER_EMAIL"], now)
    return _Who(env, ident, (lines[0], lines[1]) if plain else None)


def _stamp(seconds: int, offset_minutes: int) -> str:
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{seconds} {sign}{hours:02d}{minutes:02d}"


def _crudless(name: str, email: str, now: int) -> str:
    """The reflog's committer when the commit's date is git's to read: the time now."""
    name = "".join(c for c in name if c not in "<>\n").strip()
    email = "".join(c for c in email if c not in "<>\n").strip()
    return f"{name or DEFAULT_NAME} <{email}> {_stamp(now, (time.localtime(now).tm_gmtoff or 0) // 60)}"


def _commit_bytes(tree: str, parent: str | None, who: _Who, text: str) -> bytes:
    """A commit object's body, as libgit2 writes it for Store (no signature, no encoding)."""
    assert who.lines is not None
    author, committer = who.lines
    head = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
    return f"{head}author {author}\ncommitter {committer}\n\n{text}".encode()


def _ref_value(commondir: Path, ref: str) -> str | None:
    """The ref as read under its lock: a commit id, other text for what is not one (a symbolic
    ref), None when absent (its loose file first, then packed-refs)."""
    try:
        with open(commondir / ref, "rb") as handle:
            return handle.read(4096).decode("utf-8", "replace").strip()
    except (FileNotFoundError, NotADirectoryError):
        pass
    try:
        with open(commondir / "packed-refs", "rb") as handle:
            packed = handle.read()
    except FileNotFoundError:
        return None
    want = b" " + ref.encode()
    for line in packed.splitlines():
        if line.endswith(want) and not line.startswith((b"#", b"^")):
            return line[: -len(want)].decode("ascii", "replace")
    return None


def _is_oid(value: str) -> bool:
    return len(value) == 40 and _OID_CHARS.issuperset(value)


def _with_pygit2(
    layout: Layout, job_id: str, round_no: int, state: str, contents: dict[str, str], subject: str
) -> str:
    from gitstate.jobs.storage import records

    store = records.main_store(layout)
    return records.commit_record(store, job_id, round_no, state, contents, subject)


def _diff_stat_of(result_text: str) -> str:
    try:
        stat = json.loads(result_text).get("diff_stat")
    except (ValueError, AttributeError):
        return ""
    return stat if isinstance(stat, str) else ""
