"""A fake agent CLI for background jobs, speaking like agy or Claude Code in print mode.

    fake_job_agent.py agy|claude [the real CLI's flags…]

It prints stream-json lines like the real one (agy: `{"type":"result",…}` or, with
`@fake envelope`, `{"event":"result","result":{…}}`; claude: system init, assistant, result
with subtype/is_error/session_id/duration_ms), keeps conversations under
$HOME/.fake-agent/ (so `--conversation ID` / `--resume ID` continue one, and an unknown id
fails), writes a file in its working directory and commits it, and obeys directives written in
the prompt, one per line:

    @fake sleep N            sleep N seconds before answering
    @fake exit N             exit with code N after the result line
    @fake status S           report status S (agy) / an error result (claude)
    @fake no-result          print no result line
    @fake envelope           agy's {"event":"result","result":{…}} shape
    @fake reject-schema-on-resume   fail (exit 2, no result) when given a schema and a conversation
    @fake ignore-term        ignore SIGTERM (only SIGKILL ends it)
    @fake child              start a child process in the same group that sleeps for a minute
    @fake no-commit          change nothing
    @fake secret             put an AWS-looking key into the answer

With FAKE_AGENT_LOG set, appends JSON lines {"event": "start"|"end"|"refused", "t", "pid",
"argv", "cwd", "prompt"}. Its flags are parsed as the real CLI parses them (see `parse`): a
prompt that begins with `-` given the wrong way is refused as an unknown option.
`--version` prints a version; agy's `-p /usage` prints a usage answer.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path


def log(event: str, argv: list[str], prompt: str | None = None) -> None:
    path = os.environ.get("FAKE_AGENT_LOG")
    if not path:
        return
    entry = {"event": event, "t": time.time(), "pid": os.getpid(), "argv": argv}
    line = json.dumps({**entry, "cwd": os.getcwd(), "prompt": prompt})
    with open(path, "a") as handle:
        handle.write(line + "\n")


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


VALUED = {
    "--output-format",
    "--model",
    "--effort",
    "--print-timeout",
    "--json-schema",
    "--conversation",
    "--resume",
}
SWITCHES = {"--verbose", "--dangerously-skip-permissions", "--version"}


class Refused(Exception):
    """A command line the real CLI's parser refuses (the message is what it prints)."""


def parse(flavour: str, args: list[str]) -> dict[str, object]:
    """The command line as the real CLI parses it.

    claude (commander): `-p`/`--print` is a switch and the prompt an operand; options and
    operands mix; anything else that begins with `-` is an unknown option (exit 1); after `--`
    everything is an operand. agy (Go-style flags): `-p` takes the next argument as its value
    whatever it begins with; `-flag=value` too; an undefined flag is refused (exit 2)."""
    opts: dict[str, object] = {"flags": set()}
    valued = VALUED if flavour == "claude" else VALUED | {"-p"}
    switches = SWITCHES | {"-p", "--print"} if flavour == "claude" else SWITCHES
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
        elif eq and name in valued:
            opts[name] = value
        elif arg in valued:
            if i + 1 >= len(args):
                raise Refused(f"error: option '{arg}' argument missing")
            opts[arg] = args[i + 1]
            i += 1
        elif arg in switches:
            opts["flags"].add("-p" if arg == "--print" else arg)  # type: ignore[union-attr]
        elif flavour == "claude":
            raise Refused(f"error: unknown option '{arg}'")
        else:
            raise Refused(f"flag provided but not defined: {arg}")
        i += 1
    if flavour == "claude":
        if len(operands) > 1:
            raise Refused(f"error: too many arguments: {operands!r}")
        if operands:
            opts["-p"] = operands[0]
    elif operands:
        raise Refused(f"unexpected arguments: {operands!r}")
    return opts


