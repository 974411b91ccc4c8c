"""A fake Codex CLI (`codex exec`) that runs hooks and answers the way codex-cli 0.171.0 does.

    fake_codex.py --version        (FAKE_CODEX_VERSION overrides what it prints)
    fake_codex.py exec [OPTIONS] [--] [PROMPT]
    fake_codex.py exec resume [OPTIONS] [--] SESSION_ID [PROMPT]

What it does as the real one does (docs/agents.md, "Codex CLI"):
- options as clap parses them: valued and switch options anywhere, `--` ends them, an unknown
  option is refused (exit 2); `exec resume` takes no `-s/--sandbox`;
- hooks from `$CODEX_HOME/hooks.json` (`~/.codex`) and, in a trusted project
  (`[projects."<root>"] trust_level = "trusted"` in the user config.toml), `<root>/.codex/hooks.json`;
  a hook runs only when `[hooks.state."<file>:<event>:<group>:<handler>"] trusted_hash` in the
  user config.toml is its hash (or with --dangerously-bypass-hook-trust); `[features] hooks =
  false` runs none;
- SessionStart (matcher against `source`: startup, resume; compact after a compaction) with
  the real payload; plain stdout or `hookSpecificOutput.additionalContext` becomes context,
  JSON-looking invalid stdout is a failed hook;
- Stop with `stop_hook_active` false, then, while a hook blocks (`{"decision":"block","reason"}`
  with a non-empty reason, or exit 2 with the reason on stderr), a continuation turn and Stop
  again with `stop_hook_active` true; plain text on Stop is a failed hook; more than 8 blocks
  in a row is reported as a loop (the real Codex has no cap: it would go on for ever);
- with FAKE_CODEX_COMPACT=1 a resumed session is compacted before its turn: PreCompact
  (trigger auto; its stdout never reaches the model), PostCompact, then SessionStart with
  source resume and with source compact;
- `--json` prints `thread.started`, `turn.started`, `item.completed` (agent_message) and
  `turn.completed` lines; `--output-schema FILE` must be OpenAI-strict (every property
  required, additionalProperties false) and makes the answer JSON of it; `-o FILE` gets the
  last message; a turn writes a file in the working directory and commits it (like an agent).

With FAKE_CODEX_REPORT set it appends one JSON line per run: {"argv", "thread_id", "context":
[…], "blocks": [reason…], "stops", "ran", "skipped_untrusted", "looped", "compacted",
"prompt"}; with FAKE_AGENT_LOG set, a "start" line like tests/fakes/fake_job_agent.py's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomli, tomllib's original
    import tomli as tomllib

VERSION = "codex-cli 0.171.0"
VALUED = {
    "-c",
    "--config",
    "-m",
    "--model",
    "-s",
    "--sandbox",
    "--output-schema",
    "-o",
    "--output-last-message",
    "-C",
    "--cd",
    "--color",
    "-p",
    "--profile",
    "--enable",
    "--disable",
    "--add-dir",
    "-i",
    "--image",
}
SWITCHES = {
    "--json",
    "--skip-git-repo-check",
    "--ephemeral",
    "--dangerously-bypass-approvals-and-sandbox",
    "--dangerously-bypass-hook-trust",
    "--trust",
    "--ignore-user-config",
    "--ignore-rules",
    "--last",
    "--strict-config",
}
MAX_BLOCKS = 8


class Refused(Exception):
    pass


def parse(args: list[str]) -> tuple[bool, dict[str, list[str]], set[str], list[str]]:
    resume = bool(args) and args[0] == "resume"
    if resume:
        args = args[1:]
    valued: dict[str, list[str]] = {}
    switches: set[str] = set()
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            operands += args[i + 1 :]
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
        elif resume and name in ("-s", "--sandbox"):
            raise Refused(f"error: unexpected argument '{name}' found")
        elif eq and name in VALUED:
            valued.setdefault(name, []).append(value)
        elif arg in VALUED:
            if i + 1 >= len(args):
                raise Refused(f"error: a value is required for '{arg}' but none was supplied")
            valued.setdefault(arg, []).append(args[i + 1])
            i += 1
        elif arg in SWITCHES:
            switches.add(arg)
        else:
            raise Refused(f"error: unexpected argument '{arg}' found")
        i += 1
    if len(operands) > (2 if resume else 1):
        raise Refused(f"error: unexpected argument '{operands[-1]}' found")
    return resume, valued, switches, operands


def snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def trust_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """Codex's hash of a handler, written here from the observed behaviour (not imported from
    gitstate); tests/test_codex_trust_golden.py pins it to hashes the real codex-cli 0.171.0
    reported, so the fake's trust check is not our module tested against itself."""
    normal = {
        "type": handler.get("type", "command"),
        "command": handler.get("command"),
        "timeout": handler.get("timeout", 600),
        "async": handler.get("async", False),
    }
    if "statusMessage" in handler:
        normal["statusMessage"] = handler["statusMessage"]
    group: dict[str, Any] = {"event_name": snake(event), "hooks": [normal]}
    if matcher is not None:
        group["matcher"] = matcher
    text = json.dumps(group, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class Codex:
    def __init__(self, cwd: Path, bypass_trust: bool) -> None:
        self.cwd = cwd
        self.home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        config = self.home / "config.toml"
        self.config = tomllib.loads(config.read_text()) if config.exists() else {}
        self.bypass = bypass_trust
        self.report: dict[str, Any] = {
            "context": [],
            "blocks": [],
            "stops": 0,
            "ran": 0,
            "skipped_untrusted": 0,
            "looped": False,
            "compacted": False,
        }
        files = [self.home / "hooks.json"]
        root = self._git_root()
        if root is not None:
            project = self.config.get("projects", {}).get(str(root), {})
            if project.get("trust_level") == "trusted":
                files.append(root / ".codex" / "hooks.json")
        self.files = [f for f in files if f.exists()]

    def _git_root(self) -> Path | None:
        for folder in (self.cwd, *self.cwd.parents):
            if (folder / ".git").exists():
                return folder
        return None

    def handlers(self, event: str, match: str | None) -> list[dict[str, Any]]:
        if self.config.get("features", {}).get("hooks") is False:
            return []
        state = self.config.get("hooks", {}).get("state", {})
        found = []
        for path in self.files:
            groups = json.loads(path.read_text()).get("hooks", {}).get(event, [])
            for g, group in enumerate(groups):
                matcher = group.get("matcher")
                if matcher and match is not None and not re.fullmatch(matcher, match):
                    continue
                for h, handler in enumerate(group.get("hooks", [])):
                    key = f"{path}:{snake(event)}:{g}:{h}"
                    entry = state.get(key, {})
                    trusted = entry.get("trusted_hash") == trust_hash(event, matcher, handler)
                    if not (trusted and entry.get("enabled", True)) and not self.bypass:
                        self.report["skipped_untrusted"] += 1
                        sys.stderr.write(f"warning: skipping untrusted hook {key}\n")
                        continue
                    found.append(handler)
        return found

    def run(self, event: str, payload: dict[str, Any], match: str | None) -> list[Any]:
        """Each handler's (exit code, stdout, stderr)."""
        results = []
        for handler in self.handlers(event, match):
            proc = subprocess.run(
                handler["command"],
                shell=True,
                cwd=self.cwd,
                input=json.dumps(payload),
                capture_output=True,
                text=True,
                timeout=handler.get("timeout", 600),
            )
            self.report["ran"] += 1
            results.append((proc.returncode, proc.stdout, proc.stderr))
        return results

    def session_start(self, base: dict[str, Any], source: str) -> None:
        payload = {**base, "hook_event_name": "SessionStart", "source": source}
        payload["permission_mode"] = "bypassPermissions"
        for code, out, _ in self.run("SessionStart", payload, source):
            if code != 0 or not out.strip():
                continue
            if out.lstrip().startswith(("{", "[")):
                try:
                    body = json.loads(out)
                except ValueError:
                    continue  # a failed hook: nothing injected
                context = body.get("hookSpecificOutput", {}).get("additionalContext")
                if context:
                    self.report["context"].append(context)
            else:
                self.report["context"].append(out)  # plain stdout is model context

    def compact(self, base: dict[str, Any], turn_id: str) -> None:
        for event in ("PreCompact", "PostCompact"):
            payload = {**base, "turn_id": turn_id, "hook_event_name": event, "trigger": "auto"}
            payload.pop("permission_mode", None)
            self.run(event, payload, "auto")  # stdout never reaches the model
        self.report["compacted"] = True
        self.session_start(base, "resume")
        self.session_start(base, "compact")

    def stop(self, base: dict[str, Any], turn_id: str, active: bool, last: str) -> str | None:
        """The continuation prompt when a hook blocks, else None."""
        payload = {
            **base,
            "turn_id": turn_id,
            "hook_event_name": "Stop",
            "permission_mode": "bypassPermissions",
            "stop_hook_active": active,
            "last_assistant_message": last,
        }
        self.report["stops"] += 1
        reasons = []
        for code, out, err in self.run("Stop", payload, None):
            if code == 2 and err.strip():
                reasons.append(err.strip())
            elif code == 0 and out.strip():
                try:
                    body = json.loads(out)
                except ValueError:
                    continue  # plain text on Stop: "invalid stop hook JSON output"
                blocks = body.get("decision") == "block" and str(body.get("reason", "")).strip()
                if blocks and body.get("continue") is not False:  # continue:false wins
                    reasons.append(body["reason"])
        if not reasons:
            return None
        self.report["blocks"].append("\n".join(reasons))
        return "\n".join(reasons)


def strict_problems(schema: Any) -> list[str]:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return ["schema must be an object"]
    props = schema.get("properties", {})
    problems = []
    if sorted(schema.get("required", [])) != sorted(props):
        problems.append("'required' is required to be supplied and to include every property")
    if schema.get("additionalProperties") is not False:
        problems.append("'additionalProperties' is required to be supplied and to be false")
    return problems


def answer(schema: dict[str, Any] | None, turn: int, changed: list[str]) -> str:
    if schema is None:
        return f"reply {turn}"
    body: dict[str, Any] = {}
    for name, spec in schema["properties"].items():
        kind = spec.get("type")
        if kind == "boolean":
            body[name] = True
        elif kind == "array":
            body[name] = changed if name == "files_changed" else []
        else:
            body[name] = f"fake codex turn {turn}"
    return json.dumps(body)


def emit(on: bool, obj: dict[str, Any]) -> None:
    if on:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def commit_a_file(cwd: Path, thread: str, turn: int) -> list[str]:
    if not (cwd / ".git").exists():
        return []
    name = f"codex-{thread[:8]}-{turn}.txt"
    (cwd / name).write_text(f"turn {turn}\n")
    subprocess.run(["git", "add", name], cwd=cwd, check=True, capture_output=True)
    subprocess.run(
        ["git", "commit", "-q", "-m", f"feat: codex turn {turn}"],
        cwd=cwd,
        check=True,
        capture_output=True,
    )
    return [name]


def main() -> int:
    args = sys.argv[1:]
    if args in (["--version"], ["-V"]):
        print(os.environ.get("FAKE_CODEX_VERSION", VERSION))
        return 0
    if not args or args[0] not in ("exec", "e"):
        sys.stderr.write("fake codex: only `exec` is faked\n")
        return 2
    try:
        resume, valued, switches, operands = parse(args[1:])
    except Refused as refused:
        sys.stderr.write(f"{refused}\n")
        return 2
    thread = operands.pop(0) if resume and operands else None
    prompt = operands[0] if operands else "-"
    if not sys.stdin.isatty():  # the real one appends piped stdin (and reads a `-` prompt)
        piped = sys.stdin.read()
        prompt = piped if prompt == "-" else prompt + (f"\n<stdin>\n{piped}" if piped else "")
    cwd = Path(valued.get("-C", valued.get("--cd", [os.getcwd()]))[-1]).resolve()
    if os.environ.get("FAKE_AGENT_LOG"):
        entry = {"event": "start", "t": time.time(), "pid": os.getpid(), "argv": sys.argv}
        with open(os.environ["FAKE_AGENT_LOG"], "a") as log:
            log.write(json.dumps({**entry, "cwd": str(cwd), "prompt": prompt}) + "\n")
    codex = Codex(cwd, "--dangerously-bypass-hook-trust" in switches)
    sessions = codex.home / "fake-sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    if resume:
        if thread is None or not (sessions / thread).exists():
            sys.stderr.write(f"Error: no rollout found for thread id {thread}\n")
            return 1
        turns = int((sessions / thread).read_text())
    else:
        thread, turns = str(uuid.uuid4()), 0
    json_on = "--json" in switches
    schema = None
    for path in valued.get("--output-schema", []):
        schema = json.loads(Path(path).read_text())
        problems = strict_problems(schema)
        if problems:
            emit(json_on, {"type": "thread.started", "thread_id": thread})
            emit(json_on, {"type": "turn.failed", "error": {"message": "; ".join(problems)}})
            return 1
    model = valued.get("-m", valued.get("--model", ["gpt-fake"]))[-1]
    base = {
        "session_id": thread,
        "transcript_path": None if "--ephemeral" in switches else f"/fake/rollout-{thread}.jsonl",
        "cwd": str(cwd),
        "model": model,
        "permission_mode": "bypassPermissions",
    }
    emit(json_on, {"type": "thread.started", "thread_id": thread})
    turn_id = f"turn-{turns + 1}"
    if resume and os.environ.get("FAKE_CODEX_COMPACT") == "1":
        codex.compact(base, turn_id)
    else:
        codex.session_start(base, "resume" if resume else "startup")
    emit(json_on, {"type": "turn.started"})
    turns += 1
    message = answer(schema, turns, commit_a_file(cwd, thread, turns))
    emit(
        json_on,
        {
            "type": "item.completed",
            "item": {"id": "item_0", "type": "agent_message", "text": message},
        },
    )
    active, n = False, 0
    while (reason := codex.stop(base, turn_id, active, message)) is not None:
        n += 1
        if n > MAX_BLOCKS:
            codex.report["looped"] = True
            break
        message = f"continued after: {reason[:40]}"
        emit(
            json_on,
            {
                "type": "item.completed",
                "item": {"id": f"item_{n}", "type": "agent_message", "text": message},
            },
        )
        active = True
    emit(
        json_on,
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 20},
        },
    )
    (sessions / thread).write_text(str(turns))
    for path in valued.get("-o", []) + valued.get("--output-last-message", []):
        Path(path).write_text(message)
    if not json_on:
        print(message)
    if os.environ.get("FAKE_CODEX_REPORT"):
        line = {**codex.report, "argv": sys.argv, "thread_id": thread, "prompt": prompt}
        with open(os.environ["FAKE_CODEX_REPORT"], "a") as out:
            out.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
