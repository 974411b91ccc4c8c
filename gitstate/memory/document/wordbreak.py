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

import re

WINDOW = 12  # characters of context each side: enough for the words around an occurrence
LONGEST = 4  # the list's longest words
RARE = 1.585  # log2(3): jieba's count for a word it barely knows

HAN = "\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0003134f"  # (see search_text._CJK_RE)
_HAN_RE = re.compile(f"[{HAN}]")
_RUN_RE = re.compile(f"[{HAN}]{{2,}}")
_ENTRY_RE = re.compile("([^A-Z]+)([A-Z])")

_lines: dict[str, dict[str, int]] = {}  # first character -> {the other characters: log2 count}


def _entries(first: str) -> dict[str, int]:
    found = _lines.get(first)
    if found is None:
        from gitstate.memory.document.cjk_words import WORDS  # 0.7 MB: only when asked

        at = WORDS.find(f"\n{first}\t")
        found = {}
        if at >= 0:
            start = at + len(first) + 2
            line = WORDS[start : WORDS.find("\n", start)]
            found = {rest: ord(letter) - 65 for rest, letter in _ENTRY_RE.findall(line)}
        _lines[first] = found
    return found


def _total() -> float:
    from gitstate.memory.document.cjk_words import TOTAL_LOG2

    return TOTAL_LOG2


def cuts(run: str, word: str) -> list[int]:
    """The offsets inside `run` (ideographs only) where its most probable segmentation puts a
    boundary, counting `word` as a word too (0 and len(run) included)."""
    total = _total()
    single = RARE - total
    longest = max(LONGEST, len(word))
    size = len(run)
    best = [0.0] * (size + 1)
    step = [1] * (size + 1)
    for i in range(size - 1, -1, -1):
        score, length = single + best[i + 1], 1
        entries = _entries(run[i])
        for n in range(2, min(longest, size - i) + 1):
            piece = run[i : i + n]
            log2 = entries.get(piece[1:])
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


def across(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] (ideographs) is cut through by likelier words around it."""
    low = start
    while low > max(0, start - WINDOW) and _HAN_RE.match(text, low - 1):
        low -= 1
    high = end
    while high < min(len(text), end + WINDOW) and _HAN_RE.match(text, high):
        high += 1
    word = text[start:end]
    return any(start - low < cut < end - low for cut in cuts(text[low:high], word))


def runs(word: str) -> list[str]:
    """The runs of two or more ideographs in a query word: what can straddle a boundary."""
    return _RUN_RE.findall(word)


def found_as_word(text: str, run: str) -> bool:
    """Whether `run` occurs in `text` at least once not straddling words (True as well when it
    does not occur literally: then the index matched it some other way, and it stands)."""
    at = text.find(run)
    if at < 0:
        return True
    while at >= 0:
        if not across(text, at, at + len(run)):
            return True
        at = text.find(run, at + 1)
    return False