def conversations() -> Path:
    folder = Path(os.environ["HOME"]) / ".fake-agent" / "conversations"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def main() -> int:
    flavour, args = sys.argv[1], sys.argv[2:]
    if args == ["--version"]:
        print(f"fake-{flavour} 1.2.3")
        return 0
    try:
        opts = parse(flavour, args)
    except Refused as refused:
        log("refused", sys.argv)
        sys.stderr.write(f"{refused}\n")
        return 1 if flavour == "claude" else 2
    prompt = str(opts.get("-p", ""))
    if flavour == "agy" and prompt == "/usage":
        print(
            json.dumps(
                {
                    "command": {
                        "data": {
                            "groups": [
                                {
                                    "window": "5h",
                                    "used": 12,
                                    "limit": 100,
                                    "resets_at": "2026-01-02T08:00:00Z",
                                },
                                {"window": "weekly", "used": 40, "limit": 1000},
                            ]
                        }
                    }
                }
            )
        )
        return 0
    log("start", sys.argv, prompt)
    directives: dict[str, str] = {}
    for line in prompt.splitlines():
        if line.startswith("@fake "):
            name, _, value = line[len("@fake ") :].strip().partition(" ")
            directives[name] = value
    if "ignore-term" in directives:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "child" in directives:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    schema = opts.get("--json-schema")
    if schema is not None and flavour == "claude":
        json.loads(str(schema))  # Claude takes the schema as JSON text
    resume = opts.get("--resume" if flavour == "claude" else "--conversation")
    if resume is not None and schema is not None and "reject-schema-on-resume" in directives:
        sys.stderr.write("error: --json-schema cannot be used with a continued conversation\n")
        log("end", sys.argv)
        return 2
    store = conversations()
    if resume is not None:
        record = store / str(resume)
        if not record.exists():
            sys.stderr.write(f"error: no conversation {resume}\n")
            log("end", sys.argv)
            return 1
        cid, turns = str(resume), int(record.read_text()) + 1
    else:
        cid, turns = f"conv-{uuid.uuid4().hex[:12]}", 1
    (store / cid).write_text(str(turns))
    if flavour == "claude":
        emit({"type": "system", "subtype": "init", "session_id": cid, "cwd": os.getcwd()})
        emit({"type": "assistant", "message": {"role": "assistant", "content": "working"}})
    else:
        emit({"type": "init", "conversation_id": cid})
        emit({"type": "message", "role": "assistant", "text": "working"})
    if "sleep" in directives:
        time.sleep(float(directives["sleep"] or 1))
    changed: list[str] = []
    if "no-commit" not in directives:
        name = f"fake-{cid}-{turns}.txt"
        Path(name).write_text(f"turn {turns}\n")
        subprocess.run(["git", "add", name], check=True, capture_output=True)
        subprocess.run(
            ["git", "commit", "-q", "-m", f"feat: fake turn {turns}"],
            check=True,
            capture_output=True,
        )
        changed.append(name)
    text = f"did turn {turns}"
    if "secret" in directives:
        text += " with key AKIAIOSFODNN7EXAMPLF"
    structured = None
    if schema is not None:
        structured = {
            "summary": f"fake turn {turns} done",
            "files_changed": changed,
            "tests_ran": ["true"],
            "tests_passed": True,
            "acceptance_met": [],
            "blockers": [],
            "followups": [],
        }
    status = directives.get("status", "SUCCESS") or "SUCCESS"
    if "no-result" not in directives:
        usage = {"input_tokens": 100, "output_tokens": 20}
        if flavour == "claude":
            emit(
                {
                    "type": "result",
                    "subtype": "success" if status == "SUCCESS" else "error_during_execution",
                    "is_error": status != "SUCCESS",
                    "result": text,
                    "session_id": cid,
                    "duration_ms": 1500,
                    "num_turns": turns,
                    "usage": usage,
                    "structured_output": structured,
                }
            )
        else:
            body = {
                "status": status,
                "response": text,
                "structured_output": structured,
                "conversation_id": cid,
                "duration_seconds": 1.5,
                "num_turns": turns,
                "usage": usage,
            }
            if "envelope" in directives:
                emit({"event": "result", "result": body})
            else:
                emit({"type": "result", **body})
    log("end", sys.argv)
    return int(directives.get("exit") or 0)


if __name__ == "__main__":
    sys.exit(main())
