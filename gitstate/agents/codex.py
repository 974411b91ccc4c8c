"""Codex CLI, OpenAI's `codex` (docs/agents.md): a hooks.json, its hook trust, `codex exec` jobs.

Hooks (Claude Code's file shape, timeouts in seconds): SessionStart with the matcher
`startup|resume|clear|compact` (inject; Codex ignores a PreCompact hook's output, so the state
comes back after a compaction through SessionStart's `compact` source), Stop (stop guard),
PreCompact (save). Install writes `.codex/hooks.json` (project) or `$CODEX_HOME/hooks.json`
(user, `~/.codex`), the skill beside it (`.codex/skills/`, `$CODEX_HOME/skills/`: roots Codex
lists to the model), and the trust of exactly our handlers in the user's config.toml
(codex_trust.py). Jobs: `codex exec --json … -- PROMPT`, `codex exec resume … -- ID PROMPT`;
stdout is JSON lines (`thread.started`, `item.completed`, `turn.completed`, `turn.failed`).
Facts verified against codex-cli 0.171.0 (docs/agents.md names the sources).
"""

from __future__ import annotations

# The hook-facing part (codex_hook.py) is this plugin's too; `as` marks them exported.
from gitstate.agents.codex_hook import NAME as NAME
from gitstate.agents.codex_hook import PROJECT_ENV as PROJECT_ENV
from gitstate.agents.codex_hook import SESSION_KEY as SESSION_KEY
from gitstate.agents.codex_hook import after_compaction as after_compaction
from gitstate.agents.codex_hook import block as block
from gitstate.agents.codex_hook import claims as claims
from gitstate.agents.codex_hook import inject as inject
from gitstate.agents.codex_hook import inject_skipped as inject_skipped
from gitstate.agents.codex_hook import memory_key as memory_key
from gitstate.agents.codex_hook import nothing as nothing
from gitstate.agents.codex_hook import project_dir as project_dir
from gitstate.agents.codex_hook import stop_looping as stop_looping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from gitstate.agents.base import Finding, Place
    from gitstate.agents.jobs import Call, Outcome, Quota

TITLE = "Codex CLI"
HOME_ENV = "CODEX_HOME"  # Codex's user directory, ~/.codex when unset
HOOKS_FILE = "hooks.json"
# The version from which hooks are on by default and `[features] hooks` is the key (before it,
# `codex_hooks = true` turned them on; openai/codex PR #19012 and the 0.130.0 deprecation).
HOOKS_DEFAULT_ON = (0, 130)

# (event, action, timeout in seconds, matcher). Inject only reads a file; stop-guard and
# pre-compact may save a snapshot.
HOOKS = (
    ("SessionStart", "inject", 10, "startup|resume|clear|compact"),
    ("Stop", "stop-guard", 30, None),
    ("PreCompact", "pre-compact", 30, None),
)

CONTEXT = """\
# agy-state

This workspace may keep its task state in `STATE.md`, saved in git by `git agy-state`.
When a session starts the sheet is injected: resume from its first next step without
re-exploring. Change it only with small patches (`git agy-state patch`, see the agy-state
skill), at milestones and before /compact, never every turn.
`git agy-state status` shows where the task stands.
"""


# ---- the plugin files and install -------------------------------------------------------------


def hook_entries(command: str) -> dict[str, Any]:
    """`{event: [{matcher?, hooks: [handler]}]}`, as hooks.json holds it under `hooks`. No
    statusMessage: every handler field enters the trust hash, the fewer the steadier."""
    from gitstate.agents.plugin import hook_command

    entries: dict[str, Any] = {}
    for event, action, timeout, matcher in HOOKS:
        handler: dict[str, Any] = {
            "type": "command",
            "command": hook_command(command, NAME, action),
            "timeout": timeout,
        }
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [handler]
        entries[event] = [group]
    return entries


def plugin_files(command: str) -> dict[str, str]:
    """hooks.json, the skill and an AGENTS.md paragraph: copy them into `.codex/` (the
    paragraph into your own AGENTS.md); Codex has no plugin install of its own without a
    marketplace, so install writes the same files in place instead."""
    from gitstate.agents import plugin

    return {
        HOOKS_FILE: plugin.render({"hooks": hook_entries(command)}),
        plugin.SKILL_PATH: plugin.SKILL,
        "AGENTS.md": CONTEXT,
    }


def user_dir(place: Place) -> Path:
    from gitstate.agents import settings

    return settings.user_dir(place.home, NAME, HOME_ENV)


def agent_dir(place: Place, scope: str) -> Path:
    """`.codex` in the project, or the user's (`$CODEX_HOME`, else `~/.codex`)."""
    return place.project / ".codex" if scope == "project" else user_dir(place)


