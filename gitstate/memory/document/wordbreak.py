"""Where Chinese words begin and end: telling a query word found inside a sentence from one
that only spans the end of a word and the start of the next (限流 in 权限|流程). Pure.

The index keeps one token per CJK character, so the phrase 限 流 matches 权限流程 too; the search
then asks here about each hit's occurrences. A sentence's run of ideographs is cut the way
jieba cuts it: the segmentation whose words are most probable together (log-probabilities
from the word list in cjk_words.py; a character no word covers stands alone, as rare as the
rarest word). The query word itself counts as a word of that rarity, so a name or a word the
list lacks is found wherever nothing likelier cuts through it: an occurrence is a false hit
only when likelier words straddle it (权限 and 流程 are far more common than 限流 is rare).
"""

from __future__ import annotations

WINDOW = 12  # characters of context each side: enough for the words around an occurrence
LONGEST = 4  # the list's longest words
RARE = 1.585  # log2(3): jieba's count for a word it barely knows
NARROW = 2048  # bytes of the word list below which a lookup's binary search ends in one find

# The ideographs (as search_text's CJK class, without kana and hangul), as ranges compared in
# Python: a regex class with the astral range costs about 3 ms to compile, at every start.
HAN_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0xF900, 0xFAFF), (0x20000, 0x3134F))

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mmap import mmap


def is_han(char: str) -> bool:
    code = ord(char)
    return any(first <= code <= last for first, last in HAN_RANGES)


class Words:
    """cjk_words.py's list: TOTAL_LOG2 and WORDS as UTF-8 bytes, `data[low:high]` (bytes, or a
    map of the module's source file that holds the same bytes: memory/storage/word_list.py).
    A character's line is found by a binary search, decoded once, and searched as it is."""

    __slots__ = ("_lines", "data", "high", "low", "total")

    def __init__(self, data: bytes | mmap, low: int, high: int, total: float) -> None:
        self.data = data
        self.low = low  # a newline: WORDS starts with one, every line ends with one
        self.high = high
        self.total = total
        self._lines: dict[str, str] = {}

    def log2_count(self, first: str, rest: str) -> int | None:
        """The word `first + rest`'s letter less A (floor(log2(count))), or None if unlisted.

        `rest` (ideographs, never a letter A-Z) is a word of the line exactly where it sits
        between two letters (or after the tab): a find in the line, with no dict of its
        hundreds of words built (parsing the long lines of common characters cost a search
        more than the rest of its judging)."""
        line = self._lines.get(first)
        if line is None:
            line = self._lines[first] = self.line(first)
        at = line.find(rest)
        while at >= 0:
            end = at + len(rest)
            if (at == 0 or "A" <= line[at - 1] <= "Z") and "A" <= line[end : end + 1] <= "Z":
                return ord(line[end]) - 65
            at = line.find(rest, at + 1)
        return None

    def line(self, first: str) -> str:
        """The line for the character `first`, past its tab; '' when no word starts with it.

        The lines are sorted by that character, and UTF-8 bytes sort as code points do: a
        binary search over byte offsets (each probe reads the line that starts after it)
        narrows the list to NARROW bytes for one find. A find over the whole 0.7 MB would cost
        up to 1 ms a character, and a search judges a dozen or more."""
        data = self.data
        key = b"\n" + first.encode("utf-8") + b"\t"
        # The newline before `first`'s line, when there is one, is at an offset in [low, high).
        low, high = self.low, self.high
        while high - low > NARROW:
            mid = (low + high) // 2
            newline = data.find(b"\n", mid, high)
            tab = data.find(b"\t", newline + 1, self.high) if newline >= 0 else -1
            if tab < 0:  # no line starts in [mid, high)
                high = mid
                continue
            probe = data[newline : tab + 1]
            if probe == key:
                low, high = newline, newline + 1
                break
            if probe < key:  # the same order as the characters: both end in a tab
                low = newline + 1
            else:
                high = newline
        at = data.find(key, low, min(high + len(key), self.high))
        if at < 0:
            return ""
        start = at + len(key)
        return data[start : data.find(b"\n", start, self.high)].decode("utf-8")


_imported: list[Words] = []


def imported() -> Words:
    """The list as its module holds it: importing it decodes the 0.7 MB string (about 1 ms),
    which memory/storage/word_list.py's map of the source avoids."""
    if not _imported:
        from gitstate.memory.document.cjk_words import TOTAL_LOG2, WORDS

        data = WORDS.encode("utf-8")
        _imported.append(Words(data, 0, len(data), TOTAL_LOG2))
    return _imported[0]


def cuts(run: str, word: str, words: Words | None = None) -> list[int]:
    """The offsets inside `run` (ideographs only) where its most probable segmentation puts a
    boundary, counting `word` as a word too (0 and len(run) included)."""
    words = words or imported()
    total = words.total
    single = RARE - total
    longest = max(LONGEST, len(word))
    size = len(run)
    best = [0.0] * (size + 1)
    step = [1] * (size + 1)
    for i in range(size - 1, -1, -1):
        score, length = single + best[i + 1], 1
        for n in range(2, min(longest, size - i) + 1):
            piece = run[i : i + n]
            log2 = words.log2_count(run[i], piece[1:])
            value = None if log2 is None else log2 - total
            if piece == word and (value is None or value < single):
                value = single
            if value is not None and value + best[i + n] > score:
                score, length = value + best[i + n], n
        best[i], step[i] = score, length
    found, at = [0], 0
    while at < size:
        at += step[at]
        found.append(at)
    return found


def across(text: str, start: int, end: int, words: Words | None = None) -> bool:
    """Whether text[start:end] (ideographs) is cut through by likelier words around it."""
    low = start
    while low > max(0, start - WINDOW) and is_han(text[low - 1]):
        low -= 1
    high = end
    while high < min(len(text), end + WINDOW) and is_han(text[high]):
        high += 1
    word = text[start:end]
    return any(start - low < cut < end - low for cut in cuts(text[low:high], word, words))


def runs(word: str) -> list[str]:
    """The runs of two or more ideographs in a query word: what can straddle a boundary."""
    found: list[str] = []
    run: list[str] = []
    for char in (*word, ""):  # "" ends the last run
        if char and is_han(char):
            run.append(char)
            continue
        if len(run) >= 2:
            found.append("".join(run))
        run = []
    return found


def found_as_word(text: str, run: str, words: Words | None = None) -> bool:
    """Whether `run` occurs in `text` at least once not straddling words (True as well when it
    does not occur literally: then the index matched it some other way, and it stands)."""
    at = text.find(run)
    if at < 0:
        return True
    while at >= 0:
        if not across(text, at, at + len(run), words):
            return True
        at = text.find(run, at + 1)
    return False
