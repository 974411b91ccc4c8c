"""Putting the agent CLIs' hooks and the skill in place: install, uninstall, and hooks/.

install()/uninstall() hand an agent, by name, to its module in gitstate/agents/ (which knows
where its settings live and how our entries go in and out), with the place to work in and the
ledger of what we created; write_plugin_dirs() regenerates the repository's hooks/ from every
registered agent's plugin files: the one generator (hooks/generate.py runs main()). Standard
library only (no click, no pygit2); it knows nothing of git hooks. Every function returns the
lines that say what it did.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from gitstate import agents
from gitstate.agents import settings_file
from gitstate.agents.plugin import DEFAULT_COMMAND, NAME
from gitstate.agents.settings_file import Ledger
from gitstate.errors import EXIT_OK, UsageError
from gitstate.storage import exclude

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.storage.layout import Layout

__all__ = ["AGENTS", "DEFAULT_COMMAND", "SCOPES", "install", "plugin_files", "uninstall"]

AGENTS = agents.NAMES
SCOPES = ("project", "user")
HOOKS_DIR = Path(__file__).resolve().parents[3] / "hooks"  # the repository's hooks/


class Place:
    """Where an install happens (gitstate/agents/base.py:Place)."""

    def __init__(self, project: Path, home: Path) -> None:
        self.project = project
        self.home = home
        self.data_dir = data_dir(home)
        self.ledger = Ledger(self.data_dir / "installed.json")

    def exclude(self, path: Path) -> list[str]:
        """Keep a personal file install wrote in the project out of `git status`: its line in
        the repository's info/exclude, recorded so that uninstall takes out only ours."""
        found = self._layout(path)
        if found is None:
            return []
        layout, line = found
        if exclude.ensure(layout, (line,)):
            self.ledger.note_file(exclude.path(layout), False, [("exclude", line)])
            return [f"added {line} to {exclude.path(layout)} (personal: never to be committed)"]
        return []

    def unexclude(self, path: Path) -> list[str]:
        """Take out the info/exclude line exclude() added for path, if it did."""
        found = self._layout(path)
        if found is None:
            return []
        layout, line = found
        ours = self.ledger.created_keys(exclude.path(layout)) or set()
        if ("exclude", line) not in ours:
            return []
        self.ledger.forget_key(exclude.path(layout), ("exclude", line))
        if exclude.remove(layout, line):
            return [f"removed {line} from {exclude.path(layout)}"]
        return []

    def _layout(self, path: Path) -> tuple[Layout, str] | None:
        """The repository whose work tree root is the project, and path's exclude line."""
        from gitstate.storage.layout import discover

        try:
            rel = path.relative_to(self.project)
        except ValueError:
            return None
        layout = discover(self.project)
        if layout is None or layout.workdir is None:
            return None
        if layout.workdir.resolve() != self.project.resolve():
            return None
        return layout, "/" + rel.as_posix()


def install(agent: str, scope: str, project: Path, home: Path, command: str) -> list[str]:
    """Install agent's hooks and the skill for a project or a user; say what was done."""
    module, scope = agents.get(agent), _scope(scope)
    place = Place(project, home)
    try:
        return module.install(place, scope, command)
    finally:
        place.ledger.save()


def uninstall(agent: str, scope: str, project: Path, home: Path) -> list[str]:
    """Remove what install() added for agent and scope, and nothing else."""
    module, scope = agents.get(agent), _scope(scope)
    place = Place(project, home)
    try:
        return module.uninstall(place, scope)
    finally:
        place.ledger.save()


def install_mcp(agent: str, scope: str, project: Path, home: Path, argv: list[str]) -> list[str]:
    """Register the MCP server (`argv`, docs/mcp.md) where agent's CLI looks for it."""
    from gitstate.agents import mcp

    module, scope = agents.get(agent), _scope(scope)
    place = Place(project, home)
    try:
        return mcp.install(agent, module.TITLE, place, scope, argv)
    finally:
        place.ledger.save()


def uninstall_mcp(agent: str, scope: str, project: Path, home: Path) -> list[str]:
    """Remove what install_mcp() registered for agent and scope (before the hooks go: they may
    share a file, and each removal undoes its own insertion)."""
    from gitstate.agents import mcp

    module, scope = agents.get(agent), _scope(scope)
    place = Place(project, home)
    try:
        return mcp.uninstall(agent, module.TITLE, place, scope)
    finally:
        place.ledger.save()


def data_dir(home: Path) -> Path:
    """`${XDG_DATA_HOME:-~/.local/share}/agy-state`: the agy plugin and the install ledger."""
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else home / ".local" / "share"
    return base / NAME


def hook_entries(agent: str, command: str = DEFAULT_COMMAND) -> dict[str, Any]:
    """The hooks object agent's settings or hooks file holds (docs/hooks.md, "The entries")."""
    return agents.get(agent).hook_entries(command)


def plugin_files(agent: str, command: str = DEFAULT_COMMAND) -> dict[str, str]:
    """Every file of agent's plugin (extension), as relative path → text."""
    return agents.get(agent).plugin_files(command)


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


def _scope(scope: str) -> str:
    if scope not in SCOPES:
        raise UsageError(f"unknown scope {scope!r}", hint="choose project or user")
    return scope


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gitstate.usecases.setup.install",
        description="Regenerate the ready-made agent plugin files (the repository's hooks/).",
    )
    parser.add_argument(
        "--write-hooks-dir", metavar="DIR", nargs="?", const=str(HOOKS_DIR), required=True
    )
    args = parser.parse_args(argv)
    for path in write_plugin_dirs(Path(args.write_hooks_dir)):
        print(path)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
