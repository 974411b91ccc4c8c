"""Registering `git agy-state mcp` with the agent CLIs that speak MCP (docs/mcp.md, "Install").

Each CLI keeps its MCP servers in a file of its own, and we touch only our entry, named
`agy-state`, there (the sources of these facts are in docs/agents.md):

- Claude Code: `.mcp.json` at the project root (`mcpServers`, `"type": "stdio"`), or for the
  user `~/.claude.json`, Claude's own state file, which it rewrites all the time: we remove our
  key and leave the rest as Claude left it.
- Gemini CLI: `mcpServers` in its settings.json, the project's or the user's; it edits the JSON
  itself here (`gemini mcp add` in an untrusted folder rewrote the whole file), and runs MCP
  servers only in a trusted folder.
- Codex CLI: `[mcp_servers.agy-state]` in config.toml, the project's `.codex/` (read only once
  the project is trusted) or the user's `$CODEX_HOME`; edited as text (toml_table.py).

The JSON files go through settings_file (their layout kept, the ledger knowing what we
created), so uninstall gives back the file as it was. Standard library only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from gitstate.agents import personal, settings_file, toml_table
from gitstate.errors import Failure

if TYPE_CHECKING:
    from gitstate.agents.base import Place

SERVER = "agy-state"  # our entry's name in every CLI's list of servers


class Target(NamedTuple):
    """Where one agent CLI keeps its MCP servers, and how our entry looks there."""

    path: Path
    key: tuple[str, ...]  # our entry, from the file's top
    entry: Callable[[list[str]], dict[str, Any]]  # the server's argv → our entry
    notes: tuple[str, ...]  # what the user still has to know (trust, approval)


def _claude(place: Place, scope: str) -> Target:
    if scope == "project":
        return Target(
            place.project / ".mcp.json",
            ("mcpServers", SERVER),
            _stdio_entry(typed=True),
            (
                "Claude Code asks once before it starts a project's server (claude mcp list shows it)",
            ),
        )
    return Target(place.home / ".claude.json", ("mcpServers", SERVER), _stdio_entry(True), ())


def _gemini(place: Place, scope: str) -> Target:
    from gitstate.agents import gemini

    return Target(
        gemini.agent_dir(place, scope) / "settings.json",
        ("mcpServers", SERVER),
        _stdio_entry(typed=False),
        (
            "Gemini CLI starts MCP servers only in a trusted folder (/permissions, or trustedFolders.json)",
        ),
    )


def _codex(place: Place, scope: str) -> Target:
    from gitstate.agents import codex

    notes: tuple[str, ...] = ()
    if scope == "project":
        notes = (
            "Codex CLI reads a project's .codex/config.toml once the project is trusted (codex exec --trust)",
        )
    return Target(
        codex.agent_dir(place, scope) / "config.toml",
        ("mcp_servers", SERVER),
        _stdio_entry(typed=False),
        notes,
    )


# The agent CLIs with an MCP client, by the name `--agent` takes (agents/__init__.py NAMES).
TARGETS: dict[str, Callable[[Place, str], Target]] = {
    "claude": _claude,
    "gemini": _gemini,
    "codex": _codex,
}


def _stdio_entry(typed: bool) -> Callable[[list[str]], dict[str, Any]]:
    def entry(argv: list[str]) -> dict[str, Any]:
        found: dict[str, Any] = {"type": "stdio"} if typed else {}
        found.update(command=argv[0], args=argv[1:])
        return found

    return entry


def supported(agent: str) -> bool:
    return agent in TARGETS


def install(agent: str, title: str, place: Place, scope: str, argv: list[str]) -> list[str]:
    """Register the server (`argv`) with `agent`; the lines saying what was done."""
    if agent not in TARGETS:
        return [f"{title}: no MCP client known; no server registered"]
    if not _sdk_installed():
        raise Failure(
            "the MCP server needs the MCP SDK, which is not installed; registered nothing",
            hint="pip install 'git-agy-state[mcp]' (or pipx inject git-agy-state mcp)",
        )
    target = TARGETS[agent](place, scope)
    entry = target.entry(argv)
    existed = target.path.exists()
    if target.path.suffix == ".toml":
        changed = _toml_install(place, target, entry)
    else:
        changed = _json_install(place, target, entry)
    done = "registered" if changed else "already registered; unchanged"
    lines = [f"{title}: MCP server {SERVER} {done} in {target.path}"]
    # Our entry names this machine's interpreter: a project file holding it is personal, as
    # the hooks' files are (docs/hooks.md, "Personal and shared files"; personal.py).
    lines += personal.settings_lines(
        place, target.path, existed, title, f"our MCP server {SERVER} in it names"
    )
    return lines + [f"note: {note}" for note in target.notes]


def _sdk_installed() -> bool:
    try:
        return importlib.util.find_spec("mcp") is not None
    except ValueError:  # a module without a spec in sys.modules: not an importable SDK
        return False


def uninstall(agent: str, title: str, place: Place, scope: str) -> list[str]:
    """Remove our server entry from `agent`'s file (nothing when there is none)."""
    if agent not in TARGETS:
        return []
    target = TARGETS[agent](place, scope)
    if target.path.suffix == ".toml":
        removed = _toml_uninstall(place, target)
    else:
        removed = _json_uninstall(place, target)
    lines = [f"{title}: removed MCP server {SERVER} from {target.path}"] if removed else []
    if not target.path.exists() and not target.path.is_symlink():
        # Only once the file is gone: a file shared with the hooks (Gemini's settings.json)
        # stays excluded until their uninstall, which runs after this one, removes it.
        lines += [f"{title}: {line}" for line in place.unexclude(target.path)]
    return lines


