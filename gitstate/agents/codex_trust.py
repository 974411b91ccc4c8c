"""Codex's hook trust, as install writes it and doctor reads it (docs/agents.md, "Codex").

Codex runs a non-managed hook only once it is trusted: the user's config.toml holds, per hook,
`[hooks.state."<hooks file>:<event in snake case>:<group index>:<handler index>"]` with
`trusted_hash = "sha256:<hex>"`, the hash of the handler as Codex normalises it (below). The
entry counts only in the user's config.toml (`$CODEX_HOME/config.toml`), also for a project's
`.codex/hooks.json`, and a changed command, matcher or timeout needs trust again. Verified
against codex-cli 0.171.0 (its `app-server` `hooks/list` reported `trustStatus: "trusted"` for
entries written this way; tests/test_codex_trust_golden.py pins `handler_hash` to the hashes
it reported, a non-ASCII command and a statusMessage among them); the formula is not documented,
so doctor says how to grant trust by hand when the hash does not match.

A project's own config layers (`.codex/hooks.json` among them) load only in a trusted project:
`[projects."<abs path>"] trust_level = "trusted"` in the same file. That trusts everything the
project's `.codex/` holds, not just our hooks: install never writes it, doctor says how.

The edits go through toml_table.py (text-level, byte-identical removal). Not on the hook path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from gitstate.agents import plugin, settings_file, toml_table
from gitstate.agents.settings_file import Ledger
from gitstate.errors import Failure
from gitstate.storage import view

DEFAULT_TIMEOUT = 600  # seconds, when a handler names none (Codex's hooks/list shows 600)
# Optional handler fields that enter the hash under their JSON name when set.
OPTIONAL = ("statusMessage",)


class Entry(NamedTuple):
    key: str  # "<hooks file>:<event>:<group>:<handler>"
    hash: str  # "sha256:<hex>"


def snake(event: str) -> str:
    """`SessionStart` -> `session_start`, as the trust key and the hash name events."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def handler_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """The hash Codex keeps for a trusted handler: sha256 of the sorted, compact JSON of the
    normalised group (UTF-8 as it is, not ASCII escapes)."""
    normal: dict[str, Any] = {
        "type": handler.get("type", "command"),
        "command": handler.get("command"),
        "timeout": handler.get("timeout", DEFAULT_TIMEOUT),
        "async": handler.get("async", False),
    }
    normal.update({name: handler[name] for name in OPTIONAL if name in handler})
    group: dict[str, Any] = {"event_name": snake(event), "hooks": [normal]}
    if matcher is not None:
        group["matcher"] = matcher
    text = json.dumps(group, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def ours(hooks_file: Path, data: dict[str, Any] | None) -> list[Entry]:
    """The trust entry of every handler of ours in a hooks file's contents."""
    return list(_ours(hooks_file, data or {}))


def _ours(hooks_file: Path, data: dict[str, Any]) -> Iterator[Entry]:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            matcher = group.get("matcher") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if plugin.is_ours(handler):
                    key = f"{hooks_file}:{snake(event)}:{g}:{h}"
                    yield Entry(key, handler_hash(event, matcher, handler))


def _table(entry: Entry) -> toml_table.Key:
    return ("hooks", "state", entry.key)


ATTEMPTS = 3  # edits redone when config.toml changed under us before giving up


class Changed(Failure):
    """config.toml kept changing between our read and our replace (Codex writing it)."""


def _target(config: Path) -> Path:
    # A symlinked config.toml (a dotfiles repository) is edited where it points: replacing the
    # link with a plain file would cut the user's config from its source. realpath is bounded
    # (a link loop ends in a path that does not resolve further, then reads as missing).
    return Path(os.path.realpath(config)) if config.is_symlink() else config


def _read_bytes(config: Path, target: Path) -> bytes | None:
    """The target's bytes (None: none there); a regular file only, bounded, read non-blocking."""
    try:
        found = view.read_regular(target, settings_file.MAX_BYTES + 1)
    except view.NotRegular as exc:
        why = exc.what.removeprefix("unreadable: ")
        raise toml_table.Unparsable(f"cannot read {config}: it is {why}") from None
    if found is not None and len(found) > settings_file.MAX_BYTES:
        raise toml_table.Unparsable(f"cannot read {config}: it is over 8 MiB")
    return found


def _decode(config: Path, found: bytes | None) -> str:
    try:
        return "" if found is None else found.decode("utf-8")
    except UnicodeDecodeError:
        raise toml_table.Unparsable(f"cannot read {config}: it is not UTF-8 text") from None


