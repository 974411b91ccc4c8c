"""Putting the agent CLIs' hooks and the skill in place: install, uninstall, and hooks/.

install()/uninstall() merge our hook entries (agent_files) into an agent's settings for a project
or a user, touching only entries whose command is ours, and write the skill; write_plugin_dirs()
regenerates the repository's hooks/. Standard library only (no click, no pygit2); it knows
nothing of git hooks. Every function returns the lines that say what it did.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from gitstate.errors import Failure, UsageError
from gitstate.usecases.setup import settings_file
from gitstate.usecases.setup.agent_files import (
    AGENTS,
    DEFAULT_COMMAND,
    NAME,
    SKILL,
    SKILL_MARK,
    SKILL_PATH,
    check_agent,
    hook_entries,
    is_ours,
    plugin_files,
)
from gitstate.usecases.setup.settings_file import KeyPath, Ledger

__all__ = ["AGENTS", "DEFAULT_COMMAND", "SCOPES", "install", "plugin_files", "uninstall"]

SCOPES = ("project", "user")
AGENT_NAMES = {"agy": "agy", "claude": "Claude Code", "gemini": "Gemini CLI"}


def write_plugin_dirs(root: Path) -> list[Path]:
    """(Re)generate root/<agent>/… for every agent (the repository's hooks/); drop stale files."""
    written = []
    for agent in AGENTS:
        base = root / agent
        files = plugin_files(agent)
        for rel, text in files.items():
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                settings_file.write_atomic(path, text)
            written.append(path)
        for path in sorted(base.rglob("*"), reverse=True):
            rel = path.relative_to(base).as_posix()
            if path.is_file() and rel not in files:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return written


# ---- install / uninstall ----------------------------------------------------------------------


def install(agent: str, scope: str, project: Path, home: Path, command: str) -> list[str]:
    """Install agent's hooks and the skill for a project or a user; say what was done."""
    agent, scope = check_agent(agent), _scope(scope)
    ledger = Ledger(data_dir(home) / "installed.json")
    try:
        if agent == "agy":
            return _AgyInstaller(ledger, project, home).install(scope, command)
        return _install_settings(ledger, agent, scope, project, home, command)
    finally:
        ledger.save()


def uninstall(agent: str, scope: str, project: Path, home: Path) -> list[str]:
    """Remove what install() added for agent and scope, and nothing else."""
    agent, scope = check_agent(agent), _scope(scope)
    ledger = Ledger(data_dir(home) / "installed.json")
    try:
        if agent == "agy":
            return _AgyInstaller(ledger, project, home).uninstall(scope)
        return _uninstall_settings(ledger, agent, scope, project, home)
    finally:
        ledger.save()


def data_dir(home: Path) -> Path:
    """`${XDG_DATA_HOME:-~/.local/share}/agy-state`: the agy plugin and the install ledger."""
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else home / ".local" / "share"
    return base / NAME


def _agent_dir(agent: str, scope: str, project: Path, home: Path) -> Path:
    """The agent's own directory: `.claude`/`.gemini` in the project, or the user's (the agents'
    documented overrides CLAUDE_CONFIG_DIR / GEMINI_CLI_HOME respected)."""
    if agent == "agy":
        return project / ".agents"
    if scope == "project":
        return project / f".{agent}"
    if agent == "claude" and os.environ.get("CLAUDE_CONFIG_DIR"):
        return Path(os.environ["CLAUDE_CONFIG_DIR"])
    if agent == "gemini" and os.environ.get("GEMINI_CLI_HOME"):
        return Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini"
    return home / f".{agent}"


def _install_settings(
    ledger: Ledger, agent: str, scope: str, project: Path, home: Path, command: str
) -> list[str]:
    who = AGENT_NAMES[agent]
    base = _agent_dir(agent, scope, project, home)
    path = base / "settings.json"
    loaded = settings_file.load(path)
    data: dict[str, Any] = dict(loaded.data or {})
    hooks = _hooks_object(data, path)
    wanted = hook_entries(agent, command)
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
    lines += _install_skill(ledger, base / "skills" / NAME / "SKILL.md", who)
    if agent == "gemini":
        lines += _gemini_notes(data, path, scope)
    lines.append(f"{who}: start a new session to load them")
    return lines


def _uninstall_settings(
    ledger: Ledger, agent: str, scope: str, project: Path, home: Path
) -> list[str]:
    who = AGENT_NAMES[agent]
    base = _agent_dir(agent, scope, project, home)
    path = base / "settings.json"
    lines = _remove_from_settings(ledger, path, who)
    lines += _remove_skill(ledger, base / "skills" / NAME / "SKILL.md", who)
    ledger.remove_empty_dirs(base)
    return lines or [f"{who}: nothing of ours in {base}"]


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
            mine = [h for h in handlers if is_ours(h)]
            if not mine:
                kept.append(group)
                continue
            removed[event] = removed.get(event, 0) + len(mine)
            rest = [h for h in handlers if not is_ours(h)]
            if rest:
                kept.append({**group, "hooks": rest})
            else:
                places.setdefault(event, len(kept))
        hooks[event] = kept
    return places, removed


def _gemini_notes(data: dict[str, Any], path: Path, scope: str) -> list[str]:
    notes = []
    config = data.get("hooksConfig")
    if isinstance(config, dict) and config.get("enabled") is False:
        notes.append(
            f"note: {path} sets hooksConfig.enabled to false: Gemini CLI runs no hooks "
            "until it is true"
        )
    tools = data.get("tools")
    if isinstance(tools, dict) and tools.get("enableHooks") is False:
        notes.append(f"note: {path} sets tools.enableHooks to false (older Gemini CLI: no hooks)")
    if scope == "project":
        notes.append("note: Gemini CLI runs a project's hooks only in a trusted folder")
    return notes


# ---- the skill file ---------------------------------------------------------------------------


def _install_skill(ledger: Ledger, path: Path, who: str) -> list[str]:
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    except (OSError, UnicodeDecodeError):
        current = ""
    if current == SKILL:
        return [f"{who}: skill {path} is up to date"]
    if current is not None and SKILL_MARK not in current:
        return [
            f"{who}: left {path} alone: it is another tool's agy-state skill "
            "(move it away and install again to get ours)"
        ]
    ledger.make_dirs(path.parent)
    settings_file.write_atomic(path, SKILL)
    return [f"{who}: wrote the skill {path}"]


def _remove_skill(ledger: Ledger, path: Path, who: str) -> list[str]:
    try:
        current = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    if SKILL_MARK not in current:
        return []
    path.unlink()
    ledger.forget_file(path)
    ledger.remove_empty_dirs(path.parent)
    with_dir = path.parent.is_dir() and not any(path.parent.iterdir())
    if with_dir:  # skills/agy-state/ is named after us: ours even if it predates the ledger
        path.parent.rmdir()
        ledger.remove_empty_dirs(path.parent.parent)
    return [f"{who}: removed the skill {path}"]


# ---- agy ----------------------------------------------------------------------------------


class _AgyInstaller:
    """agy: `agy plugin install` of a plugin dir when agy is on PATH (the route that is known to
    work), else the workspace hooks file `.agents/hooks.json` and `.agents/skills/` (project)
    or the plugin dir and the command to run (user)."""

    def __init__(self, ledger: Ledger, project: Path, home: Path) -> None:
        self.ledger = ledger
        self.plugin_dir = data_dir(home) / "agy-plugin"
        self.workspace = project / ".agents"
        self.agy = shutil.which("agy")

    def install(self, scope: str, command: str) -> list[str]:
        lines = self._write_plugin(command) if self.agy or scope == "user" else []
        if self.agy:
            lines += self._plugin_install()
            if scope == "project":  # the plugin now does it: a workspace copy would run twice
                try:
                    lines += self._remove_workspace()
                except Failure as exc:
                    lines.append(f"note: {exc.message}")
            return [*lines, "agy: start a new agy session to load it (check: agy plugin list)"]
        if scope == "user":
            return [
                *lines,
                "agy: agy is not on PATH, so the plugin is not installed yet; run:",
                f"  agy plugin install {self.plugin_dir}",
            ]
        lines += self._install_workspace(command)
        lines += _install_skill(self.ledger, self.workspace / SKILL_PATH, "agy")
        return [
            *lines,
            "agy: agy is not on PATH; its workspace hooks file is the fallback (where agy reads "
            "hooks from is not documented). Once agy is installed, prefer the plugin: "
            "git agy-state install --agent agy",
        ]

    def uninstall(self, scope: str) -> list[str]:
        lines = []
        if self.agy:
            result = self._run("plugin", "uninstall", NAME)
            if result.returncode == 0:
                lines.append(f"agy: ran agy plugin uninstall {NAME}")
            else:
                lines.append(
                    f"agy: agy plugin uninstall {NAME} exited {result.returncode}"
                    f" ({_last_line(result)}); nothing installed?"
                )
        if self.agy or scope == "user":
            if (self.plugin_dir / "plugin.json").is_file():
                shutil.rmtree(self.plugin_dir)
                lines.append(f"agy: removed the plugin directory {self.plugin_dir}")
            if not self.agy:
                lines.append(
                    "agy: agy is not on PATH; if the plugin is installed, run: "
                    f"agy plugin uninstall {NAME}"
                )
        if scope == "project":
            lines += self._remove_workspace()
        return lines or [f"agy: nothing of ours in {self.workspace}"]

    def _write_plugin(self, command: str) -> list[str]:
        for rel, text in plugin_files("agy", command).items():
            path = self.plugin_dir / rel
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise Failure(f"cannot create {path.parent}: {exc.strerror or exc}") from None
            settings_file.write_atomic(path, text)
        return [f"agy: wrote the plugin to {self.plugin_dir}"]

    def _plugin_install(self) -> list[str]:
        result = self._run("plugin", "install", str(self.plugin_dir))
        if result.returncode == 0:
            return [f"agy: ran agy plugin install {self.plugin_dir}"]
        # Most likely already installed (an older copy): replace it, once.
        removed = self._run("plugin", "uninstall", NAME).returncode == 0
        again = self._run("plugin", "install", str(self.plugin_dir))
        if again.returncode != 0:
            gone = f"the installed {NAME} plugin was uninstalled; " if removed else ""
            raise Failure(
                f"agy plugin install {self.plugin_dir} failed (exit {again.returncode}): "
                f"{_last_line(again)}",
                hint=f"{gone}the plugin is written: run agy plugin install {self.plugin_dir} "
                "to see why",
            )
        return [f"agy: ran agy plugin uninstall {NAME} and agy plugin install {self.plugin_dir}"]

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert self.agy is not None
        try:
            return subprocess.run(
                [self.agy, *args],
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=120,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise Failure(f"agy {' '.join(args)} did not finish within 120 s") from None
        except OSError as exc:
            raise Failure(f"cannot run {self.agy}: {exc.strerror or exc}") from None

    def _install_workspace(self, command: str) -> list[str]:
        path = self.workspace / "hooks.json"
        loaded = settings_file.load(path)
        data = dict(loaded.data or {})
        old = data.get(NAME)
        lines = []
        if old is not None and not _is_our_named_hook(old):
            lines.append(
                f"agy: replaced the named hook {NAME!r} in {path}, which ran: {_commands(old)}"
            )
        data[NAME] = hook_entries("agy", command)[NAME]
        if loaded.data is None:
            self.ledger.make_dirs(self.workspace)
        changed = settings_file.save(loaded, data)
        self.ledger.note_file(path, loaded.data is None, [(NAME,)] if old is None else [])
        if changed:
            lines.append(f"agy: added the named hook {NAME!r} (PreInvocation, Stop) to {path}")
        else:
            lines.append(f"agy: {path} already has the named hook {NAME!r}; unchanged")
        return lines

    def _remove_workspace(self) -> list[str]:
        path = self.workspace / "hooks.json"
        loaded = settings_file.load(path)
        lines = []
        if loaded.data is not None and _is_our_named_hook(loaded.data.get(NAME)):
            data = dict(loaded.data)
            del data[NAME]
            entry = self.ledger.file(path)
            if not data and entry and entry.get("created"):
                loaded.target.unlink()
                lines.append(f"agy: removed {path} (we had created it; only our hook was in it)")
            else:
                settings_file.save(loaded, data)
                lines.append(f"agy: removed the named hook {NAME!r} from {path}")
            self.ledger.forget_file(path)
        lines += _remove_skill(self.ledger, self.workspace / SKILL_PATH, "agy")
        self.ledger.remove_empty_dirs(self.workspace)
        return lines


def _is_our_named_hook(named: object) -> bool:
    if not isinstance(named, dict):
        return False
    return any(
        is_ours(h) for handlers in named.values() if isinstance(handlers, list) for h in handlers
    )


def _commands(named: object) -> str:
    found = []
    if isinstance(named, dict):
        for handlers in named.values():
            for h in handlers if isinstance(handlers, list) else []:
                if isinstance(h, dict) and isinstance(h.get("command"), str):
                    found.append(h["command"])
    return "; ".join(found) or "(no commands)"


# ---- small helpers ------------------------------------------------------------------------


def _scope(scope: str) -> str:
    if scope not in SCOPES:
        raise UsageError(f"unknown scope {scope!r}", hint="choose project or user")
    return scope


def _not_a(path: Path, key: str, want: str, value: object) -> Failure:
    return Failure(
        f"cannot use {path}: {key} is a {settings_file.kind(value)}, not a {want}; "
        "left it untouched",
        hint="fix the file, or add the entries by hand (docs/hooks.md shows them)",
    )


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    text = (result.stderr or "").strip() or (result.stdout or "").strip()
    return text.splitlines()[-1] if text else "no output"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gitstate.usecases.setup.install",
        description="Regenerate the ready-made agent plugin files (the repository's hooks/).",
    )
    parser.add_argument(
        "--write-hooks-dir",
        metavar="DIR",
        nargs="?",
        const=str(Path(__file__).resolve().parents[2] / "hooks"),
        required=True,
    )
    args = parser.parse_args(argv)
    for path in write_plugin_dirs(Path(args.write_hooks_dir)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
