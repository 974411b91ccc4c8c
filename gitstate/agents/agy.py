"""agy, Antigravity's CLI (docs/hooks.md): a named hook in a plugin, and the jobs' default agent.

Hooks: PreInvocation (inject, on every model call of a turn: only `invocationNum` 1 injects) and
Stop (stop guard; `executionNum` over 1 means agy already goes on because of us). The payload
names `conversationId` and `workspacePaths`. Install: the plugin dir and `agy plugin install`
when agy is on PATH, else the workspace `.agents/hooks.json` (project) or the command to run
(user). Jobs: `agy -p PROMPT --output-format stream-json`, `--conversation ID`,
`--print-timeout`, the schema as a file; the result arrives as `{"event":"result","result":{…}}`.
Quota: `agy -p /usage --output-format json`, whose format is not documented: `command.data.groups`
when present, else tab-separated text.
"""

from __future__ import annotations

# The hook-facing part (agy_hook.py) is this plugin's too; `as` marks them exported.
from gitstate.agents.agy_hook import NAME as NAME
from gitstate.agents.agy_hook import PROJECT_ENV as PROJECT_ENV
from gitstate.agents.agy_hook import SESSION_KEY as SESSION_KEY
from gitstate.agents.agy_hook import after_compaction as after_compaction
from gitstate.agents.agy_hook import block as block
from gitstate.agents.agy_hook import claims as claims
from gitstate.agents.agy_hook import inject as inject
from gitstate.agents.agy_hook import inject_skipped as inject_skipped
from gitstate.agents.agy_hook import memory_key as memory_key
from gitstate.agents.agy_hook import nothing as nothing
from gitstate.agents.agy_hook import project_dir as project_dir
from gitstate.agents.agy_hook import stop_looping as stop_looping

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from pathlib import Path
    from typing import Any

    from gitstate.agents.base import Finding, Place
    from gitstate.agents.jobs import Call, Outcome, Quota
    from gitstate.agents.settings_file import Ledger

TITLE = "agy"
HOOKS = (("PreInvocation", "inject", 10), ("Stop", "stop-guard", 30))  # timeouts in seconds


# ---- the plugin files -------------------------------------------------------------------------


def hook_entries(command: str) -> dict[str, Any]:
    """`{NAME: {event: [handler]}}`: one named hook. agy drops unknown handler keys, so a
    handler has only type, command and timeout."""
    from gitstate.agents import plugin

    return {
        plugin.NAME: {
            event: [
                {
                    "type": "command",
                    "command": plugin.hook_command(command, NAME, action),
                    "timeout": timeout,
                }
            ]
            for event, action, timeout in HOOKS
        }
    }


def plugin_files(command: str) -> dict[str, str]:
    from gitstate.agents import plugin

    return {
        "plugin.json": plugin.render(plugin.manifest()),
        "hooks.json": plugin.render(hook_entries(command)),
        plugin.SKILL_PATH: plugin.SKILL,
    }


# ---- install: the plugin route, or the workspace hooks file -----------------------------------


def install(place: Place, scope: str, command: str) -> list[str]:
    return _Installer(place).install(scope, command)


def uninstall(place: Place, scope: str) -> list[str]:
    return _Installer(place).uninstall(scope)


