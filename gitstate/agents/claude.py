"""Claude Code (docs/hooks.md): hooks in settings.json, a plugin dir, print mode for jobs.

Hooks: SessionStart (inject; matcher startup|resume|clear|compact), Stop (stop guard),
PreCompact. The payload names `session_id`, `cwd` and `hook_event_name`, and `stop_hook_active`
once a Stop hook has already kept the agent going. Jobs: `claude -p` with the prompt as the last
operand after `--`, `--output-format stream-json --verbose`, `--resume ID`, the schema as JSON
text; one `{"type":"result", subtype, is_error, result, duration_ms, session_id}` line.
"""

from __future__ import annotations

# The hook-facing part (claude_hook.py) is this plugin's too; `as` marks them exported.
from gitstate.agents.claude_hook import NAME as NAME
from gitstate.agents.claude_hook import PROJECT_ENV as PROJECT_ENV
from gitstate.agents.claude_hook import SESSION_KEY as SESSION_KEY
from gitstate.agents.claude_hook import after_compaction as after_compaction
from gitstate.agents.claude_hook import block as block
from gitstate.agents.claude_hook import claims as claims
from gitstate.agents.claude_hook import inject as inject
from gitstate.agents.claude_hook import inject_skipped as inject_skipped
from gitstate.agents.claude_hook import memory_key as memory_key
from gitstate.agents.claude_hook import nothing as nothing
from gitstate.agents.claude_hook import project_dir as project_dir
from gitstate.agents.claude_hook import stop_looping as stop_looping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from gitstate.agents.base import Finding, Place
    from gitstate.agents.jobs import Call, Outcome, Quota

TITLE = "Claude Code"
SHARED_FILE = "settings.json"  # the project's, which teams commit; and the user's
PERSONAL_FILE = "settings.local.json"  # the project's personal one: where our hooks go
USER_DIR_ENV = "CLAUDE_CONFIG_DIR"  # the user directory's documented override

# (event, action, timeout in seconds, matcher). Inject only reads a file; stop-guard and
# pre-compact may save a snapshot (load pygit2, commit, wait for the work tree's lock).
HOOKS = (
    ("SessionStart", "inject", 10, "startup|resume|clear|compact"),
    ("Stop", "stop-guard", 30, None),
    ("PreCompact", "pre-compact", 30, None),
)


# ---- the plugin files and install -------------------------------------------------------------


def hook_entries(command: str) -> dict[str, Any]:
    """`{event: [{matcher?, hooks: [handler]}]}`, as settings.json and hooks/hooks.json hold it."""
    from gitstate.agents.plugin import hook_command

    entries: dict[str, Any] = {}
    for event, action, timeout, matcher in HOOKS:
        handler: dict[str, Any] = {
            "type": "command",
            "command": hook_command(command, NAME, action),
        }
        handler["timeout"] = timeout
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [handler]
        entries[event] = [group]
    return entries


def plugin_files(command: str) -> dict[str, str]:
    from gitstate.agents import plugin

    hooks = {"description": plugin.DESCRIPTION, "hooks": hook_entries(command)}
    return {
        ".claude-plugin/plugin.json": plugin.render(plugin.manifest()),
        "hooks/hooks.json": plugin.render(hooks),
        plugin.SKILL_PATH: plugin.SKILL,
    }


def agent_dir(place: Place, scope: str) -> Path:
    """`.claude` in the project, or the user's (`$CLAUDE_CONFIG_DIR` if set)."""
    from gitstate.agents import settings

    if scope == "project":
        return place.project / ".claude"
    return settings.user_dir(place.home, NAME, USER_DIR_ENV)


def install(place: Place, scope: str, command: str) -> list[str]:
    """Project scope: into `.claude/settings.local.json`, Claude Code's personal file for a
    project (excluded from git), since our commands name this machine's interpreter; an
    earlier install's entries in the shared `.claude/settings.json` move there."""
    from gitstate.agents import personal, plugin, settings

    base = agent_dir(place, scope)
    if scope != "project":
        lines, _, _ = settings.install(place.ledger, base, TITLE, hook_entries(command))
        return [*lines, f"{TITLE}: start a new session to load them"]
    lines = settings.remove_hooks(place.ledger, base / SHARED_FILE, TITLE)
    skill = base / plugin.SKILL_PATH
    skill_existed = skill.exists()
    more, _, path = settings.install(
        place.ledger, base, TITLE, hook_entries(command), PERSONAL_FILE
    )
    lines += more
    lines += personal.settings_lines(place, path, False, TITLE)  # personal, whoever made it
    lines += personal.skill_lines(place, skill, skill_existed)
    return [*lines, f"{TITLE}: start a new session to load them"]


def uninstall(place: Place, scope: str) -> list[str]:
    from gitstate.agents import settings

    base = agent_dir(place, scope)
    if scope != "project":
        return settings.uninstall(place.ledger, base, TITLE)
    lines = settings.remove_hooks(place.ledger, base / SHARED_FILE, TITLE)
    rest = settings.uninstall(place.ledger, base, TITLE, PERSONAL_FILE)
    if not (lines and rest == [f"{TITLE}: nothing of ours in {base}"]):
        lines += rest
    lines += [f"{TITLE}: {line}" for line in place.unexclude(base / PERSONAL_FILE)]
    return lines


def doctor(place: Place) -> list[Finding]:
    return []  # Claude Code runs the hooks in its settings: nothing to grant


# ---- background jobs --------------------------------------------------------------------------


class _Job:
    """Claude Code's print mode as a job's agent (docs/jobs.md)."""

    CONVERSATION_KEYS = ("session_id",)

    def argv(self, command: tuple[str, ...], skip_permissions: bool, call: Call) -> list[str]:
        """-p is a switch and the prompt an operand: it goes last, after `--`, so it is never
        read as an option (docs/jobs.md, "The prompt is never an option"). Print mode streams
        JSON only with --verbose."""
        import json

        argv = [*command, "-p", "--output-format", "stream-json", "--verbose"]
        if call.model:
            argv += ["--model", call.model]
        if call.effort:
            argv += ["--effort", call.effort]
        if call.schema_path is not None:
            argv += ["--json-schema", json.dumps(json.loads(call.schema_path.read_text()))]
        if call.conversation:
            argv += ["--resume", call.conversation]
        if skip_permissions:
            argv.append("--dangerously-skip-permissions")
        return [*argv, "--", call.prompt]

    def quota_argv(self, command: tuple[str, ...]) -> list[str] | None:
        return None  # print mode reports no usage windows

    def read_quota(self, text: str) -> Quota:
        from gitstate.errors import Failure

        raise Failure(f"{TITLE} reports no usage windows")  # no quota_argv: never asked

    def auth_dirs(self, home: Path) -> list[Path]:
        return [home / ".claude"]

    def result_body(self, event: dict[str, Any]) -> dict[str, Any] | None:
        return event if event.get("type") == "result" else None

    def result_fields(self, body: dict[str, Any]) -> dict[str, Any]:
        """status from subtype (success / error_*) and is_error; response from `result`;
        the duration from milliseconds."""
        fields: dict[str, Any] = {}
        if "is_error" in body or "subtype" in body:
            failed = bool(body.get("is_error")) or body.get("subtype", "success") != "success"
            fields["status"] = "ERROR" if failed else "SUCCESS"
        if isinstance(body.get("result"), str):
            fields["response"] = body["result"]
        if isinstance(body.get("duration_ms"), int | float):
            fields["duration_seconds"] = body["duration_ms"] / 1000
        return fields

    def false_alarm(self, outcome: Outcome) -> bool:
        return False  # no known false alarm: an error is an error


JOB = _Job()
