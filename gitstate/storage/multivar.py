"""Multi-valued git config keys (notes.rewriteRef, remote.<name>.fetch): read every value, add
one unless it is there.

The user's other values of such a key always stay; a value is appended to the repository's own
config, never replacing one (docs/sync.md, docs/decisions.md). Single values go through
Store.set_config / Store.config_value; the agent hooks read theirs with gitconfig.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitstate.storage.snapshots import Store


def values(store: Store, key: str) -> list[str]:
    """Every value of `key` across the config files git reads; [] when it is unset."""
    try:
        return [str(v) for v in store.repo.config.get_multivar(key)]
    except KeyError:
        return []


def add(store: Store, key: str, value: str) -> bool:
    """Append `value` to `key` unless some config file already gives it; True when added."""
    if value in values(store, key):
        return False
    store.repo.config.set_multivar(key, "^$", value)
    return True
