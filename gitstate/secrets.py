"""Credential scan for everything written into a git ref that may be pushed.

A hit refuses the write and names the line; redact() blanks the values for job records;
scan_changed() is what a write checks: the whole new text, reporting only what the write adds.
Known credential shapes only, never an entropy guess, so prose, hashes and UUIDs pass.
Standard library only and regexes compiled on first use: hook paths import this cheaply.
The formats, the false-alarm policy and the block rule: docs/secrets.md.
"""

from __future__ import annotations

from itertools import accumulate, compress

from gitstate.secret_formats import (
    BASE64,
    TOKEN_FINDERS,
    TOKEN_RULES,
)

REDACTED = "[REDACTED]"
EXCERPT_WIDTH = 80

# Type checkers take this as typing.TYPE_CHECKING (True); at run time `typing` stays unloaded:
# the agent hook redacts every text it injects, and importing typing costs it ~2 ms a turn.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import NamedTuple

    class _HitFields(NamedTuple):
        line: int  # 1-based line number in the scanned text
        kind: str  # short human name, e.g. "GitHub token", "password in URL"
        excerpt: str  # the line with every secret value redacted, trimmed to ~80 chars

    import re

else:

    class _HitFields(tuple):
        """What collections.namedtuple("_HitFields", "line kind excerpt") gives, in the parts
        callers use (fields by name, _replace, _asdict, repr, pickling), written out: importing
        collections (with operator, keyword and reprlib) costs an agent hook that injects about
        a tenth of its start (tests/test_secrets.py compares the two)."""

        __slots__ = ()
        _fields = ("line", "kind", "excerpt")
        _field_defaults: dict[str, object] = {}  # noqa: RUF012 (as namedtuple has it)
        __match_args__ = _fields

        def __new__(cls, line, kind, excerpt):  # typed as the NamedTuple above
            return tuple.__new__(cls, (line, kind, excerpt))

        line = property(lambda self: self[0], doc="1-based line number in the scanned text")
        kind = property(lambda self: self[1], doc='short human name, e.g. "GitHub token"')
        excerpt = property(lambda self: self[2], doc="the line, every secret value redacted")

        def _asdict(self):
            return dict(zip(self._fields, self, strict=True))

        @classmethod
        def _make(cls, iterable):
            return cls(*iterable)

        def _replace(self, **changes):
            unknown = set(changes) - set(self._fields)
            if unknown:
                raise ValueError(f"Got unexpected field names: {sorted(unknown)!r}")
            return type(self)(**{**self._asdict(), **changes})

        def __repr__(self) -> str:
            fields = ", ".join(f"{name}={value!r}" for name, value in self._asdict().items())
            return f"{type(self).__name__}({fields})"

        def __getnewargs__(self):
            return tuple(self)


class SecretHit(_HitFields):
    __slots__ = ()


def scan(text: str) -> list[SecretHit]:
    """All hits in `text`, in line order; at most one hit per line per kind."""
    return _Scanner(text, None).run().hits


def scan_lines(lines: Iterable[tuple[int, str]]) -> list[SecretHit]:
    """Like scan(), for (line number, text) pairs, e.g. only the lines a diff adds.

    A private key block is followed through the pairs after its BEGIN line, so pass a
    hunk's added lines in order.
    """
    pairs = list(lines)
    # One joined text runs the same single pass as scan(); a stray newline inside a pair
    # must not shift the numbering, and a space has the same length.
    text = "\n".join(line.replace("\n", " ") for _, line in pairs)
    return _Scanner(text, [number for number, _ in pairs]).run().hits


def scan_changed(new_text: str, old_text: str | None) -> list[SecretHit]:
    """The hits in `new_text` that this write adds, relative to `old_text` (None: all of them).

    The whole new text is scanned, so a key block whose BEGIN line was already there is
    still seen whole; a hit is kept when its span touches a line that `old_text` does not
    hold. A key block's span runs from its BEGIN line (or its first body line when the
    BEGIN line is missing) to its END line; any other hit's span is its own line. Lines
    are compared whole, with a trailing "\\r" dropped, wherever they sit in `old_text`.
    """
    result = _Scanner(new_text, None).run()
    if old_text is None or not result.hits:
        return result.hits
    old = set(_lines(old_text))
    fresh = [line not in old for line in _lines(new_text)]
    from bisect import bisect_right

    starts = [0, *accumulate(map((1).__add__, map(len, new_text.split("\n"))))]
    kept = []
    for hit, (first, last) in zip(result.hits, result.extents, strict=True):
        top, bottom = bisect_right(starts, first) - 1, bisect_right(starts, last) - 1
        if any(fresh[top : bottom + 1]):
            kept.append(hit)
    return kept


def redact(text: str) -> tuple[str, list[SecretHit]]:
    """`text` with each secret value replaced by [REDACTED], and the hits.

    Line for line (each key-block body line becomes one [REDACTED]), so the hits' line
    numbers hold in the result too; line endings are kept.
    """
    result = _Scanner(text, None).run()
    pieces: list[str] = []
    done = 0
    for start, end in sorted(result.spans):
        pieces += (text[done:start], REDACTED)
        done = end
    pieces.append(text[done:])
    return "".join(pieces), result.hits


# --- rules -----------------------------------------------------------------------------
#
# Speed: `re` finds a pattern that starts with a literal by a fast substring search, but
# tries one that starts with a look-behind or a class at every position (20x slower). So
# every finder, the only patterns run over the whole text, starts with a literal; the rules
# run only on the lines a finder picked. Word boundaries before a token are checked in
# Python, and repeats are bounded: a search stays linear in the line whatever the input.

