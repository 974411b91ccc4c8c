"""A snapshot's text, without pygit2: its message and trailers, who made it and when.

One copy for both object writers: storage/snapshots.py (pygit2's Store) and storage/loose.py
(the agent hooks' standard-library save). Both must build byte-identical commits from the same
inputs (docs/hooks.md, "The hooks' own save"), so the message, the identity rules and the times
are composed here only. Nothing heavier than `time` at import, and no patterns: the hooks load
it (docs/hooks.md, "Start-up cost").
"""

from __future__ import annotations

import os
import time
from collections import namedtuple

from gitstate.storage.hooklayout import VIEW_NAME

FORMAT_VERSION = "1"
STATE_FILE = VIEW_NAME
DEFAULT_NAME = "git-agy-state"  # the identity when neither the environment nor config has one
DEFAULT_EMAIL = "agy-state@localhost"
# What an agent hook's save runs (a reflog line, a tip's trailers) is done with str methods,
# not patterns: each compile costs the hook about 1% of its run (docs/hooks.md, "Start-up
# cost"). The controls, as a reflog line may not hold them; and what git strips from a name or
# email.
_CONTROLS = "".join(map(chr, range(32))) + "\x7f"
_CONTROLS_TO_SPACE = str.maketrans(_CONTROLS, " " * len(_CONTROLS))
_IDENT_CRUD = str.maketrans("", "", "<>" + _CONTROLS)
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_KEY_CHARS = _LETTERS | frozenset("0123456789-")

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded:
# the agent hooks' save reads a tip's trailers through Snapshot.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

    class _SnapshotFields(NamedTuple):
        commit: str
        time: str  # ISO 8601 with the committer's offset
        subject: str
        trailers: dict[str, str]
        parents: tuple[str, ...]

else:
    _SnapshotFields = namedtuple("_SnapshotFields", "commit time subject trailers parents")


class Snapshot(_SnapshotFields):
    __slots__ = ()

    @property
    def sections(self) -> list[str]:
        raw = self.trailers.get("Agy-Sections", "")
        return [s.strip() for s in raw.split(",") if s.strip() and s.strip() != "none"]

    @property
    def head(self) -> str | None:
        return self.trailers.get("Agy-Head") or None

    @property
    def branch(self) -> str | None:
        return self.trailers.get("Agy-Branch") or None

    @property
    def phase(self) -> str:
        return self.trailers.get("Agy-Phase") or "IDLE"

    def as_json(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "time": self.time,
            "message": self.subject,
            "sections": self.sections,
            "head": self.head,
            "branch": self.branch,
            "phase": self.phase,
        }


def compose_message(subject: str, trailers: list[tuple[str, str]], body: str = "") -> str:
    """Subject, optional body, then one trailer block that `git interpret-trailers` reads."""
    parts = [" ".join(subject.split()) or "Update state"]
    if body.strip():
        parts.append(body.strip())
    parts.append("\n".join(f"{key}: {value}" for key, value in trailers))
    return "\n\n".join(parts) + "\n"


def parse_trailers(message: str) -> dict[str, str]:
    """The `Key: value` lines of the message's last paragraph (empty if it is not all trailers)."""
    paragraphs = [p for p in message.strip().split("\n\n") if p.strip()]
    if len(paragraphs) < 2:
        return {}
    found: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        key, colon, value = line.strip().partition(":")
        if not (colon and _trailer_key(key)):
            return {}
        found[key] = value.strip()
    return found


def _trailer_key(key: str) -> bool:
    """`[A-Za-z][A-Za-z0-9-]*`: a trailer's key, ASCII only, as git's interpret-trailers."""
    return bool(key) and key[0] in _LETTERS and all(c in _KEY_CHARS for c in key)


