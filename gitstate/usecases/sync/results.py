"""What a sync did, as values (shared by the sync and its chain writer, without pygit2)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class ChainResult(NamedTuple):
    ref: str
    # up-to-date, ahead, fast-forward, adopted, merged; skipped (the remote's copy failed a
    # check: `reason`), elsewhere (a linked work tree this repository does not have)
    action: str
    commit: str | None
    conflicts: tuple[str, ...] = ()
    over_limit: tuple[str, ...] = ()
    reason: str = ""

    def as_json(self) -> dict[str, object]:
        return {
            "ref": self.ref,
            "action": self.action,
            "commit": self.commit,
            "conflicts": list(self.conflicts),
            "over_limit": list(self.over_limit),
        }


class Synced(NamedTuple):
    remote: str
    user: str
    chains: list[ChainResult]
    notes: str
    received: list[str]  # shared refs (archives, jobs, tags) created or moved here
    clashes: list[str]  # shared refs that differ on both sides, left alone
    pushed: list[str]
    view: str  # refreshed, removed, kept (dirty), missing, unchanged
    rounds: int
    overwritten: Path | None = None
    # Received refs left unused, with why (docs/sync.md, "Received refs"): one warning each,
    # and sync exits 1.
    skipped: tuple[tuple[str, str], ...] = ()

    def as_json(self) -> dict[str, object]:
        return {
            "remote": self.remote,
            "user": self.user,
            "chains": [c.as_json() for c in self.chains],
            "notes": self.notes,
            "received": self.received,
            "clashes": self.clashes,
            "pushed": self.pushed,
            "view": self.view,
            "rounds": self.rounds,
            "overwritten": str(self.overwritten) if self.overwritten else None,
            "skipped": [{"ref": ref, "reason": why} for ref, why in self.skipped],
        }
