"""A finished round's record: one commit on `refs/agy/jobs/<id>`, written without pygit2.

The record holds plan.md, prompt.txt, result.json and diffstat.txt, scanned for credentials
first: matching lines are redacted in the record, never refused, and the hits are named in
result.json (docs/jobs.md, "Files and records").

The supervisor writes it, one process per job: importing pygit2 there would cost more CPU than
the rest of the round (docs/jobs.md, "Cost per job"). So the blobs, the tree and the commit are
written as loose objects by storage/rawobjects.py (the agent hooks' writer too), with the
identity and dates by Store's rule (storage/snapshot_text.py), byte for byte what it would
write; with signing configured, or a date only git reads, `git commit-tree` writes the commit.
The ref is moved by compare-and-swap through storage/refs.py. A
repository this writer does not speak for (a sha256 object format, core.sharedRepository, a
record ref that is not a plain commit id) goes through records.commit_record (pygit2) instead.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from gitstate import secrets
from gitstate.jobs.storage import files as jobfiles
from gitstate.storage import gitcli, refs
from gitstate.storage.layout import Layout
from gitstate.storage.rawobjects import commit_bytes, is_oid, read_ref, tree_bytes, write_loose
from gitstate.storage.snapshot_text import (
    DEFAULT_EMAIL,
    DEFAULT_NAME,
    local_offset,
    parse_plain_date,
    plain_ident,
    reflog_ident,
    signature,
    tz,
)

RECORD_FORMAT = "1"
RECORD_FILES = ("plan.md", "prompt.txt", "result.json", "diffstat.txt")
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
# The loose-object writer the record's tests call by this name (storage/rawobjects.py's).
write_object = write_loose


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
    tree = write_object(objects, "tree", tree_bytes(entries))
    text = message(job_id, round_no, state, subject)
    ref = record_ref(job_id)
    for _attempt in refs.attempts(ref, "the round's record was not written"):
        tip = _ref_value(layout.commondir, ref)
        if tip is not None and not _is_oid(tip):
            return _with_pygit2(layout, job_id, round_no, state, contents, subject)
        now = int(time.time())
        who = _identity(settings, now)
        if who.lines is not None and "commit.gpgsign" not in settings:
            author, committer = who.lines
            body = commit_bytes(tree, [tip] if tip else [], author, committer, text)
            new = write_object(objects, "commit", body)
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
    stamp: tuple[int, int] | None = None
    for kind in ("AUTHOR", "COMMITTER"):
        name = os.environ.get(f"GIT_{kind}_NAME") or settings.get("user.name") or DEFAULT_NAME
        email = os.environ.get(f"GIT_{kind}_EMAIL") or settings.get("user.email") or DEFAULT_EMAIL
        env[f"GIT_{kind}_NAME"], env[f"GIT_{kind}_EMAIL"] = name, email
        given = (os.environ.get(f"GIT_{kind}_DATE") or "").strip()
        stamp = parse_plain_date(given) if given else (now, local_offset(now))
        if not given:
            env[f"GIT_{kind}_DATE"] = f"@{now} {tz(local_offset(now))}"
        if stamp is None:  # an ISO date, say: git reads it
            plain = False
        else:
            lines.append(signature(name, email, *stamp))
        plain = plain and plain_ident(name) and plain_ident(email)
    # The reflog's committer: the commit's, or the time now when its date is git's to read.
    seconds, offset = stamp if stamp is not None else (now, local_offset(now))
    ident = reflog_ident(env["GIT_COMMITTER_NAME"], env["GIT_COMMITTER_EMAIL"], seconds, offset)
    return _Who(env, ident, (lines[0], lines[1]) if plain else None)


def _ref_value(commondir: Path, ref: str) -> str | None:
    """The ref as read under its lock: a commit id, other text for what is not one (a symbolic
    ref, a file that is not text), None when absent."""
    try:
        return read_ref(commondir, ref)
    except UnicodeDecodeError:
        return "\ufffd"  # not an id: the pygit2 writer reads it and says what it is


def _is_oid(value: str) -> bool:
    return is_oid(value, (40,))  # sha1 repositories only (others go to pygit2)


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
