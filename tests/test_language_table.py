"""The languages' message tables (document/language.py) are the one place a message has its
words: every language holds every message code, with the same fields, so a message added for
one language and forgotten in another fails here instead of as a KeyError in a user's run."""

from __future__ import annotations

import string

import pytest

from gitstate.document.language import EN, LANGUAGES, Language


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("lang", list(LANGUAGES.values()), ids=list(LANGUAGES))
def test_every_language_has_every_message_with_the_same_fields(lang: Language) -> None:
    assert set(lang.messages) == set(EN.messages)
    for code, template in EN.messages.items():
        assert _fields(lang.messages[code]) == _fields(template), code


@pytest.mark.parametrize("lang", list(LANGUAGES.values()), ids=list(LANGUAGES))
def test_every_message_formats_in_one_line(lang: Language) -> None:
    for code, template in lang.messages.items():
        text = lang.message(code, **{name: "X" for name in _fields(template)})
        assert text and "\n" not in text, code
