"""Abbreviated object ids as git prints them: `core.abbrev` long (7 by default, `no` the full
id), longer where that many digits would name more than one object in this repository.

libgit2's short id reads `core.abbrev` and extends a prefix until it is unique, as git does; an
id this repository lacks (a brain's commit, a dangling record) gets the configured length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitstate.storage import cmdconfig

if TYPE_CHECKING:
    from gitstate.storage.snapshots import Store

DEFAULT = 7  # git's fallback length (`core.abbrev` unset or `auto`)
FULL = 40
MINIMUM = 4  # git refuses shorter


def configured(raw: str | None) -> int:
    """The length `core.abbrev` asks for: an integer (at least 4), `no`/`false` for the full id,
    anything else (unset, `auto`, junk) git's default."""
    if raw is None:
        return DEFAULT
    value = raw.strip().lower()
    if value in ("no", "false", "off", "0"):
        return FULL
    try:
        return min(max(int(value), MINIMUM), FULL)
    except ValueError:
        return DEFAULT


def short_id(store: Store, oid: str) -> str:
    """`oid` abbreviated for this repository (see the module's note)."""
    try:
        found = store.repo.get(oid)
    except ValueError:  # not an object id at all
        found = None
    if found is None:
        return oid[: configured(store.config_value("core.abbrev"))]
    if cmdconfig.value("core.abbrev") is None:
        return str(found.short_id)
    # libgit2's short id reads the files only: a `git -c core.abbrev` length is extended here.
    length = configured(store.config_value("core.abbrev"))
    while length < FULL and _ambiguous(store, oid[:length]):
        length += 1
    return oid[:length]


def _ambiguous(store: Store, prefix: str) -> bool:
    try:
        store.repo.get(prefix)
    except ValueError:  # libgit2: ambiguous short id
        return True
    return False
