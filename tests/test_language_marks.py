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
