"""Control characters in stored text: which ones, where they are, and how to print them.

A terminal obeys control characters: `rm -rf /` followed by backspaces and `safe cmd` shows
as "safe cmd", ESC starts colour and cursor sequences, OSC can set the window title or a
hyperlink, a bidi override reorders what is shown (Trojan Source). So documents and records
refuse them on input (`find`) and every human printer escapes them on output (`escape`);
docs/format.md lists them. Pure: no I/O; standard library only, no `typing` at run time (the
agent hooks validate STATE.md).

Controls: C0 (U+0000–U+001F) except tab and newline, and CR only as part of CRLF; DEL
(U+007F); C1 (U+0080–U+009F); the bidi embeddings, overrides and isolates U+202A–U+202E and
U+2066–U+2069. Other format characters (zero-width joiners, the LRM/RLM marks) are text.
"""

from __future__ import annotations

# Type checkers take this as typing.TYPE_CHECKING (True). At run time `re` is imported only when
# a text holds a control: a text without one is answered by a set test, so printing a search
# result or a clean document loads no `re` (docs/memory.md "Start-up, and which baseline";
# docs/hooks.md "Start-up cost").
TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Match, Pattern

# The controls, as code point ranges; a CR that starts a CRLF is a line end, not a control.
_RANGES = (
    (0x00, 0x08),
    (0x0B, 0x0C),
    (0x0E, 0x1F),
    (0x7F, 0x9F),
    (0x202A, 0x202E),
    (0x2066, 0x2069),
)
# For output: the same, plus the lone surrogates that stand for undecodable bytes.
_SURROGATES = ((0xDC80, 0xDCFF),)
# What JSON text may still hold raw after json.dumps (it escapes C0): DEL, C1, the bidi controls.
_JSON_RAW = ((0x7F, 0x9F), (0x202A, 0x202E), (0x2066, 0x2069))


def _chars(ranges: tuple[tuple[int, int], ...]) -> frozenset[str]:
    return frozenset(chr(code) for low, high in ranges for code in range(low, high + 1))


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{chr(low)}-{chr(high)}" for low, high in ranges)


_CONTROL_CHARS = _chars(_RANGES)
_PRINT_CHARS = _CONTROL_CHARS | _chars(_SURROGATES)
_JSON_RAW_CHARS = _chars(_JSON_RAW)
_compiled: dict[str, Pattern[str]] = {}


def _pattern(source: str) -> Pattern[str]:
    if source not in _compiled:
        import re

        _compiled[source] = re.compile(source)
    return _compiled[source]


def _control_re() -> Pattern[str]:
    return _pattern(f"\r(?!\n)|[{_class(_RANGES)}]")


def _print_re() -> Pattern[str]:
    return _pattern(f"\r(?!\n)|[{_class(_RANGES + _SURROGATES)}]")


def _may_hold(text: str, chars: frozenset[str]) -> bool:
    """Whether `text` holds one of `chars` or a lone CR (one that starts no CRLF): each CRLF
    holds one CR, so there is a lone one when there are more CRs than CRLFs."""
    return not chars.isdisjoint(text) or text.count("\r") > text.count("\r\n")


_NAMES = {
    0x00: "NUL",
    0x07: "BEL",
    0x08: "backspace",
    0x0B: "vertical tab",
    0x0C: "form feed",
    0x0D: "carriage return",
    0x1B: "ESC",
    0x7F: "DEL",
    0x9B: "CSI",
    0x9D: "OSC",
    0x202A: "LRE",
    0x202B: "RLE",
    0x202C: "PDF",
    0x202D: "LRO",
    0x202E: "RLO",
    0x2066: "LRI",
    0x2067: "RLI",
    0x2068: "FSI",
    0x2069: "PDI",
}


def name(char: str) -> str:
    """`U+001B (ESC)` for the message that refuses it."""
    code = ord(char)
    label = _NAMES.get(code)
    return f"U+{code:04X} ({label})" if label else f"U+{code:04X}"


def first(text: str) -> str | None:
    """The first control character in `text`, or None."""
    if not _may_hold(text, _CONTROL_CHARS):
        return None
    match = _control_re().search(text)
    return match.group(0)[0] if match else None


def find(text: str) -> list[tuple[int, str]]:
    """(line number, first control on that line) for every line that has one; lines are
    counted as STATE.md counts them (split on LF, CRLF allowed)."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        char = first(line + "\n" if line.endswith("\r") else line)
        if char is not None:
            found.append((number, char))
    return found


def _visible(match: Match[str]) -> str:
    code = ord(match.group(0)[0])
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code == 0x0D:
        return "\\r"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def escape(text: str) -> str:
    """`text` with every control shown as `\\x1b`, `\\r`, `\\u202e`… (tab, newline and CRLF
    stay); text without controls comes back as it is."""
    if not _may_hold(text, _PRINT_CHARS):
        return text
    pattern = _print_re()
    if pattern.search(text) is None:
        return text
    return pattern.sub(_visible, text)


def escape_json(text: str) -> str:
    """JSON text with the controls json.dumps leaves raw (DEL, C1, bidi: it escapes only C0)
    written as `\\u` escapes: the same JSON value, safe to print. They can only be inside
    strings, where `\\uXXXX` means the same character."""
    if _JSON_RAW_CHARS.isdisjoint(text):
        return text
    return _pattern(f"[{_class(_JSON_RAW)}]").sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def escape_bytes(data: bytes) -> bytes:
    """Bytes for a terminal: unchanged when they are UTF-8 text without controls (so `show`
    stays byte for byte for every valid document); otherwise controls and undecodable bytes
    escaped."""
    text = data.decode("utf-8", "surrogateescape")
    if not _may_hold(text, _PRINT_CHARS) or _print_re().search(text) is None:
        return data
    return escape(text).encode("utf-8")
