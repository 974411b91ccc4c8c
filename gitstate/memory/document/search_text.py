"""Text for the full-text index: chunks of a file, CJK segmentation, FTS5 queries. Pure.

SQLite's unicode61 tokenizer takes a run of CJK characters as one token, so a Chinese word inside
a sentence is never found; the trigram tokenizer misses two-character words. So CJK characters
(and kana, hangul) are segmented one per token, at index time and at query time alike, and every
query word becomes an FTS5 phrase: the word 連線 is the phrase "連 線", which matches those two
characters next to each other anywhere. The separator is an invisible control character that
unicode61 splits on, so a snippet becomes the original text again by deleting it. Characters
next to each other are not always a word (限流 in 权限|流程): `word_filter` drops such hits
(document/wordbreak.py; docs/memory.md, "Word boundaries").
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from re import Pattern

    from gitstate.memory.document.wordbreak import Words

CHUNK_SIZE = 1600  # characters (about 400 tokens)
CHUNK_OVERLAP = 320
SEPARATOR = "\x1f"  # a separator for unicode61 (category Cc); never part of memory text
HIGHLIGHT = ("«", "»")

_CJK = (
    "\u2e80-\u2fdf"  # radicals
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3100-\u312f\u3190-\u31bf\u31f0-\u31ff"  # bopomofo, kanbun, katakana extensions
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # ideographs
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"  # hangul
)
_CJK_ASTRAL = "\U00020000-\U0003134f"  # ideograph extensions B-H
# A class that also holds a character above U+FFFF is compiled to ranges, not to a 64K-entry
# map built in Python (12 ms for the CJK class without it, 8 for the wide one, whose U+10FFFF is
# a noncharacter that never occurs: translate leaves it alone). Even so the CJK class costs about
# 2 ms to compile: more than a query needs, so both are compiled on first use by a long text (an
# indexed file), and a short one (a query) takes a loop over its characters instead
# (docs/memory.md, "Search").
_CJK_CLASS = f"([{_CJK}{_CJK_ASTRAL}])"
_WIDE_CLASS = "[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\x1f\U0010ffff]"
SHORT = 256  # characters: below this the loops beat compiling the classes
# The CJK class as (first, last) code points, read off the class text (three characters a range).
_SPANS = _CJK + _CJK_ASTRAL
_CJK_RANGES = tuple((ord(_SPANS[at]), ord(_SPANS[at + 2])) for at in range(0, len(_SPANS), 3))
_patterns: dict[str, Pattern[str]] = {}


def _pattern(source: str) -> Pattern[str]:
    found = _patterns.get(source)
    if found is None:
        # `re` itself is imported here, on the first long text: a query (`memory search`)
        # takes the loops and never loads it, about a third of what the search costs.
        import re

        found = _patterns[source] = re.compile(source)
    return found


def is_cjk(char: str) -> bool:
    """One character of the CJK class (what segment() makes a token of its own)."""
    code = ord(char)
    return any(first <= code <= last for first, last in _CJK_RANGES)


# Full-width letters and digits read as ASCII ones (ＡＰＩ is API); full-width punctuation stays,
# so snippets keep the text's own ，。：— the tokenizer splits on it either way.
_WIDE = {
    code: code - 0xFEE0
    for code in (*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B))
}
_WIDE[ord(SEPARATOR)] = ord(" ")


def composed(text: str) -> str:
    """The text in NFC (what normalize() does besides its one-for-one character mapping)."""
    if text.isascii():  # ASCII is NFC: an English query loads no unicodedata
        return text
    import unicodedata

    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def normalize(text: str) -> str:
    """Full-width letters and digits as ASCII, composed (NFC) accents, no separator inside."""
    text = composed(text)
    if len(text) < SHORT:
        return text.translate(_WIDE)
    return text.translate(_WIDE) if _pattern(_WIDE_CLASS).search(text) else text


def segment(text: str) -> str:
    """The text as indexed: each CJK character a token of its own.

    Splitting on the characters and joining with the separator puts one between any two
    neighbours (two between adjacent CJK characters, which the tokenizer reads as one): done in
    C, about ten times faster than a substitution that expands a template per character."""
    text = normalize(text)
    if text.isascii():
        return text
    if len(text) < SHORT:
        return "".join(SEPARATOR + char + SEPARATOR if is_cjk(char) else char for char in text)
    return SEPARATOR.join(_pattern(_CJK_CLASS).split(text))


def unsegment(text: str) -> str:
    return text.replace(SEPARATOR, "")


def fts_query(query: str) -> str:
    """An FTS5 MATCH expression: every word a phrase (segmented as the index is), all required;
    a word ending in `*` matches as a prefix. Empty when the query has no letter or digit."""
    phrases = []
    for word in query.split():
        prefix = word.endswith("*")
        word = word.rstrip("*")
        # A letter or digit: what `[^\W_]` matches, without compiling it at every start.
        if not any(char.isalnum() for char in normalize(word)):
            continue
        phrase = '"' + segment(word).replace('"', '""') + '"'
        phrases.append(phrase + (" *" if prefix else ""))
    return " ".join(phrases)


def word_filter(
    query: str, lexicon: Callable[[], Words] | None = None
) -> Callable[[str], bool] | None:
    """What keeps a matching chunk: every run of ideographs in the query's words found there
    as a word, not across two (document/wordbreak.py, with the word list `lexicon()` gives, by
    default the imported one); None when the query has no ideograph (a prefix word is left as
    typed)."""
    if not any(char >= "\u3400" for char in query):
        return None  # no ideograph: nothing to check
    words = [normalize(word) for word in query.split() if not word.endswith("*")]
    judged: list[list[str]] = []  # the query's runs of ideographs, found at the first hit

    def keep(content: str) -> bool:
        # Imported at the first hit: a search that finds nothing never loads the word list.
        from gitstate.memory.document import wordbreak

        if not judged:
            judged.append([run for word in words for run in wordbreak.runs(word)])
        if not judged[0]:
            return True
        # Only runs of ideographs are judged, and normalize()'s character mapping (full-width
        # letters and digits, the separator) never yields or moves one: NFC alone gives the same
        # answers, without the full-width class a long text would compile.
        text = composed(content)
        listed = lexicon() if lexicon is not None else None
        return all(wordbreak.found_as_word(text, run, listed) for run in judged[0])

    return keep


def chunks(text: str, size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """A file cut into pieces of about `size` characters, each overlapping the one before by
    about `overlap`; cuts land on a blank line, else a line end, where one is near."""
    text = text.strip()
    if len(text) <= size:
        return [text] if text else []
    found: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            low = start + size // 2
            cut = text.rfind("\n\n", low, end)
            if cut < 0:
                cut = text.rfind("\n", low, end)
            if cut > 0:
                end = cut
        piece = text[start:end].strip()
        if piece:
            found.append(piece)
        if end >= len(text):
            break
        # The next piece starts `overlap` back, at the start of a line when there is one.
        back = max(end - overlap, start + 1)
        newline = text.find("\n", back, end)
        start = newline + 1 if newline >= 0 else back
    return found