# A line reaches the rules only if one of these matches in it (searched in the lowered
# text, each a literal first, then enough of the shape to skip the harmless mentions:
# "task-runner", "input_tokens", a URL without a password). The family names the rules
# that may fire there; the assignment keywords below are finders too.
_FINDERS: tuple[tuple[str, str, str], ...] = (
    *TOKEN_FINDERS,
    # key blocks and the secrets found by their place (the keywords are appended below)
    ("block", "private key", "private key"),
    ("body", "m", "m(?:i[igh]|hcc|c4c)[a-z0-9+/]{37}"),
    ("body", "b3blbnnzac1rzxktdj", "b3blbnnzac1rzxktdj"),
    ("url", "://", r"://[^\s:/?#@]{0,128}:[^\s/?#]{1,256}@"),
    ("curl", "curl", r"curl[ \t]"),
    ("authorization", "authorization", r"authorization(?:\\?[\"'])?[ \t]*[:=]"),
)


# Up to 4 words before PRIVATE KEY: RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP, SSH2 ENCRYPTED…
_BLOCK_BEGIN = r"----(?:- ?| )BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)? ?-{4,5}"
_BLOCK_END = r"----(?:- ?| )END "  # the SSH2 form uses four dashes and spaces
_BLOCK_BODY = r"[A-Za-z0-9+/=]{1,200}"  # one line of base64
_BLOCK_HEADER = r"[A-Za-z][A-Za-z0-9-]{0,40}:.{0,300}"  # Proc-Type:, DEK-Info:, Comment:, …
_KEY_MATERIAL = r"[A-Za-z0-9+/]{20}"
# A key body whose BEGIN line is missing: base64 (and "\n" escapes) opening as a private
# key's DER does (a SEQUENCE, then version 0 to 3, checked after decoding) or as an
# OpenSSH key does ("openssh-key-v1"). Certificates and public keys open otherwise.
_DER_START = r"(?:MI[IGH]|MHcC|MC4C|b3BlbnNzaC1rZXktdj)(?:[A-Za-z0-9+/=]|\\[nr]){37,16384}"
_OPENSSH = "b3BlbnNzaC1rZXktdj"

# curl's credentials: -u/--user/-U/--proxy-user (alone or ending a cluster: -su), then
# user:password, searched in the line after "curl".
_CURL_USER = (
    r"(?:^|[ \t])(?:-[A-Za-z]*[uU]|--user|--proxy-user)(?:[ \t]+|=)(?P<q>[\"']?)"
    r"(?P<u>[^\s:\"'`]{0,128}):(?P<v>[^\s\"'`]{1,256})"
)

# After "://" (the scheme is checked in Python): user, ":", password, "@", a host. The
# password may hold a raw "@"; backtracking to the last one is bounded by {1,256}.
_URL = r"://(?P<u>[^\s:/?#@\[\]\"'<>`]{0,128}):(?P<v>[^\s/?#\"'`]{1,256})@(?=[A-Za-z0-9\[])"
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")

# Matched in the lowered line; the value is then read from the original.
_BEARER = r"authorization(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?(?:bearer|basic|token|bot)[ \t]+"
_BEARER_VALUE = r"[A-Za-z0-9._~+/=-]{8,4096}"

# An assignment is found from the end of its name, just before the separator (searched
# in the lowered line): *_SECRET*, *_TOKEN, *_PASSWORD, *_API_KEY… but not MAX_TOKENS or
# SECRET_ROTATION_DAYS. The start of the name is then found in Python.
_SEPARATOR = r"(?=(?:\\?[\"'])?[ \t]*(?::=|=>|=(?!=)|:(?![:/])))"
_KEYWORDS: tuple[tuple[str, str, str, str], ...] = (
    # (family, kind, literal, pattern). A bare "pass", "key" and "creds" end many names
    # that hold no secret (bypass, sort_key, credentials: "include"): see _assignments.
    ("password", "password assignment", "pass", "pass(?:w(?:or)?d|phrase)?"),
    ("pwd", "password assignment", "pwd", "pwd"),
    ("token", "token assignment", "token", "token"),
    ("apikey", "API key assignment", "api", "api[_.-]?key"),
    (
        "secret",
        "secret assignment",
        "secret",
        "secret(?:[_.-]?access)?(?:[_.-]?key)?(?:[_.-]?base)?",
    ),
    ("private", "secret assignment", "private", "private[_.-]?key"),
    ("authkey", "secret assignment", "auth", "auth[_.-]?key"),
    ("key", "secret assignment", "key", "key"),
    ("cred", "credentials assignment", "cred", "cred(?:ential)?s?"),
)
# A *_KEY name whose first part says the key is an index, a public key or an id.
# fmt: off
_NOT_SECRET_KEYS = frozenset(
    {
        "sort", "primary", "foreign", "partition", "cache", "routing", "hot", "lookup",
        "idempotency", "dedup", "dedupe", "unique", "composite", "index", "hash", "public",
        "publishable", "pub", "gpg", "pgp", "group", "row", "column", "field", "map", "object",
        "s3", "bucket", "shard", "message", "label", "translation", "i18n", "react", "query",
        "host", "dict", "range", "sequence", "cursor", "page", "lock", "trace", "item", "list",
    }
)
# fmt: on
# …then this reads an optional closing quote, the separator and a "…", '…', JSON-escaped
# \"…\" or bare value from the original line. A bare value stops at a \n, \t, \r or \"
# escape, so the rest of an escaped JSON string is not taken for the value.
_ASSIGN_REST = (
    r"(?:\\?[\"'])?(?P<sp>[ \t]*)(?P<s>:=|=>|=(?!=)|:(?![:/]))[ \t]*"
    r"(?:\\\"(?P<eq>(?:[^\"\\\n]|\\[^\"\n]){0,512})\\\"|\"(?P<dq>[^\"\n]{0,512})\""
    r"|'(?P<sq>[^'\n]{0,512})'|(?P<b>(?:[^\s\"'`,;&\\]|\\(?![nrt\"\\])){1,512}))"
)
# The shortest value an assignment reports (_is_literal); _may_hold_value relies on it.
_VALUE_MIN = 6
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NAME_MAX = 80