def install(place: Place, scope: str, command: str) -> list[str]:
    from gitstate.agents import codex_trust, settings, toml_table

    base = agent_dir(place, scope)
    config = user_dir(place) / "config.toml"
    # A config.toml we could not edit is refused before anything is written: hooks without
    # their trust would be installed for nothing.
    toml_table.loads(codex_trust.read(config), str(config))
    from gitstate.agents import personal, plugin

    existed = (base / HOOKS_FILE).exists()
    skill_existed = (base / plugin.SKILL_PATH).exists()
    lines, data, path = settings.install(
        place.ledger, base, TITLE, hook_entries(command), HOOKS_FILE
    )
    lines += codex_trust.grant(place.ledger, config, codex_trust.ours(path, data), TITLE)
    if scope == "project":
        # Personal like Claude's and Gemini's (docs/hooks.md, "Personal and shared files"):
        # our trust entries pin this file's absolute path and this machine's interpreter.
        lines += personal.settings_lines(place, path, existed, TITLE)
        lines += personal.skill_lines(place, base / plugin.SKILL_PATH, skill_existed)
        text = codex_trust.read(config)
        if not codex_trust.project_trusted(text, place.project, str(config)):
            lines.append(
                f"note: Codex loads {path} only in a trusted project: answer its trust prompt "
                f"once, or add to {config}:"
            )
            lines += [
                f"  {line}"
                for line in codex_trust.project_trust_lines(place.project).split("\n")
                if line
            ]
    return [*lines, f"{TITLE}: start a new session to load them (check: git agy-state doctor)"]


def uninstall(place: Place, scope: str) -> list[str]:
    from gitstate.agents import codex_trust, settings, settings_file, toml_table

    base = agent_dir(place, scope)
    path = base / HOOKS_FILE
    config = user_dir(place) / "config.toml"
    entries = codex_trust.ours(path, settings_file.load(path).data)
    try:
        lines = codex_trust.revoke(place.ledger, config, entries, TITLE)
    except toml_table.Unparsable as exc:  # the hooks still go: they are what runs
        lines = [f"note: {exc.message}: remove our [hooks.state] entries from it by hand"]
    lines += settings.uninstall(place.ledger, base, TITLE, HOOKS_FILE)
    if scope == "project":
        lines += [f"{TITLE}: {line}" for line in place.unexclude(path)]
    return lines


# ---- doctor -----------------------------------------------------------------------------------


def doctor(place: Place) -> list[Finding]:
    """Where our hooks are installed: Codex on PATH with hooks on, the project trusted (for
    project hooks) and each of our handlers trusted; nothing when none is installed."""
    from gitstate.agents import codex_trust, settings_file

    config = user_dir(place) / "config.toml"
    installed = []
    for scope in ("project", "user"):
        path = agent_dir(place, scope) / HOOKS_FILE
        try:
            entries = codex_trust.ours(path, settings_file.load(path).data)
        except Exception as exc:  # a hooks file we cannot read is a finding, not an abort
            from gitstate.errors import AgyError

            if not isinstance(exc, AgyError):
                raise
            return [(f"{TITLE} {scope} hooks", "warn", exc.message, exc.hint)]
        if entries:
            installed.append((scope, path, entries))
    if not installed:
        return []
    text = codex_trust.read(config)
    findings = [_version_and_features(text, config)]
    for scope, path, entries in installed:
        if scope == "project" and not codex_trust.project_trusted(text, place.project, str(config)):
            lines = codex_trust.project_trust_lines(place.project).strip().replace("\n", "; ")
            findings.append(
                (
                    f"{TITLE} project trust",
                    "warn",
                    f"{path}: the project is not trusted in {config}, so Codex does not load it",
                    f"answer Codex's trust prompt in this project once, or add: {lines}",
                )
            )
        untrusted = [e for e in entries if not codex_trust.trusted(text, e, str(config))]
        if untrusted:
            findings.append(
                (
                    f"{TITLE} {scope} hooks",
                    "warn",
                    f"{path}: {len(untrusted)} of our {len(entries)} hooks are not trusted in "
                    f"{config}: Codex skips them",
                    f"git agy-state install --agent codex --scope {scope} (writes their "
                    "trusted_hash), or review and trust them in Codex's /hooks",
                )
            )
        else:
            findings.append(
                (
                    f"{TITLE} {scope} hooks",
                    "ok",
                    f"{path}: our {len(entries)} hooks are trusted",
                    None,
                )
            )
    return findings