def read(config: Path) -> str:
    """The config file's text ("" when there is none)."""
    return _decode(config, _read_bytes(config, _target(config)))


def _replace(config: Path, target: Path, before: bytes | None, new: str | None) -> bool:
    """Write new (None: delete) over target only if it still holds before's bytes; False when
    it changed since we read it, so the caller redoes its edit on what is there now. Codex
    writes this file itself (its /hooks trust, `codex mcp add`); this check keeps such a write
    from being lost to ours, up to the short window of the replace itself."""
    if _read_bytes(config, target) != before:
        return False
    if new is None:
        target.unlink()
    else:
        settings_file.write_atomic(target, new, _mode(target))
    return True


def _edit(config: Path, change: Callable[[str], str]) -> tuple[str, str, bool] | None:
    """Apply change to config.toml's text and write it back; (old text, new text, created), or
    None when the change leaves the text as it is. Raises Changed when the file kept moving."""
    target = _target(config)
    for _ in range(ATTEMPTS):
        before = _read_bytes(config, target)
        text = _decode(config, before)
        new = change(text)
        if new == text:
            return None
        if _replace(config, target, before, new):
            return text, new, before is None
    raise Changed(
        f"cannot write {config}: it changed {ATTEMPTS} times while we edited it (is Codex "
        "writing it?); left it as it is, run the command again"
    )


def grant(ledger: Ledger, config: Path, entries: list[Entry], who: str) -> list[str]:
    """Write a trusted_hash for each entry into the user's config.toml."""

    def change(text: str) -> str:
        new = text
        for entry in entries:
            # Keep what else the user set there (`enabled = false` from Codex's /hooks stays).
            found = toml_table.get(new, _table(entry), str(config))
            values = {**found, "trusted_hash": entry.hash} if isinstance(found, dict) else {}
            values = values or {"trusted_hash": entry.hash}
            new = toml_table.upsert(new, _table(entry), values, str(config))
        return new

    if not config.exists() and not config.is_symlink():
        ledger.make_dirs(config.parent)  # the ledger removes what it made, on uninstall
    done = _edit(config, change)
    if done is None:
        return [f"{who}: {config} already trusts our hooks; unchanged"] if entries else []
    ledger.note_file(config, done[2], [])
    return [f"{who}: trusted our {len(entries)} hooks in {config} ([hooks.state] trusted_hash)"]


def revoke(ledger: Ledger, config: Path, entries: list[Entry], who: str) -> list[str]:
    """Remove the trust entries of ours (those whose hash is still our handler's)."""
    if not config.exists():
        return []

    def change(text: str) -> str:
        new = text
        for entry in reversed(entries):  # undo the appends last first
            found = toml_table.get(new, _table(entry), str(config))
            if isinstance(found, dict) and found.get("trusted_hash") == entry.hash:
                new = toml_table.remove(new, _table(entry), str(config))
        return new

    target = _target(config)
    record = ledger.file(config)
    created = bool(record and record.get("created")) and not config.is_symlink()
    for _ in range(ATTEMPTS):
        before = _read_bytes(config, target)
        text = _decode(config, before)
        new = change(text)
        if new == text:
            return []
        if not new and created:
            if not _replace(config, target, before, None):
                continue
            ledger.forget_file(config)
            ledger.remove_empty_dirs(config.parent)
            return [f"{who}: removed our hook trust and with it {config}, which we had created"]
        if _replace(config, target, before, new):
            return [f"{who}: removed our hook trust from {config}"]
    raise Changed(
        f"cannot write {config}: it changed {ATTEMPTS} times while we edited it (is Codex "
        "writing it?); left it as it is, run the command again"
    )


def trusted(config_text: str, entry: Entry, where: str) -> bool:
    found = toml_table.get(config_text, _table(entry), where)
    return (
        isinstance(found, dict)
        and found.get("trusted_hash") == entry.hash
        and found.get("enabled", True) is not False
    )


def project_trusted(config_text: str, project: Path, where: str) -> bool:
    found = toml_table.get(config_text, ("projects", str(project)), where)
    return isinstance(found, dict) and found.get("trust_level") == "trusted"


def project_trust_lines(project: Path) -> str:
    """The lines that trust a project, for the user to add (never written by install)."""
    return toml_table.render(("projects", str(project)), {"trust_level": "trusted"})


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return None
