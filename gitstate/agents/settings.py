"""Our hooks merged into an agent's JSON settings file, and the skill beside them: the install
route of the CLIs whose settings hold `hooks.<Event>: [{matcher?, hooks: [handler]}]` (Claude
Code, Gemini CLI; docs/hooks.md, "How settings are merged").

Only handlers whose command is ours (plugin.is_ours) are added, moved or removed; the ledger
remembers which containers we created so that uninstall removes exactly those once empty.
Standard library only; imported by the agent modules' install functions, never on the hook path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitstate.agents import plugin, settings_file
from gitstate.agents.settings_file import KeyPath, Ledger
from gitstate.errors import Failure


def install(
    ledger: Ledger, base: Path, who: str, wanted: dict[str, Any], file: str = "settings.json"
) -> tuple[list[str], dict[str, Any], Path]:
    """Merge `wanted` ({event: [group]}) into base/<file> and write the skill there.

    Returns the lines saying what was done, the settings as now written and their path (for
    the agent's own notes)."""
    path = base / file
    loaded = settings_file.load(path)
    data: dict[str, Any] = dict(loaded.data or {})
    hooks = _hooks_object(data, path)
    for event in wanted:
        if event in hooks and not isinstance(hooks[event], list):
            raise _not_a(path, f"hooks.{event}", "list", hooks[event])
    added: list[KeyPath] = []
    if "hooks" not in data:
        data["hooks"] = hooks
        added.append(("hooks",))
    places, _ = _strip_ours(hooks)
    for event, groups in wanted.items():
        if event not in hooks:
            hooks[event] = []
            added.append(("hooks", event))
        at = places.get(event, len(hooks[event]))
        hooks[event][at:at] = groups
    lines = []
    if loaded.data is None:
        ledger.make_dirs(base)
    changed = settings_file.save(loaded, data)
    ledger.note_file(path, loaded.data is None, added)
    events = ", ".join(wanted)
    if changed:
        lines.append(f"{who}: added the hooks {events} to {path}")
        if not loaded.exact:
            lines.append(
                f"note: rewrote {path} in a standard JSON layout (its own could not be kept)"
            )
    else:
        lines.append(f"{who}: {path} already has the hooks {events}; unchanged")
    lines += install_skill(ledger, base / plugin.SKILL_PATH, who)
    return lines, data, path


def uninstall(ledger: Ledger, base: Path, who: str, file: str = "settings.json") -> list[str]:
    """Remove our handlers from base/<file> and our skill, then what we created."""
    path = base / file
    lines = _remove_from_settings(ledger, path, who)
    lines += remove_skill(ledger, base / plugin.SKILL_PATH, who)
    ledger.remove_empty_dirs(base)
    return lines or [f"{who}: nothing of ours in {base}"]


def remove_hooks(ledger: Ledger, path: Path, who: str) -> list[str]:
    """Remove our handlers from one settings file (an earlier install's place for them), and
    the file when we had created it and it is empty again; nothing else."""
    return _remove_from_settings(ledger, path, who)


def _remove_from_settings(ledger: Ledger, path: Path, who: str) -> list[str]:
    loaded = settings_file.load(path)
    if loaded.data is None:
        ledger.forget_file(path)
        return []
    data = dict(loaded.data)
    if not isinstance(data.get("hooks"), dict):
        return []
    hooks = data["hooks"] = dict(data["hooks"])
    _, removed = _strip_ours(hooks)
    if not removed:
        return []
    ours = ledger.created_keys(path)
    for event in list(hooks):
        if hooks[event] == [] and (event in removed if ours is None else ("hooks", event) in ours):
            del hooks[event]
    if not hooks and (ours is None or ("hooks",) in ours):
        del data["hooks"]
    entry = ledger.file(path)
    if not data and entry and entry.get("created"):
        loaded.target.unlink()
        ledger.forget_file(path)
        return [f"{who}: removed our hooks and with them {path}, which we had created"]
    settings_file.save(loaded, data)
    ledger.forget_file(path)
    return [f"{who}: removed our hooks ({', '.join(removed)}) from {path}"]


def _hooks_object(data: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise _not_a(path, "hooks", "object", hooks)
    hooks = dict(hooks)
    if "hooks" in data:
        data["hooks"] = hooks
    return hooks


def _strip_ours(hooks: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """Drop our handlers from every event's groups, and the groups left empty (in place).

    Returns, per event, where the first dropped group stood (a reinstall goes back there) and
    how many handlers were dropped. Entries of any other shape are someone else's: kept.
    """
    places: dict[str, int] = {}
    removed: dict[str, int] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept.append(group)
                continue
            mine = [h for h in handlers if plugin.is_ours(h)]
            if not mine:
                kept.append(group)
                continue
            removed[event] = removed.get(event, 0) + len(mine)
            rest = [h for h in handlers if not plugin.is_ours(h)]
            if rest:
                kept.append({**group, "hooks": rest})
            else:
                places.setdefault(event, len(kept))
        hooks[event] = kept
    return places, removed


# ---- the skill file ---------------------------------------------------------------------------


def install_skill(ledger: Ledger, path: Path, who: str) -> list[str]:
    """Write our SKILL.md at `path` unless another tool's agy-state skill is there."""
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    except (OSError, UnicodeDecodeError):
        current = ""
    if current == plugin.SKILL:
        return [f"{who}: skill {path} is up to date"]
    if current is not None and plugin.SKILL_MARK not in current:
        return [
            f"{who}: left {path} alone: it is another tool's agy-state skill "
            "(move it away and install again to get ours)"
        ]
    ledger.make_dirs(path.parent)
    settings_file.write_atomic(path, plugin.SKILL)
    return [f"{who}: wrote the skill {path}"]


def remove_skill(ledger: Ledger, path: Path, who: str) -> list[str]:
    """Remove our SKILL.md at `path` (never another tool's), and its folder once empty."""
    try:
        current = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    if plugin.SKILL_MARK not in current:
        return []
    path.unlink()
    ledger.forget_file(path)
    ledger.remove_empty_dirs(path.parent)
    with_dir = path.parent.is_dir() and not any(path.parent.iterdir())
    if with_dir:  # skills/agy-state/ is named after us: ours even if it predates the ledger
        path.parent.rmdir()
        ledger.remove_empty_dirs(path.parent.parent)
    return [f"{who}: removed the skill {path}"]


def write_files(files: dict[str, str], root: Path) -> None:
    """Write plugin files (relative path → text) under root, every one (re)written."""
    for rel, text in files.items():
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Failure(f"cannot create {path.parent}: {exc.strerror or exc}") from None
        settings_file.write_atomic(path, text)


def _not_a(path: Path, key: str, want: str, value: object) -> Failure:
    return Failure(
        f"cannot use {path}: {key} is a {settings_file.kind(value)}, not a {want}; "
        "left it untouched",
        hint="fix the file, or add the entries by hand (docs/hooks.md shows them)",
    )


def user_dir(home: Path, name: str, env: str | None, sub: str | None = None) -> Path:
    """The agent's user directory `~/.<name>`, or the one its documented variable names."""
    import os

    value = os.environ.get(env) if env else None
    if value:
        return Path(value) / sub if sub else Path(value)
    return home / f".{name}"
