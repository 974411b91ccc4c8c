"""Gemini CLI (docs/hooks.md): hooks in settings.json or an extension; no job adapter yet.

Hooks: SessionStart (inject), AfterAgent (stop guard: `decision: "deny"` forces a retry turn),
PreCompress. Handlers carry a stable name and description (Gemini CLI fingerprints project
hooks by name and command) and a timeout in milliseconds. The payload is Claude Code's shape
plus a `timestamp`, with Gemini's own event names.
"""

from __future__ import annotations

# The hook-facing part (gemini_hook.py) is this plugin's too; `as` marks them exported.
from gitstate.agents.gemini_hook import NAME as NAME
from gitstate.agents.gemini_hook import PROJECT_ENV as PROJECT_ENV
from gitstate.agents.gemini_hook import SESSION_KEY as SESSION_KEY
from gitstate.agents.gemini_hook import after_compaction as after_compaction
from gitstate.agents.gemini_hook import block as block
from gitstate.agents.gemini_hook import claims as claims
from gitstate.agents.gemini_hook import inject as inject
from gitstate.agents.gemini_hook import inject_skipped as inject_skipped
from gitstate.agents.gemini_hook import memory_key as memory_key
from gitstate.agents.gemini_hook import nothing as nothing
from gitstate.agents.gemini_hook import project_dir as project_dir
from gitstate.agents.gemini_hook import stop_looping as stop_looping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from gitstate.agents.base import Finding, Place

TITLE = "Gemini CLI"
HOME_ENV = "GEMINI_CLI_HOME"  # the user directory is $GEMINI_CLI_HOME/.gemini when set
JOB = None  # jobs run agy or Claude Code (docs/jobs.md)

# (event, action, timeout in seconds: milliseconds on output). No matcher: lifecycle events
# match every source when it is omitted.
HOOKS = (
    ("SessionStart", "inject", 10),
    ("AfterAgent", "stop-guard", 30),
    ("PreCompress", "pre-compact", 30),
)
HOOK_TEXT = {
    "inject": "Inject STATE.md (git agy-state) when a session starts",
    "stop-guard": "Keep the agent going while a STATE.md step is in progress",
    "pre-compact": "Save STATE.md as a snapshot before compression",
}

CONTEXT = """\
# agy-state

This workspace may keep its task state in `STATE.md`, saved in git by `git agy-state`.
When a session starts the sheet is injected: resume from its first next step without
re-exploring. Change it only with small patches (`git agy-state patch`, see the agy-state
skill), at milestones and before /clear or /compress, never every turn.
`git agy-state status` shows where the task stands.
"""


# ---- the plugin files and install -------------------------------------------------------------


def hook_entries(command: str) -> dict[str, Any]:
    """`{event: [{hooks: [handler]}]}`, handlers named, timeouts in milliseconds."""
    from gitstate.agents import plugin

    entries: dict[str, Any] = {}
    for event, action, timeout in HOOKS:
        handler = {
            "type": "command",
            "command": plugin.hook_command(command, NAME, action),
            "name": f"{plugin.NAME}-{action}",
            "description": HOOK_TEXT[action],
            "timeout": timeout * 1000,
        }
        entries[event] = [{"hooks": [handler]}]
    return entries


def plugin_files(command: str) -> dict[str, str]:
    from gitstate.agents import plugin

    return {
        "gemini-extension.json": plugin.render(
            {**plugin.manifest(), "contextFileName": "GEMINI.md"}
        ),
        "hooks/hooks.json": plugin.render({"hooks": hook_entries(command)}),
        plugin.SKILL_PATH: plugin.SKILL,
        "GEMINI.md": CONTEXT,
    }


def agent_dir(place: Place, scope: str) -> Path:
    """`.gemini` in the project, or the user's (`$GEMINI_CLI_HOME/.gemini` if set)."""
    from gitstate.agents import settings

    if scope == "project":
        return place.project / ".gemini"
    return settings.user_dir(place.home, NAME, HOME_ENV, ".gemini")


def install(place: Place, scope: str, command: str) -> list[str]:
    """Gemini CLI has no personal file per project: a project install writes the project's
    `.gemini/settings.json`, excluded from git when install created it, named in a note when
    the project already had it (docs/hooks.md, "Personal and shared files")."""
    from gitstate.agents import personal, plugin, settings

    base = agent_dir(place, scope)
    path, skill = base / "settings.json", base / plugin.SKILL_PATH
    existed, skill_existed = path.exists(), skill.exists()
    lines, data, path = settings.install(place.ledger, base, TITLE, hook_entries(command))
    if scope == "project":
        lines += personal.settings_lines(place, path, existed, TITLE)
        lines += personal.skill_lines(place, skill, skill_existed)
    return [
        *lines,
        *_notes(data, path, scope),
        *_trust_notes(place, scope),
        f"{TITLE}: start a new session to load them",
    ]


def uninstall(place: Place, scope: str) -> list[str]:
    from gitstate.agents import settings

    base = agent_dir(place, scope)
    lines = settings.uninstall(place.ledger, base, TITLE)
    if scope == "project":
        lines += [f"{TITLE}: {line}" for line in place.unexclude(base / "settings.json")]
    return lines


def _trust_notes(place: Place, scope: str) -> list[str]:
    """Gemini CLI runs no hook (project or user) in an untrusted folder, and its --skip-trust
    silently drops project hooks: said for both scopes, with this folder's verdict."""
    from gitstate.agents import gemini_trust

    note = f"note: Gemini CLI runs hooks only in a trusted folder: {gemini_trust.NOTE}"
    if scope != "project":
        return [note + " (check one: git agy-state doctor)"]
    trusted, why = gemini_trust.verdict(place.project, user_dir(place))
    return [] if trusted else [f"{note} ({why})"]


def user_dir(place: Place) -> Path:
    from gitstate.agents import settings

    return settings.user_dir(place.home, NAME, HOME_ENV, ".gemini")


def _notes(data: dict[str, Any], path: Path, scope: str) -> list[str]:
    """Install never flips Gemini CLI's hook switches; it says when one is off."""
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
    return notes


def doctor(place: Place) -> list[Finding]:
    """Where our Gemini hooks are installed (either scope): is this folder trusted? Untrusted,
    no hook of ours runs here; nothing is said when none is installed."""
    from gitstate.agents import gemini_trust, plugin, settings_file
    from gitstate.errors import AgyError

    installed = []
    for scope in ("project", "user"):
        path = agent_dir(place, scope) / "settings.json"
        try:
            data = settings_file.load(path).data or {}
        except AgyError as exc:  # a settings file we cannot read is a finding, not an abort
            return [(f"{TITLE} {scope} hooks", "warn", exc.message, exc.hint)]
        hooks = data.get("hooks")
        groups = (
            [g for v in hooks.values() if isinstance(v, list) for g in v]
            if isinstance(hooks, dict)
            else []
        )
        handlers = [h for g in groups if isinstance(g, dict) for h in g.get("hooks") or []]
        if any(plugin.is_ours(h) for h in handlers):
            installed.append(scope)
    if not installed:
        return []
    trusted, why = gemini_trust.verdict(place.project, user_dir(place))
    name = f"{TITLE} folder trust"
    if trusted:
        return [(name, "ok", why, None)]
    return [
        (
            name,
            "warn",
            f"{why}: our {' and '.join(installed)} hooks do not run here",
            gemini_trust.NOTE,
        )
    ]
