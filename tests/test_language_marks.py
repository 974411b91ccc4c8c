"""The agent hook reads a state's language as the document model does (hooks/frame.py)."""

from __future__ import annotations

import pytest

from gitstate.document import language
from gitstate.document.model import outline, render, template
from gitstate.hooks import frame


def samples() -> list[str]:
    found = []
    for lang in (language.EN, language.ZH_TW, language.ZH_CN):
        text = render(template(lang, "2026-01-02 03:04"))
        title, rest = text.split("\n", 1)
        found += [text, rest, "\ufeff" + text, text.replace("\n", "\r\n"), rest + title + "\n"]
    # zh-TW and zh-CN share headings; a mix; no language at all.
    found += ["## 已完成\n## 下一步\n", "## Goal\n## 目標\n## 目标\n", "# notes\n## misc\n", ""]
    return found


@pytest.mark.parametrize("text", samples())
def test_language_of_equals_the_models_reading(text: str) -> None:
    # As outline() cuts it, a tie going to English (the hook's reading of a text of no language).
    cut = outline(text)
    title = cut.title.text if cut.title else None
    expected = language.detect(title, [s.name for s in cut.sections], prefer=language.EN).code
    assert frame.language_of(text) == expected


def test_the_marks_are_the_languages_own() -> None:
    for lang in language.LANGUAGES.values():
        assert frame.language_of(render(template(lang, "2026-01-02 03:04"))) == lang.code
    # zh-TW and zh-CN tie on shared headings: the peer's format wins; no language reads as en.
    assert language.detect(None, ["已完成", "下一步"]).code == "zh-TW"
    assert frame.language_of("## 已完成\n## 下一步\n") == "zh-TW"
    assert frame.language_of("## 已完成\n## 下一步\n## 目标\n") == "zh-CN"
    assert frame.language_of("# notes\n## misc\n") == "en"


def _reads_as_marker_in_full(line: str) -> bool:
    """frame._reads_as_marker without its ASCII shortcut: the rule as docs/hooks.md states it."""
    import unicodedata

    core = "".join(ch for ch in unicodedata.normalize("NFKC", line).casefold() if ch.isalnum())
    return core.startswith(("beginagystate", "endagystate"))


def test_the_marker_shortcut_never_misses_a_marker() -> None:
    import random

    alphabet = [*"beginagystate BEGINAGYSTATE-_=#*>. \t\r\x0bx9", "Ｂ", "ｅ", "İ", "é", "\u00a0"]
    chooser = random.Random(13)
    markers = 0
    for _ in range(20000):
        pieces = [chooser.choice(alphabet) for _ in range(chooser.randint(0, 6))]
        core = chooser.choice(["begin agy state", "END agy-state", "b e g i n agystate", ""])
        line = "".join(pieces[:3]) + core + "".join(pieces[3:])
        expected = _reads_as_marker_in_full(line)
        markers += expected
        assert frame._reads_as_marker(line) == expected, line
    assert markers > 2000  # the sample holds markers
    assert (
        frame.neutralise("- === BEGIN agy-state notes ===\n")
        == "\\- === BEGIN agy-state notes ===\n"
    )