def parse_date(value: str) -> tuple[int, int] | None:
    """(seconds, offset minutes) from a GIT_*_DATE value: `@secs tz`, `secs tz` or ISO 8601."""
    text = value.strip()
    if not text:
        return None  # unset: now (and no datetime import for it)
    plain = parse_plain_date(text)
    if plain is not None:
        return plain
    from datetime import datetime, timedelta  # rare: only an ISO GIT_*_DATE needs it

    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.astimezone()
    delta = when.utcoffset() or timedelta(0)
    return int(when.timestamp()), int(delta.total_seconds() // 60)


def parse_plain_date(text: str) -> tuple[int, int] | None:
    r"""(seconds, offset minutes) from `@secs tz` or `secs tz` (the zone optional); None for
    anything else (an ISO date, which only parse_date, or git, reads). What
    `^@?(\d+)(?:\s+([+-])(\d{2})(\d{2}))?$` reads, with str methods (`\d` is str.isdecimal, `\s`
    str.isspace; tests/test_snapshot_text_plain.py compares them)."""
    body = text[:-1] if text.endswith("\n") else text  # `$` matches before a last newline
    body = body.removeprefix("@")
    digits = _decimals(body)
    seconds, rest = body[:digits], body[digits:]
    if not seconds:
        return None
    if not rest:
        return int(seconds), 0
    zone = rest.lstrip()
    if zone == rest or len(zone) != 5 or zone[0] not in "+-" or not zone[1:].isdecimal():
        return None
    sign = -1 if zone[0] == "-" else 1
    return int(seconds), sign * (int(zone[1:3]) * 60 + int(zone[3:5]))


def _decimals(text: str) -> int:
    """How many characters at the start of `text` are decimal digits, in any script."""
    for index, char in enumerate(text):
        if not char.isdecimal():
            return index
    return len(text)


def local_offset(seconds: int) -> int:
    """The local time zone's offset in minutes at that time."""
    return (time.localtime(seconds).tm_gmtoff or 0) // 60


def plain_ident(text: str) -> bool:
    """A name or email that git and libgit2 write as given: no outer whitespace, no angle
    brackets or control characters (anything else one of them trims or refuses)."""
    if not text or text != text.strip():
        return False
    return not any(c in "<>" or c < " " or c == "\x7f" for c in text)


def signature(name: str, email: str, seconds: int, offset_minutes: int) -> str:
    """`Name <email> seconds +hhmm`, as a commit's author and committer lines and a reflog
    line write a person."""
    return f"{name} <{email}> {seconds} {tz(offset_minutes)}"


def when(kind: str) -> tuple[int, int]:
    """(seconds, offset minutes) of a new commit's AUTHOR or COMMITTER: GIT_<KIND>_DATE when it
    parses, else now in the local time zone."""
    parsed = parse_date(os.environ.get(f"GIT_{kind}_DATE", "") or "")
    if parsed is None:
        now = int(time.time())
        parsed = (now, local_offset(now))
    return parsed


def iso_time(seconds: int, offset_minutes: int) -> str:
    """ISO 8601 with the given offset, as datetime.isoformat() writes it (without datetime's
    import cost on the save path)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds + offset_minutes * 60))
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{stamp}{sign}{hours:02d}:{minutes:02d}"


def tz(offset_minutes: int) -> str:
    """`+hhmm` / `-hhmm`, as git writes a signature's zone."""
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    return f"{sign}{hours:02d}{minutes:02d}"


def reflog_ident(name: str, email: str, seconds: int, offset_minutes: int) -> str:
    """`Name <email> seconds +hhmm`: the committer, as git writes a reflog line."""
    name = name.translate(_IDENT_CRUD).strip() or DEFAULT_NAME
    email = email.translate(_IDENT_CRUD).strip()
    return signature(name, email, seconds, offset_minutes)


def reflog_reason(reason: str) -> str:
    """A reflog line is one line of text: a NUL or a newline from a damaged document's title
    would break the log (git refuses such a message too)."""
    return reason.translate(_CONTROLS_TO_SPACE)