class _Installer:
    """`agy plugin install` of a plugin dir when agy is on PATH (the route that is known to
    work), else the workspace hooks file `.agents/hooks.json` and `.agents/skills/` (project)
    or the plugin dir and the command to run (user)."""

    def __init__(self, place: Place) -> None:
        import shutil

        self.place = place
        self.ledger: Ledger = place.ledger
        self.plugin_dir = place.data_dir / "agy-plugin"
        self.workspace = place.project / ".agents"
        self.agy = shutil.which("agy")

    def install(self, scope: str, command: str) -> list[str]:
        from gitstate.agents import plugin, settings
        from gitstate.errors import Failure

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
        from gitstate.agents import personal

        path, skill = self.workspace / "hooks.json", self.workspace / plugin.SKILL_PATH
        existed, skill_existed = path.exists(), skill.exists()
        lines += self._install_workspace(command)
        lines += settings.install_skill(self.ledger, skill, "agy")
        lines += personal.settings_lines(self.place, path, existed, "agy")
        lines += personal.skill_lines(self.place, skill, skill_existed)
        return [
            *lines,
            "agy: agy is not on PATH; its workspace hooks file is the fallback (where agy reads "
            "hooks from is not documented). Once agy is installed, prefer the plugin: "
            "git agy-state install --agent agy",
        ]

    def uninstall(self, scope: str) -> list[str]:
        import shutil

        from gitstate.agents.plugin import NAME as PLUGIN

        lines = []
        if self.agy:
            result = self._run("plugin", "uninstall", PLUGIN)
            if result.returncode == 0:
                lines.append(f"agy: ran agy plugin uninstall {PLUGIN}")
            else:
                lines.append(
                    f"agy: agy plugin uninstall {PLUGIN} exited {result.returncode}"
                    f" ({_last_line(result)}); nothing installed?"
                )
        if self.agy or scope == "user":
            if (self.plugin_dir / "plugin.json").is_file():
                shutil.rmtree(self.plugin_dir)
                lines.append(f"agy: removed the plugin directory {self.plugin_dir}")
            if not self.agy:
                lines.append(
                    "agy: agy is not on PATH; if the plugin is installed, run: "
                    f"agy plugin uninstall {PLUGIN}"
                )
        if scope == "project":
            lines += self._remove_workspace()
            lines += [
                f"agy: {line}" for line in self.place.unexclude(self.workspace / "hooks.json")
            ]
        return lines or [f"agy: nothing of ours in {self.workspace}"]

    def _write_plugin(self, command: str) -> list[str]:
        from gitstate.agents import settings

        settings.write_files(plugin_files(command), self.plugin_dir)
        return [f"agy: wrote the plugin to {self.plugin_dir}"]

    def _plugin_install(self) -> list[str]:
        from gitstate.agents.plugin import NAME as PLUGIN
        from gitstate.errors import Failure

        result = self._run("plugin", "install", str(self.plugin_dir))
        if result.returncode == 0:
            return [f"agy: ran agy plugin install {self.plugin_dir}"]
        # Most likely already installed (an older copy): replace it, once.
        removed = self._run("plugin", "uninstall", PLUGIN).returncode == 0
        again = self._run("plugin", "install", str(self.plugin_dir))
        if again.returncode != 0:
            gone = f"the installed {PLUGIN} plugin was uninstalled; " if removed else ""
            raise Failure(
                f"agy plugin install {self.plugin_dir} failed (exit {again.returncode}): "
                f"{_last_line(again)}",
                hint=f"{gone}the plugin is written: run agy plugin install {self.plugin_dir} "
                "to see why",
            )
        return [f"agy: ran agy plugin uninstall {PLUGIN} and agy plugin install {self.plugin_dir}"]

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        import subprocess

        from gitstate.errors import Failure

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
        from gitstate.agents import settings_file
        from gitstate.agents.plugin import NAME as PLUGIN

        path = self.workspace / "hooks.json"
        loaded = settings_file.load(path)
        data = dict(loaded.data or {})
        old = data.get(PLUGIN)
        lines = []
        if old is not None and not _is_our_named_hook(old):
            lines.append(
                f"agy: replaced the named hook {PLUGIN!r} in {path}, which ran: {_commands(old)}"
            )
        data[PLUGIN] = hook_entries(command)[PLUGIN]
        if loaded.data is None:
            self.ledger.make_dirs(self.workspace)
        changed = settings_file.save(loaded, data)
        self.ledger.note_file(path, loaded.data is None, [(PLUGIN,)] if old is None else [])
        if changed:
            lines.append(f"agy: added the named hook {PLUGIN!r} (PreInvocation, Stop) to {path}")
        else:
            lines.append(f"agy: {path} already has the named hook {PLUGIN!r}; unchanged")
        return lines

    def _remove_workspace(self) -> list[str]:
        from gitstate.agents import plugin, settings, settings_file

        path = self.workspace / "hooks.json"
        loaded = settings_file.load(path)
        lines = []
        if loaded.data is not None and _is_our_named_hook(loaded.data.get(plugin.NAME)):
            data = dict(loaded.data)
            del data[plugin.NAME]
            entry = self.ledger.file(path)
            if not data and entry and entry.get("created"):
                loaded.target.unlink()
                lines.append(f"agy: removed {path} (we had created it; only our hook was in it)")
            else:
                settings_file.save(loaded, data)
                lines.append(f"agy: removed the named hook {plugin.NAME!r} from {path}")
            self.ledger.forget_file(path)
        lines += settings.remove_skill(self.ledger, self.workspace / plugin.SKILL_PATH, "agy")
        self.ledger.remove_empty_dirs(self.workspace)
        return lines