def _version_and_features(config_text: str, config: Path) -> Finding:
    """Hooks are on by default from 0.130; before, `[features] codex_hooks = true` turns them on;
    `hooks = false` (or the old key) in the user's config turns them off. Read from the config
    and the version (_version): doctor changes nothing of Codex's."""
    import shutil

    from gitstate.agents import toml_table

    codex = shutil.which("codex")
    if codex is None:
        return (TITLE, "warn", "codex is not on PATH: the hooks are installed for nobody yet", None)
    version = _version(codex)
    features = toml_table.get(config_text, ("features",), str(config))
    features = features if isinstance(features, dict) else {}
    off = [key for key in ("hooks", "codex_hooks") if features.get(key) is False]
    if off:
        return (
            TITLE,
            "fail",
            f"{config} turns Codex's hooks off ([features] {off[0]} = false)",
            "set [features] hooks = true there (codex_hooks = true before 0.130)",
        )
    named = ".".join(map(str, version)) if version else "of unknown version"
    if version and version < HOOKS_DEFAULT_ON and features.get("codex_hooks") is not True:
        return (
            TITLE,
            "warn",
            f"codex {named} runs hooks only with [features] codex_hooks = true",
            f"add to {config}: [features] codex_hooks = true (or upgrade Codex)",
        )
    return (TITLE, "ok", f"codex {named} at {codex}: hooks on", None)


def _version(codex: str) -> tuple[int, ...] | None:
    """The installed version: from the npm package's package.json when `codex` is its launcher
    (reading a file starts nothing), else `codex --version` (any codex invocation may set up
    helper files in its home; a version query is the least of them)."""
    import json
    import os
    import re
    import subprocess

    launcher = os.path.realpath(codex)
    package = os.path.join(os.path.dirname(os.path.dirname(launcher)), "package.json")
    text = ""
    try:
        with open(package, encoding="utf-8") as handle:
            found = json.load(handle)
        if isinstance(found, dict) and found.get("name") == "@openai/codex":
            text = str(found.get("version", ""))
    except (OSError, ValueError):
        pass
    if not text:
        try:
            text = subprocess.run(
                [codex, "--version"],
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=20,
                check=False,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
    parts = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(part) for part in parts.groups()) if parts else None


# ---- background jobs --------------------------------------------------------------------------


class _Job:
    """`codex exec` as a job's agent (docs/jobs.md): JSON lines on stdout, the last agent
    message is the response; `--output-schema` makes it JSON of the job's result schema."""

    CONVERSATION_KEYS = ("thread_id",)

    def argv(self, command: tuple[str, ...], skip_permissions: bool, call: Call) -> list[str]:
        """Options first, then `--` and the operands (the thread to resume, the prompt), so the
        prompt is never read as an option (docs/jobs.md). `exec resume` takes no `--sandbox`:
        the config override works for both."""
        import json

        argv = [*command, "exec"]
        if call.conversation:
            argv.append("resume")
        argv += ["--json", "--skip-git-repo-check"]
        if skip_permissions:
            argv.append("--dangerously-bypass-approvals-and-sandbox")
        else:
            argv += ["-c", 'sandbox_mode="workspace-write"']
        if call.model:
            argv += ["--model", call.model]
        if call.effort:
            argv += ["-c", f"model_reasoning_effort={json.dumps(call.effort)}"]
        if call.schema_path is not None:
            argv += ["--output-schema", str(_strict_schema(call.schema_path))]
        operands = [call.conversation] if call.conversation else []
        return [*argv, "--", *operands, call.prompt]

    def quota_argv(self, command: tuple[str, ...]) -> list[str] | None:
        return None  # `codex exec` reports no usage windows

    def read_quota(self, text: str) -> Quota:
        from gitstate.errors import Failure

        raise Failure(f"{TITLE} reports no usage windows")  # no quota_argv: never asked

    def auth_dirs(self, home: Path) -> list[Path]:
        import os
        from pathlib import Path

        return [Path(os.environ[HOME_ENV]) if os.environ.get(HOME_ENV) else home / ".codex"]

    def result_body(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """An agent message (the last one is the answer: a Stop hook's continuation adds
        another) or a failed turn, as a result body in the vocabulary of result_fields."""
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                text = item["text"]
                return {"status": "SUCCESS", "response": text, "structured_output": _json(text)}
            return None
        if kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            return {"status": "ERROR", "response": str(message or "the turn failed")}
        return None

    def result_fields(self, body: dict[str, Any]) -> dict[str, Any]:
        names = ("status", "response")
        return {name: body[name] for name in names if body.get(name) is not None}

    def false_alarm(self, outcome: Outcome) -> bool:
        return False  # no known false alarm


def _json(text: str) -> Any:
    """The answer as JSON when it is a JSON object (a run with --output-schema), else None."""
    import json

    if not text.lstrip().startswith("{"):
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _strict_schema(path: Path) -> Path:
    """Codex sends the schema as OpenAI's strict structured output, which wants every property
    required and no others: a copy beside the job's schema says so (the optional fields then
    come back empty)."""
    import json

    from gitstate.agents import settings_file

    schema = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        schema = {**schema, "required": list(schema["properties"])}
        schema["additionalProperties"] = False
    strict = path.with_name(path.stem + ".codex-strict.json")
    settings_file.write_atomic(strict, json.dumps(schema, indent=2) + "\n")
    return strict


JOB = _Job()