def is_ours(entry: object) -> bool:
    """Whether a server entry runs `git agy-state mcp` (ours, or the same one by hand)."""
    if not isinstance(entry, dict):
        return False
    args = entry.get("args")
    words = [entry.get("command"), *(args if isinstance(args, list) else [])]
    texts = [w for w in words if isinstance(w, str)]
    return (
        bool(texts)
        and texts[-1] == "mcp"
        and any(w in ("gitstate", "agy-state") or w.endswith("git-agy-state") for w in texts)
    )


def _taken(target: Target, found: object) -> Failure:
    return Failure(
        f"{target.path} already has an MCP server named {SERVER} that is not git agy-state mcp; "
        "left it untouched",
        hint=f"rename or remove that entry ({'.'.join(target.key)}), then install again",
    )


# ---- JSON (Claude Code, Gemini CLI) ----------------------------------------------------------


def _json_install(place: Place, target: Target, entry: dict[str, Any]) -> bool:
    loaded = settings_file.load(target.path)
    data: dict[str, Any] = dict(loaded.data or {})
    parent_key, name = target.key
    servers = data.get(parent_key, {})
    if not isinstance(servers, dict):
        raise Failure(
            f"cannot use {target.path}: {parent_key} is a {settings_file.kind(servers)}, "
            "not an object; left it untouched",
            hint="fix the file, or add the server by hand (docs/mcp.md shows the entry)",
        )
    if name in servers and not is_ours(servers[name]):
        raise _taken(target, servers[name])
    added: list[tuple[str, ...]] = []
    if parent_key not in data:
        added.append((parent_key,))
    if name not in servers:
        added.append(target.key)
    data[parent_key] = {**servers, name: entry}
    if loaded.data is None:
        place.ledger.make_dirs(target.path.parent)
    changed = settings_file.save(loaded, data)
    place.ledger.note_file(target.path, loaded.data is None, added)
    return changed


def _json_uninstall(place: Place, target: Target) -> bool:
    loaded = settings_file.load(target.path)
    if loaded.data is None:
        place.ledger.forget_file(target.path)
        return False
    data = dict(loaded.data)
    parent_key, name = target.key
    servers = data.get(parent_key)
    if not isinstance(servers, dict) or not is_ours(servers.get(name)):
        return False
    servers = {k: v for k, v in servers.items() if k != name}
    ours = place.ledger.created_keys(target.path)
    if servers or (ours is not None and (parent_key,) not in ours):
        data[parent_key] = servers
    else:
        del data[parent_key]
    entry = place.ledger.file(target.path)
    if not data and entry and entry.get("created"):
        loaded.target.unlink()
        place.ledger.forget_file(target.path)
        place.ledger.remove_empty_dirs(target.path.parent)
        return True
    settings_file.save(loaded, data)
    _forget_ours(place, target)
    return True


def _forget_ours(place: Place, target: Target) -> None:
    """Drop our keys from the ledger's entry for the file, and the entry once nothing is left
    in it: a file we share with the hooks (Gemini's settings.json, Codex's config.toml with its
    hook trust) keeps what their uninstall needs, such as that install created the file."""
    entry = place.ledger.file(target.path)
    if entry is None:
        return
    ours = {(target.key[0],), target.key}
    left = [k for k in entry.get("keys", []) if not isinstance(k, list) or tuple(k) not in ours]
    entry["keys"] = left
    if not left and not entry.get("created"):
        place.ledger.forget_file(target.path)


# ---- TOML (Codex CLI) ------------------------------------------------------------------------


def _read_text(path: Path) -> str | None:
    from gitstate.storage import view

    try:
        found = view.read_regular(path.resolve(), settings_file.MAX_BYTES + 1)
    except view.NotRegular as exc:
        raise Failure(f"cannot use {path}: it is {exc.what.removeprefix('unreadable: ')}") from None
    if found is None:
        return None
    try:
        return found.decode("utf-8")
    except UnicodeDecodeError:
        raise Failure(f"cannot use {path}: it is not UTF-8 text; left it untouched") from None


def _toml_install(place: Place, target: Target, entry: dict[str, Any]) -> bool:
    text = _read_text(target.path)
    where = str(target.path)
    current = toml_table.get(text or "", target.key, where)
    if current is not None and not is_ours(current):
        raise _taken(target, current)
    new = toml_table.upsert(text or "", target.key, entry, where)
    if new == text:
        return False
    if text is None:
        place.ledger.make_dirs(target.path.parent)
    settings_file.write_atomic(target.path.resolve(), new, _mode(target.path))
    place.ledger.note_file(target.path, text is None, [target.key] if current is None else [])
    return True


def _toml_uninstall(place: Place, target: Target) -> bool:
    text = _read_text(target.path)
    if text is None:
        place.ledger.forget_file(target.path)
        return False
    where = str(target.path)
    if not is_ours(toml_table.get(text, target.key, where)):
        return False
    new = toml_table.remove(text, target.key, where)
    entry = place.ledger.file(target.path)
    if not new and entry and entry.get("created"):
        target.path.resolve().unlink()
        place.ledger.forget_file(target.path)
        place.ledger.remove_empty_dirs(target.path.parent)
        return True
    settings_file.write_atomic(target.path.resolve(), new, _mode(target.path))
    _forget_ours(place, target)
    return True


def _mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return None
