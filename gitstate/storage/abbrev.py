"""Abbreviated object ids as git prints them: `core.abbrev` long (7 by default, `no` the full
id), longer where that many digits would name more than one object in this repository.

libgit2's short id reads `core.abbrev` and extends a prefix until it is unique, as git does; an
id this repository lacks (a brain's commit, a dangling record) gets the configured length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    if found is not None:
        return str(found.short_id)
    return oid[: configured(store.config_value("core.abbrev"))]