# Values that are a stand-in, not a credential. Sigils first: $VAR, ${VAR}, ${{ … }},
# $(cmd), <…>, {…}, {{…}}, […] (so a redacted text scans clean), %VAR%, %s, ENC[…] (sops).
_PLACEHOLDER_SHAPE = (
    r"(?s)\$.*|<.*>|\{.*\}|\[.*\]|%[A-Za-z_][A-Za-z0-9_]*%|%(?:\([A-Za-z_]+\))?[sdr]|ENC\[.*"
    r"|[*xX.•…?#_-]+"  # masks: ***, xxx, XXXX, ..., ••••
)
# Anywhere in a lowered value: a mask run or a tell-tale word; no credential holds these.
# (Substring tests: a regex alternation would be tried at every position of the value.)
_PLACEHOLDER_PARTS = (
    "***", "...", "…", "xxxxxx", "00000000", "example", "placeholder", "redacted", "dummy",
    "changeme", "change_me", "change-me", "replaceme", "replace_me", "replace-me",
)  # fmt: skip
_YOUR = r"(?:^|[^a-z])your"  # your_api_key, <your-token>, but not "tryoursecret"
# Words that stand for "no value" or name the field instead of filling it. `changeme`
# counts: it is the conventional "replace this" default, not somebody's secret.
# fmt: off
_STOP_WORDS = frozenset(
    {
        "true", "false", "yes", "no", "on", "off", "none", "null", "nil", "undefined", "empty",
        "unset", "required", "optional", "default", "todo", "tbd", "string", "str", "text", "bytes",
        "int", "secret", "secrets", "password", "passwd", "pass", "pwd", "passphrase", "token",
        "tokens", "apikey", "api_key", "key", "value", "changeme", "changeit", "hidden", "masked",
        "omitted", "removed", "test", "testing", "sample", "fake", "n/a", "na", "bearer", "basic",
    }
)
# fmt: on
# Counts, ports, durations and versions: 5, 3600, 200ms, 1.2.3.
_NUMBER = r"[0-9]+(?:\.[0-9]+)*[A-Za-z]{0,3}"
# An identifier standing for another variable (db_pass, API_TOKEN), not a literal.
_IDENTIFIER = r"_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+|_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"  # settings.API_KEY
_AWS_SECRET = r"[A-Za-z0-9/+]{40}"
_PATHISH = r"[a-z0-9_.-]+(?:/[a-z0-9_.-]+)+/?"  # an object key or path: img/2026/cat.png
_WORD = r"[A-Za-z]+"
_WORDS = r"[A-Za-z]+(?: [A-Za-z]+)+"  # "will be replaced": prose, not a passphrase
_COLOUR = r"#[0-9A-Fa-f]{3,8}"  # a theme's Token: "#cccccc"

# Every token (the shortest: AKIA and 16) is a whitespace-delimited word this long or longer.
_WORD_MIN = 16
_IN_WORDS = frozenset(f for f, _, _ in TOKEN_FINDERS) | {"body"}

# A finder here matches only where its word holds a run of this many characters of one set of
# _RUN_CHARS (a quantified class of the pattern; tests/test_secrets_gates.py derives the table
# from the patterns). Every run is at least _WORD_MIN long, so such a match lies in a word that
# `words` keeps. The literals of four (":", ".", "s.", "m") are in most long words of a STATE.md
# (`tests/test_x.py::test_y`): without this test each would be compiled and run on nearly every
# text the agent hook injects (≈ 0.15 ms a cold compile).
_LONG_RUNS: dict[str, tuple[int, str]] = {
    "akia[a-z0-9]{16}": (16, "token"),
    "asia[a-z0-9]{16}": (16, "token"),
    "gh[pousr]_[a-z0-9]{36}": (36, "token"),
    "sk-[a-z0-9_-]{20}": (20, "token"),
    "aiza[a-z0-9_-]{35}": (35, "token"),
    "npm_[a-z0-9]{36}": (36, "token"),
    r"sg\.[a-z0-9_-]{22}\.": (22, "token"),
    "sk[0-9a-f]{32}": (32, "token"),
    "ac[0-9a-f]{32}": (32, "token"),
    "hf_[a-z0-9]{34}": (34, "token"),
    "dapi[0-9a-f]{32}": (32, "token"),
    "key-[0-9a-f]{32}": (32, "token"),
    "pul-[0-9a-f]{40}": (40, "token"),
    "secret_[a-z0-9]{43}": (43, "token"),
    ":[a-z0-9_-]{35}": (35, "token"),
    r"\.[a-z0-9_-]{6}\.[a-z0-9_-]{27}": (27, "token"),
    r"s\.[a-z0-9]{24}": (24, "token"),
    "m(?:i[igh]|hcc|c4c)[a-z0-9+/]{37}": (37, "base64"),
}
_RUN_CHARS = {
    "token": frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-"),
    "base64": frozenset("abcdefghijklmnopqrstuvwxyz0123456789+/"),
}
# Every other ASCII character ends a run; a character beyond ASCII is kept (a looser test).
# The runs are read in the words' UTF-8 (a bytes translate is some fifty times faster than a
# str one on a text with CJK): a character beyond ASCII is then 2 to 4 bytes of a run, which
# only makes the test looser, and a match's own characters are ASCII, so its distances hold.
_RUN_BREAKS = {
    name: bytes(32 if c < 128 and chr(c) not in chars else c for c in range(256))
    for name, chars in _RUN_CHARS.items()
}


