"""The word list of document/wordbreak.py, read from its module's source file instead of imported.

document/cjk_words.py holds the list as one string literal; importing it decodes all 0.7 MB
(about 1 ms, as much as the rest of a search) where a search that judges a hit reads a few
dozen of its lines. So the file is mapped read-only and the lines are found where they lie: the
literal's bytes are WORDS's UTF-8, byte for byte (tools/cjk_words.py writes no escape and no
CR; tests/test_memory_search_words.py checks the two against each other). Anything unexpected
(no source file, as in a zip or byte-code-only install; not a regular file; no literal where
it belongs) and the module is imported as before. Standard library only; nothing is executed.
"""

from __future__ import annotations

import os
import stat

from gitstate.memory.document import wordbreak

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap

SOURCE = "cjk_words.py"  # beside wordbreak.py
OPEN = b'\nWORDS = """\n'
CLOSE = b'"""\n'
TOTAL = b"\nTOTAL_LOG2 = "
HEAD = 16 * 1024  # the docstring, the licence and TOTAL_LOG2 end well before this
LIMIT = 16 * 1024 * 1024  # bytes: a file past this is not the word list

_found: list[wordbreak.Words] = []


def words() -> wordbreak.Words:
    """The list, mapped once per process (imported when it cannot be)."""
    if not _found:
        _found.append(mapped(os.path.join(os.path.dirname(wordbreak.__file__), SOURCE)))
    return _found[0]


def mapped(path: str) -> wordbreak.Words:
    """The list in the source file at `path`, or the imported one."""
    import mmap  # a C module of its own: loaded only at a search's first hit to judge

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return wordbreak.imported()
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not 0 < info.st_size <= LIMIT:
            return wordbreak.imported()
        data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return wordbreak.imported()
    finally:
        os.close(fd)
    total = _total(data)
    start = data.find(OPEN, 0, HEAD)
    end = len(data) - len(CLOSE)
    if total is None or start < 0 or data[end:] != CLOSE or end <= start + len(OPEN):
        data.close()
        return wordbreak.imported()
    # WORDS is the literal's text: the newline after its opening quotes up to its closing ones.
    return wordbreak.Words(data, start + len(OPEN) - 1, end, total)


def _total(data: mmap.mmap) -> float | None:
    at = data.find(TOTAL, 0, HEAD)
    if at < 0:
        return None
    at += len(TOTAL)
    end = data.find(b" ", at, at + 32)
    try:
        return float(data[at:end].decode("ascii")) if end > at else None
    except (UnicodeDecodeError, ValueError):
        return None
