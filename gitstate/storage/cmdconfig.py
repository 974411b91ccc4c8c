"""Config given on git's command line: `git -c key=value agy-state …`.

git hands `-c` values to a subcommand in the environment, GIT_CONFIG_PARAMETERS (each entry
shell-quoted, `'key'='value'` or the older `'key=value'`, separated by spaces, `'\\''` for a
quote inside) and GIT_CONFIG_COUNT with GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n>. libgit2 reads
neither, so Store.config_value lays these on top of what pygit2 finds: as in git, they win over
every file, GIT_CONFIG_PARAMETERS over GIT_CONFIG_COUNT, a later entry over an earlier one. A
key without `=` is a boolean true. Malformed text is ignored (git itself would have refused it
before running us).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

_TRUE = "true"  # `git -c key` with no value


def canonical(key: str) -> str:
    """`Color.UI` as git compares it: section and name lower case, a subsection as written."""
    first, dot, rest = key.partition(".")
    if not dot:
        return key.lower()
    middle, dot2, name = rest.rpartition(".")
    if not dot2:
        return f"{first.lower()}.{rest.lower()}"
    return f"{first.lower()}.{middle}.{name.lower()}"


def _dequote(text: str, at: int) -> tuple[str, int] | None:
    """One shell-quoted word from `at` ('…' runs joined by \\' or \\!, as git's sq_dequote);
    (word, index after it), None when the text is not quoted so."""
    if at >= len(text) or text[at] != "'":
        return None
    out: list[str] = []
    at += 1
    while True:
        end = text.find("'", at)
        if end < 0:
            return None  # no closing quote
        out.append(text[at:end])
        at = end + 1
        if text[at : at + 1] == "\\" and text[at + 1 : at + 2] in ("'", "!"):
            if text[at + 2 : at + 3] != "'":
                return None
            out.append(text[at + 1])
            at += 3
            continue
        return "".join(out), at


def parse_parameters(text: str) -> Iterator[tuple[str, str]]:
    """(key, value) pairs of a GIT_CONFIG_PARAMETERS value, in order."""
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return
        word = _dequote(text, at)
        if word is None:
            return
        key, at = word
        if text[at : at + 1] == "=":
            value = _dequote(text, at + 1)
            if value is None:
                if at + 1 < len(text) and not text[at + 1].isspace():
                    return
                yield key, _TRUE  # `'key'=` is `-c key`; an empty value is `'key'=''`
                at += 1
                continue
            yield key, value[0]
            at = value[1]
        elif "=" in key:
            name, _, val = key.partition("=")
            yield name, val
        else:
            yield key, _TRUE


def parse_count(env: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(key, value) pairs of GIT_CONFIG_COUNT / GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n>."""
    try:
        count = int(env.get("GIT_CONFIG_COUNT") or "0")
    except ValueError:
        return
    for n in range(max(count, 0)):
        key = env.get(f"GIT_CONFIG_KEY_{n}")
        value = env.get(f"GIT_CONFIG_VALUE_{n}")
        if not key or value is None:
            return
        yield key, value


def overrides(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The command-line config, canonical key -> value (the last one given)."""
    env = os.environ if env is None else env
    found: dict[str, str] = {}
    for key, value in parse_count(env):
        found[canonical(key)] = value
    for key, value in parse_parameters(env.get("GIT_CONFIG_PARAMETERS") or ""):
        found[canonical(key)] = value
    return found


def value(key: str, env: Mapping[str, str] | None = None) -> str | None:
    """The command-line value of `key`, None when none was given."""
    env = os.environ if env is None else env
    if not env.get("GIT_CONFIG_PARAMETERS") and not env.get("GIT_CONFIG_COUNT"):
        return None  # the usual case: nothing to parse
    return overrides(env).get(canonical(key))