class _Runs:
    """The runs of one set of _RUN_CHARS (or bytes beyond ASCII) in the long words' UTF-8: the
    longest, and where those of _WORD_MIN or more are (on first use)."""

    __slots__ = ("_found", "lengths", "longest")

    def __init__(self, data: bytes, chars: str) -> None:
        # Every other ASCII character becomes a blank (the words hold no other white space),
        # so piece i starts at the sum of the lengths before it, plus one blank each.
        self.lengths = list(map(len, data.translate(_RUN_BREAKS[chars]).split(b" ")))
        self.longest = max(self.lengths)
        self._found: list[tuple[int, int]] | None = None

    def long(self) -> list[tuple[int, int]]:
        """(start, end) in the data of each run of _WORD_MIN or more: a few in any text
        (hashes, ids), often none."""
        if self._found is None:
            starts = accumulate(map((1).__add__, self.lengths), initial=0)
            long = map(_WORD_MIN.__le__, self.lengths)
            self._found = [
                (at, at + n) for at, n in compress(zip(starts, self.lengths, strict=False), long)
            ]
        return self._found


def _longest_run(words: str, chars: str) -> int:
    """The longest run of _RUN_CHARS[chars] in `words`, a character beyond ASCII counting as
    its UTF-8 bytes (as in _Runs: never shorter than the run in characters)."""
    return _Runs(words.encode("utf-8", "surrogatepass"), chars).longest


_NO_RUN = (0, "")

# How many characters may stand between a gated finder's literal and its long run (the widest
# its pattern allows; 0 where the run follows the literal at once). A text whose longest run is
# long enough may hold it only in a hash or an id (the base_sha of every job record): the run
# must also come just after the literal, in the same word (_run_after).
_RUN_GAPS: dict[str, int] = {
    "gh[pousr]_[a-z0-9]{36}": 2,
    r"\.[a-z0-9_-]{6}\.[a-z0-9_-]{27}": 7,
    "m(?:i[igh]|hcc|c4c)[a-z0-9+/]{37}": 3,
}


def _run_after(
    data: bytes, literal: bytes, gap: int, need: int, runs: list[tuple[int, int]]
) -> bool:
    """Whether `literal` occurs in the words' UTF-8 `data` with one of `runs` holding `need`
    characters that start at most `gap` after its end, in the same word: where a gated finder
    matches, its run is such a stretch."""
    size = len(literal)
    for start, end in runs:
        if end - start < need:
            continue
        # the literal ends in [start - gap, end - need]; before `start`, in the run's word
        at = data.find(literal, max(0, start - gap - size), end - need)
        while at >= 0:
            if at + size >= start or b" " not in data[at + size : start]:
                return True
            at = data.find(literal, at + 1, end - need)  # at most gap + size more
    return False


_ALL_FINDERS = _FINDERS + tuple(
    (family, literal, p + _SEPARATOR) for family, _, literal, p in _KEYWORDS
)
_RANK = {family: rank for rank, (family, _, _) in enumerate(_ALL_FINDERS)}  # rule order


def _tokens_by_family() -> dict[str, list[tuple[str, str, frozenset[str], str]]]:
    # One pass, in the rules' order: built at import, so on every agent hook's inject.
    found: dict[str, list[tuple[str, str, frozenset[str], str]]] = {}
    for family, kind, p, before, check in TOKEN_RULES:
        found.setdefault(family, []).append((kind, p, before, check))
    return found


_TOKENS_BY_FAMILY = _tokens_by_family()
_KEYWORDS_BY_FAMILY = {family: (kind, p + _SEPARATOR) for family, kind, _, p in _KEYWORDS}
_ASSIGNMENT_FINDERS = frozenset(p + _SEPARATOR for _, _, _, p in _KEYWORDS)
_KEYWORD_LITERALS = tuple(dict.fromkeys(literal for _, _, literal, _ in _KEYWORDS))
# What a keyword pattern may match after its literal (every _KEYWORDS pattern is a literal, then
# only these characters), and what _SEPARATOR may step over before its `:` or `=`.
_KEYWORD_TAIL = frozenset("abcdefghijklmnopqrstuvwxyz_.-")


def _may_assign(low: str, literal: str, valued: bool = False) -> bool:
    """False when no occurrence of a keyword's `literal` can start an assignment: after it and
    the rest of its word (_KEYWORD_TAIL), past an optional backslash, quote and blanks, comes
    no `:` or `=`. A looser test than _SEPARATOR's (never False where the pattern matches),
    so a False skips compiling and running a pattern that would find nothing: "## Key data"
    is in every English STATE.md the agent hook redacts.

    With `valued`, an occurrence counts only if a value _is_literal could take may follow the
    separator too (_may_hold_value): a looser test than the assignment rule's, so when it is
    False for every keyword no assignment can be reported, and the scan runs none of their
    finders. `"tests_passed": true` and `"input_tokens": 1`, in every job record, then need
    neither a pattern nor _ASSIGN_REST compiled."""
    at = low.find(literal)
    run_end = -1  # where the last word scanned ends: an occurrence inside it ends there too
    while at >= 0:
        end = at + len(literal)
        if end <= run_end:
            at = low.find(literal, at + 1)
            continue  # same word end, already judged: keeps "keykeykey…" linear
        while end < len(low) and low[end] in _KEYWORD_TAIL:
            end += 1
        run_end = end
        if low.startswith("\\", end):
            end += 1
        if end < len(low) and low[end] in "\"'":
            end += 1
        while end < len(low) and low[end] in " \t":
            end += 1
        if end < len(low) and low[end] in ":=" and (not valued or _may_hold_value(low, end)):
            return True
        at = low.find(literal, at + 1)
    return False


# What ends _ASSIGN_REST's bare value (besides blanks, which str.isspace and `\s` agree on). A
# backslash is not here: the bare value may hold one, and counting it only makes the test looser.
_BARE_STOPS = frozenset("\"'`,;&")


