"""Credential scan for everything written into a git ref that may be pushed.

A hit refuses the write and names the line; redact() blanks the values for job records.
Known credential shapes only, never an entropy guess, so prose, hashes and UUIDs pass.
Standard library only and regexes compiled on first use: hook paths import this cheaply.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate
from typing import NamedTuple

REDACTED = "[REDACTED]"
EXCERPT_WIDTH = 80


class SecretHit(NamedTuple):
    line: int  # 1-based line number in the scanned text
    kind: str  # short human name, e.g. "GitHub token", "password in URL"
    excerpt: str  # the line with every secret value redacted, trimmed to ~80 chars


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
# tries one that starts with a look-behind or a class at every position (20x slower). So every pattern
# here starts with a literal, word boundaries before a token are checked in Python, and
# repeats are bounded: a search stays linear in the line whatever the input.

# A line reaches the rules only if one of these matches in it (searched in the lowered
# text, each a literal first, then enough of the shape to skip the harmless mentions:
# "task-runner", "input_tokens", a URL without a password). The family names the rules
# that may fire there; the assignment keywords below are finders too.
_FINDERS: tuple[tuple[str, str, str], ...] = (
    # (family, a literal the pattern needs, pattern): on a small text the literal is looked
    # for first, so a clean STATE.md compiles no pattern at all.
    ("aws", "akia", "akia[a-z0-9]{16}"),
    ("aws", "asia", "asia[a-z0-9]{16}"),
    ("github", "gh", "gh[pousr]_[a-z0-9]{36}"),
    ("github", "github_pat_", "github_pat_"),
    ("gitlab", "glpat-", "glpat-"),
    ("slack", "xox", "xox[abposr]-"),
    ("slack", "xapp-", "xapp-"),
    ("slack", "hooks.slack.com/", r"hooks\.slack\.com/"),
    ("sk", "sk-", "sk-[a-z0-9_-]{20}"),
    ("google", "aiza", "aiza[a-z0-9_-]{35}"),
    ("stripe", "k_live_", "k_live_"),
    ("npm", "npm_", "npm_[a-z0-9]{36}"),
    ("jwt", "eyj", r"eyj[a-z0-9_-]{8,4096}\.eyj"),
    ("block", "private key", "private key"),
    ("azure", "accountkey=", "accountkey="),
    ("azure", "sharedaccesskey=", "sharedaccesskey="),
    ("url", "://", r"://[^\s:/?#@]{0,128}:[^\s/?#]{1,256}@"),
    ("authorization", "authorization", "authorization[\"']?[ \t]*[:=]"),
)

_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_END = r"(?![A-Za-z0-9_-])"

# (family, kind, pattern, characters that may not come just before the match). Order
# matters: a value overlapping one already found on the line is dropped, so these
# specific shapes win over the URL and assignment rules below.
_TOKEN_RULES: tuple[tuple[str, str, str, frozenset[str]], ...] = (
    ("aws", "AWS access key id", r"A(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9])", _ALNUM),
    ("github", "GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,251}" + _END, _TOKEN_CHARS),
    ("github", "GitHub token", r"github_pat_[A-Za-z0-9_]{22,244}" + _END, _TOKEN_CHARS),
    ("gitlab", "GitLab token", r"glpat-[A-Za-z0-9_-]{20,100}" + _END, _TOKEN_CHARS),
    ("slack", "Slack token", r"x(?:ox[abposr]|app)-[A-Za-z0-9-]{10,250}" + _END, _TOKEN_CHARS),
    (
        "slack",
        "Slack webhook URL",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{20,300})",
        frozenset(),
    ),
    ("sk", "Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,250}" + _END, _TOKEN_CHARS),
    (
        "sk",
        "OpenAI API key",
        r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,250}" + _END,
        _TOKEN_CHARS,
    ),
    # The old form has no dashes after "sk-", so kebab-case words never match it.
    ("sk", "OpenAI API key", r"sk-[A-Za-z0-9]{20,250}" + _END, _TOKEN_CHARS),
    ("google", "Google API key", r"AIza[0-9A-Za-z_-]{35}" + _END, _TOKEN_CHARS),
    ("stripe", "Stripe live key", r"sk_live_[A-Za-z0-9]{20,250}" + _END, _TOKEN_CHARS),
    ("stripe", "Stripe live key", r"rk_live_[A-Za-z0-9]{20,250}" + _END, _TOKEN_CHARS),
    ("npm", "npm token", r"npm_[A-Za-z0-9]{36}" + _END, _TOKEN_CHARS),
    (
        "jwt",
        "JSON web token",
        r"eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{16,4096}" + _END,
        _TOKEN_CHARS,
    ),
    (
        "private",
        "GCP service-account private key",
        r'"private_key"[ \t]*:[ \t]*"(?P<v>[^"]{20,8192})',
        frozenset(),
    ),
    (
        "azure",
        "Azure storage key",
        r"AccountKey=(?P<v>[A-Za-z0-9+/]{20,200}={0,2})",
        _ALNUM,
    ),
    (
        "azure",
        "Azure storage key",
        r"SharedAccessKey=(?P<v>[A-Za-z0-9+/]{20,200}={0,2})",
        _ALNUM,
    ),
)

# Up to 4 words before PRIVATE KEY: RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP, SSH2 ENCRYPTED…
_BLOCK_BEGIN = r"----(?:- ?| )BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)? ?-{4,5}"
_BLOCK_END = r"----(?:- ?| )END "  # the SSH2 form uses four dashes and spaces
_BLOCK_BODY = r"[A-Za-z0-9+/=]{1,200}"  # one line of base64
_BLOCK_HEADER = r"[A-Za-z][A-Za-z0-9-]{0,40}:.{0,300}"  # Proc-Type:, DEK-Info:, Comment:, …
_KEY_MATERIAL = r"[A-Za-z0-9+/]{20}"

# After "://" (the scheme is checked in Python): user, ":", password, "@", a host. The
# password may hold a raw "@"; backtracking to the last one is bounded by {1,256}.
_URL = r"://(?P<u>[^\s:/?#@\[\]\"'<>`]{0,128}):(?P<v>[^\s/?#\"'`]{1,256})@(?=[A-Za-z0-9\[])"
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")

# Matched in the lowered line; the value is then read from the original.
_BEARER = r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|basic|token|bot)[ \t]+"
_BEARER_VALUE = r"[A-Za-z0-9._~+/=-]{8,4096}"

# An assignment is found from the end of its name, just before the separator (searched
# in the lowered line): *_SECRET*, *_TOKEN, *_PASSWORD, *_API_KEY… but not MAX_TOKENS or
# SECRET_ROTATION_DAYS. The start of the name is then found in Python.
_SEPARATOR = r"(?=[\"']?[ \t]*(?::=|=>|=(?!=)|:(?![:/])))"
_KEYWORDS: tuple[tuple[str, str, str, str], ...] = (
    # (family, kind, literal, pattern)
    ("password", "password assignment", "pass", "pass(?:w(?:or)?d|phrase)"),
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
)
# …then this reads an optional closing quote, the separator and a "…", '…' or bare value
# from the original line.
_ASSIGN_REST = (
    r"[\"']?(?P<sp>[ \t]*)(?P<s>:=|=>|=(?!=)|:(?![:/]))[ \t]*"
    r"(?:\"(?P<dq>[^\"\n]{0,512})\"|'(?P<sq>[^'\n]{0,512})'|(?P<b>[^\s\"'`,;&]{1,512}))"
)
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
_WORD = r"[A-Za-z]+"
_WORDS = r"[A-Za-z]+(?: [A-Za-z]+)+"  # "will be replaced": prose, not a passphrase
_COLOUR = r"#[0-9A-Fa-f]{3,8}"  # a theme's Token: "#cccccc"

_ALL_FINDERS = _FINDERS + tuple(
    (family, literal, p + _SEPARATOR) for family, _, literal, p in _KEYWORDS
)
_RANK = {family: rank for rank, (family, _, _) in enumerate(_ALL_FINDERS)}  # rule order
_TOKENS_BY_FAMILY = {
    family: [(kind, p, before) for f, kind, p, before in _TOKEN_RULES if f == family]
    for family, _, _, _ in _TOKEN_RULES
}
_KEYWORDS_BY_FAMILY = {family: (kind, p + _SEPARATOR) for family, kind, _, p in _KEYWORDS}

_compiled: dict[str, re.Pattern[str]] = {}


def _rx(source: str) -> re.Pattern[str]:
    """The compiled pattern, built on first use.

    Importing compiles nothing, and a scan compiles only what its text calls for:
    compiling every pattern costs several milliseconds, while a clean STATE.md needs
    at most a handful.
    """
    pattern = _compiled.get(source)
    if pattern is None:
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
    if len(v) < 6 or _is_placeholder(v):  # nothing worth guarding is that short: on, 1234
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


class _Result:
    def __init__(self) -> None:
        self.hits: list[SecretHit] = []
        self.spans: list[tuple[int, int]] = []  # offsets in the text to replace by REDACTED


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
        # On a small text (a STATE.md, a note) `literal in low` saves compiling patterns;
        # on a big one it would only double the passes over the text.
        small = len(low) <= 65536
        for family, literal, finder in _ALL_FINDERS:
            if small and literal not in low:
                continue
            search = _rx(finder).search
            m = search(low)
            while m is not None:
                if not ends:
                    ends = list(accumulate(map((1).__add__, map(len, low.split("\n")))))
                index = bisect_right(ends, m.start())
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
            ordered = sorted(families, key=_RANK.__getitem__)  # the rules' order
            for family in ordered:
                if family in _TOKENS_BY_FAMILY:
                    self._tokens(line, _TOKENS_BY_FAMILY[family], found)
            if "block" in families:
                skip_to = max(skip_to, self._blocks(line, next_line, found, reported))
            if "url" in families:
                self._urls(line, found)
            if "authorization" in families:
                self._bearer(line, low, found)
            keywords = [_KEYWORDS_BY_FAMILY[f] for f in ordered if f in _KEYWORDS_BY_FAMILY]
            if keywords:
                self._assignments(line, low, keywords, found)
            if found or reported:
                self._record(index, start, line, found, reported)
        self.result.spans.sort()
        return self.result

    def _record(
        self, index: int, start: int, line: str, found: _Found, reported: list[tuple[int, str]]
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

    def _tokens(
        self,
        line: str,
        rules: list[tuple[str, str, frozenset[str]]],
        found: _Found,
    ) -> None:
        for kind, source, before in rules:
            pattern = _rx(source)
            for m in pattern.finditer(line):
                if m.start() > 0 and line[m.start() - 1] in before:
                    continue  # inside a longer word: "task-…" is not "sk-…"
                group = "v" if "v" in pattern.groupindex else 0
                value = m.group(group)
                if kind.startswith("GCP") and not (
                    "PRIVATE KEY" in value or _rx(_KEY_MATERIAL).search(value)
                ):
                    continue
                if not _is_placeholder(value):
                    _claim(found, m.start(group), m.end(group), kind)

    def _blocks(
        self, line: str, next_line: int, found: _Found, reported: list[tuple[int, str]]
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
            body = self._block_body(next_line)
            if body and not any(s < m.end() and m.start() < e for s, e, _ in found):
                reported.append((m.start(), kind))
                self.result.spans.extend((s, e) for s, e in body if self.text[s:e].strip())
                return body[-1][1]
        return 0

    def _block_body(self, pos: int) -> list[tuple[int, int]]:
        """Offsets of the body lines of a key block whose BEGIN line precedes offset `pos`.

        Empty unless the body holds key material; an unterminated block (a pasted key cut
        short) ends at the first line that is neither base64, a header nor blank.
        """
        text = self.text
        body: list[tuple[int, int]] = []
        material = False
        while pos <= len(text):
            newline = text.find("\n", pos)
            end = len(text) if newline < 0 else newline
            if end > pos and text[end - 1] == "\r":
                end -= 1
            stripped = text[pos:end].strip().strip("\"',").replace("\\n", "")
            if _rx(_BLOCK_END).match(stripped):
                break
            if _rx(_BLOCK_BODY).fullmatch(stripped):
                material = material or len(stripped) >= 16
            elif stripped and not _rx(_BLOCK_HEADER).fullmatch(stripped):
                break
            body.append((pos, end))
            if newline < 0:
                break
            pos = newline + 1
        while body and not text[body[-1][0] : body[-1][1]].strip():
            body.pop()
        return body if material else []

    def _urls(self, line: str, found: _Found) -> None:
        for m in _rx(_URL).finditer(line):
            if m.start() == 0 or line[m.start() - 1] not in _SCHEME_CHARS:
                continue
            password = m.group("v")
            # user:user@ (postgres:postgres, guest:guest) is a well-known default login.
            if _is_placeholder(password) or password == m.group("u"):
                continue
            _claim(found, m.start("v"), m.end("v"), "password in URL")

    def _bearer(self, line: str, low: str, found: _Found) -> None:
        for m in _rx(_BEARER).finditer(low):
            value = _rx(_BEARER_VALUE).match(line, m.end())
            if value and not _is_placeholder(value.group()):
                _claim(found, value.start(), value.end(), "authorization header")

    def _assignments(
        self, line: str, low: str, keywords: list[tuple[str, str]], found: _Found
    ) -> None:
        keys = [
            (k.start(), k.end(), kind)
            for kind, keyword in keywords
            for k in _rx(keyword).finditer(low)
        ]
        resume = 0  # a name inside the value just read is part of that value
        for at, key_end, kind in sorted(keys):
            if at < resume:
                continue
            m = _rx(_ASSIGN_REST).match(line, key_end)
            start = _name_start(line, at) if m else -1
            if m is None or start < 0:
                continue
            group = next(g for g in ("dq", "sq", "b") if m.group(g) is not None)
            resume = m.end(group)
            if any(m.start(group) < e and s < resume for s, e, _ in found):
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
            if not literal:
                continue
            lowered = name.lower()
            aws_name = "secret" in lowered and ("aws" in lowered or "access" in lowered)
            if aws_name and _rx(_AWS_SECRET).fullmatch(value.strip()):
                kind = "AWS secret access key"
            _claim(found, m.start(group), m.end(group), kind)


def _name_start(line: str, at: int) -> int:
    """Where the name holding the keyword at `at` starts, or -1 if it is no assignee."""
    start = at
    while start > 0 and line[start - 1] in _NAME_CHARS and at - start < _NAME_MAX:
        start -= 1
    if start > 0 and line[start - 1] in _NAME_CHARS:
        return -1  # longer than any real variable name
    if line[max(0, start - 2) : start] == "${" or line[start - 1 : start] == "$":
        return -1  # ${API_TOKEN:-x}, $TOKEN: a reference, not an assignment
    bare = line[start:at].lstrip("-")
    if len(line[start:at]) - len(bare) > 2 or (bare and not (bare[0].isalpha() or bare[0] == "_")):
        return -1
    return start


def _claim(found: _Found, start: int, end: int, kind: str) -> None:
    """Record a value unless an earlier, more specific rule already took that text."""
    if not any(start < e and s < end for s, e, _ in found):
        found.append((start, end, kind))


def _apply(line: str, spans: list[tuple[int, int]]) -> str:
    for start, end in sorted(spans, reverse=True):
        line = line[:start] + REDACTED + line[end:]
    return line


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
