"""The str-only gates that let the scanner skip compiling finders: never a lost hit."""

from __future__ import annotations

import random
import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

from gitstate import secrets


def _class_chars(items: list[tuple[object, object]]) -> set[str] | None:
    """The characters a parsed `[...]` holds, or None for a class this test cannot read."""
    chars: set[str] = set()
    for op, arg in items:
        if op is sre.LITERAL:
            chars.add(chr(arg))  # type: ignore[arg-type]
        elif op is sre.RANGE:
            bounds: tuple[int, int] = arg  # type: ignore[assignment]
            chars.update(chr(c) for c in range(bounds[0], bounds[1] + 1))
        else:
            return None
    return chars


def _required_run(pattern: str) -> tuple[int, str]:
    """The longest run every match of `pattern` holds: a top-level class repeated at least n
    times, and the first set of _RUN_CHARS holding all its characters."""
    best = (0, "")
    for op, arg in _parser.parse(pattern):
        if op is not sre.MAX_REPEAT:
            continue
        least, _, (item, *rest) = arg
        if rest or item[0] is not sre.IN:
            continue
        chars = _class_chars(item[1])
        for name, run_chars in secrets._RUN_CHARS.items():
            if chars is not None and chars <= run_chars:
                best = max(best, (least, name))
                break
    return best


def test_the_long_run_table_is_what_the_patterns_say() -> None:
    words_finders = [f for fam, _, f in secrets._ALL_FINDERS if fam in secrets._IN_WORDS]
    derived = {f: n for f in words_finders if (n := _required_run(f))[0] >= secrets._WORD_MIN}
    assert derived == secrets._LONG_RUNS
    # The four whose literal is in nearly every long word of a STATE.md are among them.
    assert {":[a-z0-9_-]{35}", r"s\.[a-z0-9]{24}"} <= derived.keys()


def _sample(items: object, chooser: random.Random) -> str:
    """One random string the parsed pattern matches (the constructs the finders use)."""
    out = []
    for op, arg in items:  # type: ignore[attr-defined]
        if op is sre.LITERAL:
            out.append(chr(arg))
        elif op is sre.IN:
            out.append(chooser.choice(sorted(_class_chars(arg) or {"a"})))
        elif op is sre.MAX_REPEAT:
            least, most, sub = arg
            count = chooser.randint(least, min(most, least + 3))
            out.extend(_sample(sub, chooser) for _ in range(count))
        elif op is sre.SUBPATTERN:
            out.append(_sample(arg[-1], chooser))
        elif op is sre.BRANCH:
            out.append(_sample(chooser.choice(arg[1]), chooser))
        else:
            raise AssertionError(f"no sampler for {op}")
    return "".join(out)


def test_longest_run_is_never_short_where_a_gated_finder_matches() -> None:
    breaks = [*".:~ \n;,é", "İ", "mii", "aiza", "s.", "::", "x" * 20]
    chooser = random.Random(13)
    matched = 0
    for finder, (need, chars) in secrets._LONG_RUNS.items():
        search = re.compile(finder).search
        parsed = _parser.parse(finder)
        for _ in range(300):
            sample = list(_sample(parsed, chooser))
            for _ in range(chooser.randint(0, 3)):  # break or stretch it somewhere
                sample.insert(chooser.randint(0, len(sample)), chooser.choice(breaks))
            noise = "".join(chooser.choice([*breaks, "ab", "9"]) for _ in range(10))
            text = noise[:5] + "".join(sample) + noise[5:]
            low = secrets._lower(text)
            words = " ".join(w for w in low.split() if len(w) >= secrets._WORD_MIN)
            if search(low) is not None:
                matched += 1
                assert secrets._longest_run(words, chars) >= need, (finder, text)
    assert matched > 1000  # the sample reaches the patterns


def test_a_state_with_long_paths_compiles_no_long_token_finder() -> None:
    text = (
        "## Done\n- [x] log -n N | verified: tests/test_history.py::test_log_limit\n"
        "- see gitstate/usecases/state/history.py:120 and docs/architecture.md.\n"
        "- measured median 1.35x; mission accomplished\n"
    )
    secrets._compiled.clear()
    assert secrets.redact(text) == (text, [])
    assert not set(secrets._compiled) & secrets._LONG_RUNS.keys()


def test_a_long_token_behind_a_common_literal_is_still_found() -> None:
    telegram = "bot token 1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw4 here\n"
    vault = "VAULT s.Qm9vYmFyYmF6cXV4cXV1eHh4 end\n"
    for text, kind in ((telegram, "Telegram"), (vault, "Vault")):
        hits = secrets.scan(text)
        assert [h.kind for h in hits if kind.lower() in h.kind.lower()], (text, hits)