def _may_hold_value(low: str, sep: int) -> bool:
    """Whether _ASSIGN_REST, with its separator's first character at `sep`, may read a value
    of _VALUE_MIN characters or more once stripped (the least _is_literal takes). Never False
    where it does: every value lies on the separator's line after it; a bare one is a run of
    characters that are no blank nor in _BARE_STOPS; a quoted one lies within 1024 characters
    after its opening quote (or escaped quote), and stripped it is no longer than that stretch
    stripped.
    Works on the lowered line: lowering changes none of the characters tested here.
    """
    mark, after = low[sep], low[sep + 1 : sep + 2]
    if (mark == ":" and after in (":", "/")) or (mark == "=" and after == "="):
        return False  # `::`, `:/`, `==`: no separator (_SEPARATOR's look-aheads)
    # `:=` and `=>` may also be read as `:` or `=` with the value starting at `=` or `>`.
    starts = (sep + 1, sep + 2) if mark + after in (":=", "=>") else (sep + 1,)
    for at in starts:
        while at < len(low) and low[at] in " \t":
            at += 1
        if low.startswith(('"', "'", '\\"'), at):
            opening = at + (2 if low[at] == "\\" else 1)
            # 512 escapes (`\\x`, 2 characters each) at most between `\"` and `\"`
            inside = low[opening : opening + 1024].partition("\n")[0]
            if len(inside.strip()) >= _VALUE_MIN:
                return True
            continue
        bare = low[at : at + _VALUE_MIN]
        if len(bare) == _VALUE_MIN and not any(ch.isspace() or ch in _BARE_STOPS for ch in bare):
            return True
    return False


# False only in tests (tests/test_secrets_prefilter.py): every finder is then compiled and run
# on the whole text, and the verdicts must be the same as with the gates above.
_GATES = True

_compiled: dict[str, re.Pattern[str]] = {}


def _rx(source: str) -> re.Pattern[str]:
    """The compiled pattern, built on first use.

    Importing compiles nothing, and a scan compiles only what its text calls for:
    compiling every pattern costs several milliseconds, while a clean STATE.md needs
    at most a handful.
    """
    pattern = _compiled.get(source)
    if pattern is None:
        import re  # here: `re` (with enum and functools) is most of a clean inject's imports

        pattern = _compiled[source] = re.compile(source)
    return pattern


# --- value judgement -------------------------------------------------------------------


def _is_placeholder(value: str) -> bool:
    v = value.strip()
    low = v.lower()
    return (
        not v
        or low in _STOP_WORDS
        or _rx(_PLACEHOLDER_SHAPE).fullmatch(v) is not None
        or any(part in low for part in _PLACEHOLDER_PARTS)
        or ("your" in low and _rx(_YOUR).search(low) is not None)
    )


def _is_literal(value: str, quoted: bool, colon: bool, spaced: bool, name: str, tail: str) -> bool:
    """Whether an assigned value is a literal credential rather than a stand-in or code.

    `tail` is the first non-blank character after the value on its line ("" at the end).
    """
    v = value.strip()
    if len(v) < _VALUE_MIN or _is_placeholder(v):  # nothing worth guarding is that short: on, 1234
        return False
    if _rx(_NUMBER).fullmatch(v) and len(v) <= 12:
        return False
    if v.startswith(("/", "./", "../", "~/")):  # a path to a key file, not the key
        return False
    if _rx(_WORDS).fullmatch(v) or _rx(_COLOUR).fullmatch(v):
        return False
    if colon and _rx(_WORD).fullmatch(v.lstrip("_")):
        # "Password: required", `token: str`, `private_key: "_RSAPrivateKey"`: after a
        # label or in a type annotation a lone word is prose or a type, not a secret.
        return False
    if quoted:
        # `"TOKEN=" + value` in code: the "value" runs from one string literal into the
        # next, so it has blanks at an end or quotes inside. Secrets have neither.
        return v == value and not any(q in v for q in "\"'`")
    if not v.isascii() or any(ch in v for ch in "()[]{}<>"):  # prose, code or a grammar
        return False
    if v.lower() == name.lower() or _rx(_IDENTIFIER).fullmatch(v) or _rx(_DOTTED).fullmatch(v):
        return False  # api_key=api_key, token=API_TOKEN, key=settings.KEY
    if spaced and _rx(_WORD).fullmatch(v.replace("_", "a")):
        return False  # `token = new_value`: code assigning a variable
    # A bare YAML-style secret is a lone value at the end of its line (or of a flow map).
    return not colon or tail in ("", "#", ",", "}")


# --- scanning --------------------------------------------------------------------------

_Found = list[tuple[int, int, str]]  # (start, end, kind) of each value on a line


def _lower(text: str) -> str:
    """text.lower() with every index unchanged, so a match in it is a match in `text`."""
    low = text.lower()
    if len(low) == len(text):  # lower() never shrinks a character, so all map 1:1
        return low
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)  # e.g. "İ"


def _lines(text: str) -> list[str]:
    """The lines as the scanner sees them: split at "\n", a trailing "\r" dropped."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _after_escape(line: str, at: int) -> bool:
    """Whether `at` follows a \n, \r or \t escape, which ends a word in JSON-escaped text."""
    return at >= 2 and line[at - 1] in "nrt" and line[at - 2] == "\\"


def _check(value: str, check: str) -> bool:
    """A token rule's check on the random part of a value (see TOKEN_RULES)."""
    upper = any(ch.isupper() for ch in value)
    lower = any(ch.islower() for ch in value)
    digit = any(ch.isdigit() for ch in value)
    if check == "mixed":
        return upper and lower
    if check == "random":
        return upper + lower + digit >= 2
    if check == "vault":
        return upper and lower and digit
    if check == "discord":
        return _is_user_id(value)
    return True


def _is_user_id(part: str) -> bool:
    """Whether a Discord token's first part is base64 of a user id (17 to 20 digits)."""
    import binascii  # a built-in module; only a Discord-shaped value gets here

    try:
        raw = binascii.a2b_base64(part.replace("-", "+").replace("_", "/") + "==")
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(raw) <= 20 and raw.isdigit()


