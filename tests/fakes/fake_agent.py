"""A fake agent CLI that runs hooks the way Claude Code, Gemini CLI and agy do.

    fake_agent.py claude|gemini|agy WORKSPACE EVENT [--source S] [--again]

It reads the hooks the real CLI would read (Claude: ~/.claude/settings.json,
.claude/settings.json and .claude/settings.local.json; Gemini: ~/.gemini/settings.json and
.gemini/settings.json, none of them in an untrusted folder; agy: .agents/hooks.json and
installed plugins under ~/.fake-agy/plugins), runs every matching command with that CLI's
payload on stdin and a shell, applies its output rules (Gemini escapes `<` and `>` of the
SessionStart context, as Gemini CLI 0.61.0 does), and prints what the agent would do as one
JSON line: {"context": [text…], "blocked": bool, "reasons": [text…], "ran": N}.
`--again` is the loop-guard case: stop_hook_active / executionNum 2 / invocationNum 2.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

EVENTS = {
    "claude": {"start": "SessionStart", "stop": "Stop", "compact": "PreCompact"},
    "gemini": {"start": "SessionStart", "stop": "AfterAgent", "compact": "PreCompress"},
    "agy": {"start": "PreInvocation", "stop": "Stop"},
}


def settings_hooks(paths: list[Path], event: str, source: str | None) -> list[dict]:
    handlers = []
    for path in paths:
        if not path.exists():
            continue
        groups = json.loads(path.read_text()).get("hooks", {}).get(event, [])
        for group in groups:
            matcher = group.get("matcher")
            if matcher and source and not re.fullmatch(matcher, source):
                continue
            handlers.extend(h for h in group.get("hooks", []) if h.get("type") == "command")
    return handlers


def gemini_trusted(workspace: Path, home: Path) -> bool:
    """Gemini CLI's folder trust: the variable, the switch, else trustedFolders.json's longest
    rule covering the folder (TRUST_PARENT covers the rule path's parent)."""
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE", "").lower() == "true":
        return True
    user = home / ".gemini"
    try:
        settings = json.loads((user / "settings.json").read_text())
    except (OSError, ValueError):
        settings = {}
    if settings.get("security", {}).get("folderTrust", {}).get("enabled") is False:
        return True
    try:
        rules = json.loads((user / "trustedFolders.json").read_text())
    except (OSError, ValueError):
        return False
    where, best = os.path.realpath(workspace), (-1, "")
    for rule, level in rules.items():
        root = os.path.realpath(os.path.dirname(rule) if level == "TRUST_PARENT" else rule)
        if (where == root or where.startswith(root + os.sep)) and len(rule) > best[0]:
            best = (len(rule), level)
    return best[1] in ("TRUST_FOLDER", "TRUST_PARENT")


def agy_hooks(workspace: Path, event: str) -> list[dict]:
    files = [workspace / ".agents" / "hooks.json"]
    plugins = Path.home() / ".fake-agy" / "plugins"
    if plugins.is_dir():
        files += sorted(plugins.glob("*/hooks.json"))
    handlers = []
    for path in files:
        if path.exists():
            for named in json.loads(path.read_text()).values():
                if isinstance(named, dict) and named.get("enabled", True) is not False:
                    handlers.extend(named.get(event, []))
    return handlers


def main() -> int:
    agent, workspace, kind = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    source = sys.argv[sys.argv.index("--source") + 1] if "--source" in sys.argv else None
    again = "--again" in sys.argv
    event = EVENTS[agent][kind]
    home = Path.home()
    if agent == "agy":
        handlers = agy_hooks(workspace, event)
        payload: dict[str, object] = {
            "conversationId": "fake-conv",
            "workspacePaths": [str(workspace)],
        }
        if kind == "start":
            payload["invocationNum"] = 2 if again else 1
        else:
            payload["executionNum"] = 2 if again else 1
            payload["terminationReason"] = "NO_TOOL_CALL"
    else:
        folder = ".claude" if agent == "claude" else ".gemini"
        paths = [home / folder / "settings.json", workspace / folder / "settings.json"]
        if agent == "claude":
            paths.append(workspace / folder / "settings.local.json")
        trusted = agent != "gemini" or gemini_trusted(workspace, home)
        handlers = settings_hooks(paths, event, source) if trusted else []
        payload = {
            "session_id": "fake-session",
            "transcript_path": "/dev/null",
            "cwd": str(workspace),
            "hook_event_name": event,
        }
        if agent == "gemini":
            payload["timestamp"] = "2026-01-02T03:04:05Z"
        if kind == "start":
            payload["source"] = source or "startup"
        if kind == "stop":
            payload["stop_hook_active"] = again
    result: dict[str, object] = {"context": [], "blocked": False, "reasons": [], "ran": 0}
    for handler in handlers:
        timeout = handler.get("timeout", 60)
        seconds = timeout / 1000 if agent == "gemini" else timeout
        proc = subprocess.run(
            handler["command"],
            shell=True,
            cwd=workspace,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=seconds,
            env={**os.environ, "CLAUDE_PROJECT_DIR": str(workspace)},
        )
        result["ran"] = int(result["ran"]) + 1  # type: ignore[call-overload]
        if proc.returncode == 2:
            result["blocked"] = True
            result["reasons"].append(proc.stderr)  # type: ignore[union-attr]
            continue
        if proc.returncode != 0 or not proc.stdout.strip():
            continue
        body = json.loads(proc.stdout)  # every agent here wants JSON on stdout
        context = body.get("hookSpecificOutput", {}).get("additionalContext")
        if context and agent == "gemini":
            context = context.replace("<", "&lt;").replace(">", "&gt;")
        if context:
            result["context"].append(context)  # type: ignore[union-attr]
        for step in body.get("injectSteps", []):
            result["context"].append(step["ephemeralMessage"])  # type: ignore[union-attr]
        if body.get("decision") in ("block", "deny", "continue"):
            result["blocked"] = True
            result["reasons"].append(body.get("reason", ""))  # type: ignore[union-attr]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