def _is_our_named_hook(named: object) -> bool:
    from gitstate.agents.plugin import is_ours

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


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    text = (result.stderr or "").strip() or (result.stdout or "").strip()
    return text.splitlines()[-1] if text else "no output"


def doctor(place: Place) -> list[Finding]:
    return []  # agy keeps its plugins to itself: `agy plugin list` shows ours


# ---- background jobs --------------------------------------------------------------------------


class _Job:
    """agy's print mode as a job's agent (docs/jobs.md); the jobs' default."""

    CONVERSATION_KEYS = ("conversation_id", "conversationId")

    def argv(self, command: tuple[str, ...], skip_permissions: bool, call: Call) -> list[str]:
        argv = [*command, "-p", _option_value(call.prompt), "--output-format", "stream-json"]
        if call.model:
            argv += ["--model", call.model]
        if call.effort:
            argv += ["--effort", call.effort]
        argv += ["--print-timeout", call.timeout]
        if call.schema_path is not None:
            argv += ["--json-schema", str(call.schema_path)]
        if call.conversation:
            argv += ["--conversation", call.conversation]
        if skip_permissions:
            argv.append("--dangerously-skip-permissions")
        return argv

    def quota_argv(self, command: tuple[str, ...]) -> list[str] | None:
        return [*command, "-p", "/usage", "--output-format", "json", "--print-timeout", "60s"]

    def auth_dirs(self, home: Path) -> list[Path]:
        return [home / ".config" / "antigravity", home / ".gemini" / "antigravity-cli"]

    def result_body(self, event: dict[str, Any]) -> dict[str, Any] | None:
        inner = event.get("result")
        return inner if event.get("event") == "result" and isinstance(inner, dict) else None

    def result_fields(self, body: dict[str, Any]) -> dict[str, Any]:
        names = ("status", "response", "duration_seconds")
        return {name: body[name] for name in names if body.get(name) is not None}

    def false_alarm(self, outcome: Outcome) -> bool:
        """agy reports ERROR "not a valid artifact path" after a run whose structured answer
        is there: a known false alarm, the work itself is done."""
        return (
            outcome.status == "ERROR"
            and isinstance(outcome.structured_output, dict)
            and "not a valid artifact path" in outcome.response
        )

    def read_quota(self, text: str) -> Quota:
        """`command.data.groups` of the JSON answer, else tab-separated rows (a header row
        naming the columns, or name, used, limit, remaining, resets_at in that order)."""
        import json

        from gitstate.agents.jobs import Quota
        from gitstate.errors import Failure

        try:
            data = json.loads(text)
        except ValueError:
            data = None
        groups = _dig(data, "command", "data", "groups")
        if isinstance(groups, list):
            windows = [_window(g) for g in groups if isinstance(g, dict)]
            return Quota(TITLE, "json", windows)
        rows = [line.split("\t") for line in text.splitlines() if "\t" in line]
        if rows:
            head = [h.strip().lower() for h in rows[0]]
            named = any(h in ("window", "name", "used", "limit") for h in head)
            body = rows[1:] if named else rows
            keys = head if named else ["name", "used", "limit", "remaining", "resets_at"]
            cells = (dict(zip(keys, (c.strip() for c in row), strict=False)) for row in body)
            return Quota(TITLE, "text", [_window(cell) for cell in cells])
        raise Failure(f"could not read {TITLE}'s usage answer", hint=text.strip()[:200] or None)


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _window(group: dict[str, Any]) -> dict[str, Any]:
    """One usage window under the neutral names, from whichever of agy's names it carries."""

    def pick(*names: str) -> Any:
        for name in names:
            if group.get(name) not in (None, ""):
                return group[name]
        return None

    return {
        "name": pick("window", "name", "label", "title", "id"),
        "used": pick("used", "usage", "consumed"),
        "limit": pick("limit", "quota", "max", "total"),
        "remaining": pick("remaining", "left", "available"),
        "percent": pick("percent", "percentage", "used_percent", "pct"),
        "resets_at": pick("resets_at", "reset_at", "resetsAt", "reset", "resets"),
    }


def _option_value(prompt: str) -> str:
    """The prompt as the value of agy's `-p`. A Go-style flag parser takes the next argument
    as the value whatever it begins with, but agy's parser is not documented: a prompt that
    begins with `-` gets a leading newline, which no parser reads as an option and the model
    reads as nothing (docs/jobs.md, "The prompt is never an option")."""
    return "\n" + prompt if prompt.startswith("-") else prompt


JOB = _Job()