def _is_private_der(b64: str) -> bool:
    """Whether base64 opens a private key: OpenSSH's magic or DER for PKCS#1/#8, SEC1, PFX.

    DER: a SEQUENCE, its length, INTEGER version 0 to 3, then an INTEGER, SEQUENCE or
    OCTET STRING. A certificate or public key puts a SEQUENCE where the version would be.
    """
    if b64.startswith(_OPENSSH):
        return True
    import binascii

    try:
        raw = binascii.a2b_base64(b64[:16])
    except (binascii.Error, ValueError):
        return False
    if len(raw) < 12 or raw[0] != 0x30:
        return False
    head = 2 if raw[1] < 0x80 else 2 + (raw[1] & 0x7F)
    if head > 5:
        return False
    version = raw[head : head + 3]
    return version[:2] == b"\x02\x01" and version[2] <= 3 and raw[head + 3] in (0x02, 0x30, 0x04)


class _Result:
    def __init__(self) -> None:
        self.hits: list[SecretHit] = []
        self.spans: list[tuple[int, int]] = []  # offsets in the text to replace by REDACTED
        # for each hit, the offsets of the start of its first line and the end of its last
        self.extents: list[tuple[int, int]] = []


class _Scanner:
    def __init__(self, text: str, numbers: list[int] | None) -> None:
        self.text = text
        self.low = _lower(text)
        self.numbers = numbers  # line numbers by line index; None: index + 1
        self.result = _Result()

    def _candidates(self) -> list[tuple[int, int, int, set[str]]]:
        """(line index, start, end, families) of each line holding a finder literal."""
        low = self.low
        lines: dict[int, set[str]] = {}  # line index -> families
        ends: list[int] = []  # ends[i]: offset where line i + 1 starts (built on first hit)
        words = ""  # the words long enough to hold a token (built on first use)
        data = b""  # their UTF-8, for the runs (on first use)
        runs: dict[str, _Runs] = {}  # the runs in them by set (on first use)
        valued: bool | None = None  # whether an assignment may be reported (on first use)
        for family, literal, finder in _ALL_FINDERS:
            # `in` is a fast substring search that stops at the first occurrence; most
            # literals are absent, and then their pattern is never compiled or run. A
            # token is one word of 16 characters or more, so a token's literal is first
            # looked for in those words alone: a few percent of a STATE.md.
            if not _GATES:
                pass  # every finder runs: the reference tests check the gates against
            elif family in _IN_WORDS:
                if not words:
                    words = " ".join(w for w in low.split() if len(w) >= _WORD_MIN) or " "
                if literal not in words:
                    continue
                need, chars = _LONG_RUNS.get(finder, _NO_RUN)
                if need:
                    if chars not in runs:
                        data = data or words.encode("utf-8", "surrogatepass")
                        runs[chars] = _Runs(data, chars)
                    if runs[chars].longest < need:
                        continue
                    gap = _RUN_GAPS.get(finder, 0)
                    if not _run_after(data, literal.encode(), gap, need, runs[chars].long()):
                        continue
            elif literal not in low:
                continue
            elif finder in _ASSIGNMENT_FINDERS:
                if not _may_assign(low, literal):
                    continue
                if valued is None:
                    # All or none: a name inside another's value is read as part of it
                    # (`token=pwd: …` is no pwd assignment), so skipping the one finder
                    # could make the other's rule report what it would not.
                    valued = any(_may_assign(low, lit, valued=True) for lit in _KEYWORD_LITERALS)
                if not valued:
                    continue
            search = _rx(finder).search
            m = search(low)
            while m is not None:
                if not ends:
                    ends = list(accumulate(map((1).__add__, map(len, low.split("\n")))))
                index = _bisect_right(ends, m.start())
                lines.setdefault(index, set()).add(family)
                # One hit per finder per line is enough: go on from the next line, so
                # even a flood of literals on one line costs a single search.
                m = search(low, ends[index])
        return [
            (index, ends[index - 1] if index else 0, ends[index] - 1, lines[index])
            for index in sorted(lines)
        ]

    def run(self) -> _Result:
        skip_to = 0  # text before this offset is a key block already reported
        for index, start, end, families in self._candidates():
            if start < skip_to:
                continue
            next_line = end + 1
            if end > start and self.text[end - 1] == "\r":
                end -= 1
            line, low = self.text[start:end], self.low[start:end]
            found: _Found = []
            reported: list[tuple[int, str]] = []  # (column, kind) of hits with no value
            reach: dict[str, int] = {}  # kind -> where a hit spanning lines ends
            ordered = sorted(families, key=_RANK.__getitem__)  # the rules' order
            for family in ordered:
                if family in _TOKENS_BY_FAMILY:
                    self._tokens(line, _TOKENS_BY_FAMILY[family], found)
            if "block" in families:
                skip_to = max(skip_to, self._blocks(line, next_line, found, reported, reach))
            if "body" in families:
                skip_to = max(skip_to, self._bare_body(line, next_line, found, reach))
            if "url" in families:
                self._urls(line, found)
            if "curl" in families:
                self._curl(line, low, found)
            if "authorization" in families:
                self._bearer(line, low, found)
            keywords = [(f, *_KEYWORDS_BY_FAMILY[f]) for f in ordered if f in _KEYWORDS_BY_FAMILY]
            if keywords:
                self._assignments(line, low, keywords, found)
            if found or reported:
                self._record(index, start, line, found, reported, reach)
        self.result.spans.sort()
        return self.result

    def _record(
        self,
        index: int,
        start: int,
        line: str,
        found: _Found,
        reported: list[tuple[int, str]],
        reach: dict[str, int],
    ) -> None:
        spans = sorted((s, e) for s, e, _ in found)
        self.result.spans.extend((start + s, start + e) for s, e in spans)
        excerpt = _excerpt(_apply(line, spans))
        number = self.numbers[index] if self.numbers is not None else index + 1
        seen: set[str] = set()
        for _, kind in sorted([(s, k) for s, _, k in found] + reported):
            if kind not in seen:  # at most one hit per line per kind
                seen.add(kind)
                self.result.hits.append(SecretHit(number, kind, excerpt))
                self.result.extents.append((start, reach.get(kind, start + len(line))))

    def _tokens(
        self,
        line: str,
        rules: list[tuple[str, str, frozenset[str], str]],
        found: _Found,
    ) -> None:
        for kind, source, before, check in rules:
            pattern = _rx(source)
            for m in pattern.finditer(line):
                at = m.start()
                if at > 0 and line[at - 1] in before and not _after_escape(line, at):
                    continue  # inside a longer word: "task-…" is not "sk-…"
                group = "v" if "v" in pattern.groupindex else 0
                value = m.group(group)
                if check and not _check(m.group("t") or value, check):
                    continue
                if kind.startswith("GCP") and not (
                    "PRIVATE KEY" in value or _rx(_KEY_MATERIAL).search(value)
                ):
                    continue
                if not _is_placeholder(value):
                    _claim(found, m.start(group), m.end(group), kind)

    def _blocks(
        self,
        line: str,
        next_line: int,
        found: _Found,
        reported: list[tuple[int, str]],
        reach: dict[str, int],
    ) -> int:
        """Report a key block starting on this line; return the offset its body ends at.

        A bare BEGIN line (quoted in prose, or code that looks for it) holds no key, so a
        block counts only with key material after the marker, on this line or below.
        """
        kind = "private key block"
        for m in _rx(_BLOCK_BEGIN).finditer(line):
            rest = line[m.end() :]
            end_marker = _rx(_BLOCK_END).search(rest)
            inline = rest[: end_marker.start()] if end_marker else rest
            if _rx(_KEY_MATERIAL).search(inline.replace("\\n", " ")):
                # One-line block, e.g. "\n"-escaped in JSON: redact between the markers.
                stop = len(inline) if end_marker else len(inline.rstrip("\"',"))
                _claim(found, m.end(), m.end() + stop, kind)
                continue
            if end_marker or rest.replace("\\n", "").strip(" \t\"',"):
                continue  # BEGIN…END with nothing between, or prose after the marker
            body, last = self._block_body(next_line, headers=True)
            if body and not _overlaps(found, m.start(), m.end()):
                reported.append((m.start(), kind))
                reach[kind] = last
                self.result.spans.extend((s, e) for s, e in body if self.text[s:e].strip())
                return body[-1][1]
        return 0

    def _bare_body(self, line: str, next_line: int, found: _Found, reach: dict[str, int]) -> int:
        """Report a key body whose BEGIN line is missing; return the offset it ends at.

        It starts on this line, as a private key's DER or OpenSSH's magic (_DER_START), and
        runs over the base64 lines below up to an END line, a blank or other text.
        """
        kind = "private key block"
        for m in _rx(_DER_START).finditer(line):
            at = m.start()
            if at > 0 and line[at - 1] in BASE64 and not _after_escape(line, at):
                continue
            if not _is_private_der(m.group()) or _overlaps(found, at, m.end()):
                continue
            _claim(found, at, m.end(), kind)
            if line[m.end() :].strip(" \t\"',\\"):
                return 0  # more text after it on the line: the key ends here
            body, last = self._block_body(next_line, headers=False)
            if not body:
                return 0
            reach[kind] = last
            self.result.spans.extend(body)
            return body[-1][1]
        return 0

    def _block_body(self, pos: int, headers: bool) -> tuple[list[tuple[int, int]], int]:
        """The body lines of a key block whose BEGIN line precedes offset `pos`, and the
        offset its END line (or else its last body line) ends at.

        Empty unless the body holds key material; an unterminated block (a pasted key cut
        short) ends at the first line that is neither base64, a header nor blank. Without
        `headers` (a body found without its BEGIN line) only base64 lines count.
        """
        text = self.text
        body: list[tuple[int, int]] = []
        material = False
        last = -1
        while pos <= len(text):
            newline = text.find("\n", pos)
            end = len(text) if newline < 0 else newline
            if end > pos and text[end - 1] == "\r":
                end -= 1
            stripped = text[pos:end].strip().strip("\"',").replace("\\n", "")
            if _rx(_BLOCK_END).match(stripped):
                last = end
                break
            if _rx(_BLOCK_BODY).fullmatch(stripped):
                material = material or len(stripped) >= 16
            elif not headers or (stripped and not _rx(_BLOCK_HEADER).fullmatch(stripped)):
                break
            body.append((pos, end))
            if newline < 0:
                break
            pos = newline + 1
        while body and not text[body[-1][0] : body[-1][1]].strip():
            body.pop()
        if not material:
            return [], -1
        return body, last if last >= 0 else body[-1][1]

    def _urls(self, line: str, found: _Found) -> None:
        for m in _rx(_URL).finditer(line):
            if m.start() == 0 or line[m.start() - 1] not in _SCHEME_CHARS:
                continue
            password = m.group("v")
            # user:user@ (postgres:postgres, guest:guest) is a well-known default login.
            if _is_placeholder(password) or password == m.group("u"):
                continue
            _claim(found, m.start("v"), m.end("v"), "password in URL")

    def _curl(self, line: str, low: str, found: _Found) -> None:
        for m in _rx(_CURL_USER).finditer(line, low.find("curl")):
            user, password = m.group("u"), m.group("v")
            # -u user:user is a default login; -u 1000:1000 (docker's uid:gid) none at all
            if _is_placeholder(password) or password == user or password.isdigit():
                continue
            _claim(found, m.start("v"), m.end("v"), "password in curl -u")

    def _bearer(self, line: str, low: str, found: _Found) -> None:
        for m in _rx(_BEARER).finditer(low):
            value = _rx(_BEARER_VALUE).match(line, m.end())
            if value and not _is_placeholder(value.group()):
                _claim(found, value.start(), value.end(), "authorization header")

    def _assignments(
        self, line: str, low: str, keywords: list[tuple[str, str, str]], found: _Found
    ) -> None:
        keys = [
            (k.start(), k.end(), kind, family)
            for family, kind, keyword in keywords
            for k in _rx(keyword).finditer(low)
        ]
        resume = 0  # a name inside the value just read is part of that value
        for at, key_end, kind, family in sorted(keys):
            if at < resume:
                continue
            m = _rx(_ASSIGN_REST).match(line, key_end)
            start = _name_start(line, at) if m else -1
            if m is None or start < 0:
                continue
            group = next(g for g in ("eq", "dq", "sq", "b") if m.group(g) is not None)
            resume = m.end(group)
            if _overlaps(found, m.start(group), resume):
                continue  # already a more specific hit: GITHUB_TOKEN=ghp_…
            value = m.group(group)
            name = line[start:key_end].lstrip("-")
            literal = _is_literal(
                value,
                quoted=group != "b",
                colon=m.group("s") == ":",
                spaced=bool(m.group("sp")),
                name=name,
                tail=line[m.end() : m.end() + 80].lstrip(" \t")[:1],
            )
            if not literal or not _names_a_secret(line, start, at, key_end, family):
                continue
            if family in ("key", "cred") and not _looks_random(value):
                continue  # sort_key = "-created_at", credentials: "same-origin"
            lowered = name.lower()
            aws_name = "secret" in lowered and ("aws" in lowered or "access" in lowered)
            if aws_name and _rx(_AWS_SECRET).fullmatch(value.strip()):
                kind = "AWS secret access key"
            _claim(found, m.start(group), m.end(group), kind)


def _names_a_secret(line: str, start: int, at: int, key_end: int, family: str) -> bool:
    """Whether a bare "pass", "key" or "creds" ends its name as a word: DB_PASS, dbPass,
    ENCRYPTION_KEY, encryptionKey, DOCKER_CREDS, but not bypass, monkey, sort_key, win32cred
    or a lone `key`.
    """
    word = line[at:key_end].lower()
    if family != "cred" and (family, word) not in (("password", "pass"), ("key", "key")):
        return True
    before = line[start:at].lstrip("-")
    if not before:
        return family != "key"  # PASS=…, credentials=…, but key=… is any map's key
    edge = before[-1]
    if not (edge in "_-." or (edge.islower() and line[at].isupper())):
        return False
    if family == "key":
        words = _rx(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])").findall(before)
        return not words or words[-1].lower() not in _NOT_SECRET_KEYS
    return True


def _looks_random(value: str) -> bool:
    """The stricter test for names that also hold non-secrets (*_KEY, *_CREDENTIALS): one
    token, no identifier or dotted name, and three kinds of character (upper, lower, digit,
    other), or two over 16 characters with a digit (a hex key).
    """
    v = value.strip()
    if any(ch.isspace() for ch in v) or "://" in v or any(ch in v for ch in "(){}[]<>"):
        return False
    if _rx(_IDENTIFIER).fullmatch(v) or _rx(_DOTTED).fullmatch(v) or _rx(_PATHISH).fullmatch(v):
        return False
    digit = any(ch.isdigit() for ch in v)
    kinds = (
        any(ch.isupper() for ch in v)
        + any(ch.islower() for ch in v)
        + digit
        + any(not ch.isalnum() for ch in v)
    )
    return kinds >= 3 or (kinds == 2 and digit and len(v) >= 16)


def _name_start(line: str, at: int) -> int:
    """Where the name holding the keyword at `at` starts, or -1 if it is no assignee."""
    start = at
    while start > 0 and line[start - 1] in _NAME_CHARS and at - start < _NAME_MAX:
        start -= 1
    if start > 0 and line[start - 1] in _NAME_CHARS:
        return -1  # longer than any real variable name
    if _after_escape(line, start + 1) and start + 1 <= at:
        start += 1  # "\nDB_PASSWORD=…" in a JSON string: the name starts after the escape
    if line[max(0, start - 2) : start] == "${" or line[start - 1 : start] == "$":
        return -1  # ${API_TOKEN:-x}, $TOKEN: a reference, not an assignment
    bare = line[start:at].lstrip("-")
    if len(line[start:at]) - len(bare) > 2 or (bare and not (bare[0].isalpha() or bare[0] == "_")):
        return -1
    return start


def _bisect_right(ends: list[int], at: int) -> int:
    # bisect is imported on the first hit: most texts the agent hook redacts have none.
    from bisect import bisect_right

    return bisect_right(ends, at)


def _overlaps(found: _Found, start: int, end: int) -> bool:
    """Whether [start, end) overlaps a value in `found`, which is sorted and without overlaps,
    so only the neighbours need a look: a line of thousands of values stays linear."""
    from bisect import bisect_left

    i = bisect_left(found, (start,))
    return (i > 0 and found[i - 1][1] > start) or (i < len(found) and found[i][0] < end)


def _claim(found: _Found, start: int, end: int, kind: str) -> None:
    """Record a value unless an earlier, more specific rule already took that text."""
    if not _overlaps(found, start, end):
        from bisect import insort

        insort(found, (start, end, kind))


def _apply(line: str, spans: list[tuple[int, int]]) -> str:
    """`line` with each of the sorted, disjoint `spans` replaced by REDACTED."""
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        pieces += (line[done:start], REDACTED)
        done = end
    pieces.append(line[done:])
    return "".join(pieces)


def _excerpt(redacted_line: str) -> str:
    """The redacted line, trimmed to EXCERPT_WIDTH around its first redaction."""
    text = redacted_line.strip()
    if len(text) <= EXCERPT_WIDTH:
        return text
    first = text.find(REDACTED)
    start = max(0, min(first - 30, len(text) - EXCERPT_WIDTH)) if first >= 0 else 0
    piece = text[start : start + EXCERPT_WIDTH]
    if start > 0:
        piece = "…" + piece[1:]
    if start + EXCERPT_WIDTH < len(text):
        piece = piece[:-1] + "…"
    return piece
