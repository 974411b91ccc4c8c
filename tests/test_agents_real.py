"""The real Claude Code and Gemini CLI, opt in (`AGY_E2E_CLAUDE=/path/to/claude`,
`AGY_E2E_GEMINI=/path/to/gemini`; docs/agents.md, "The real CLIs, opt in").

`install --agent …` runs through the CLI code, so the settings hold the command users get
(`<python> -I -c 'import gitstate.__main__' hook <event> --agent <agent>`); the real CLI then
runs it against a fake model API on 127.0.0.1 that records every request. What reaches the
model is checked: our state at the session's start, the stop blocked once with our reason and
then let go, the compaction hooks' saves; and what the CLI itself says of each hook run (its
debug output): every answer parsed, every exit status 0. Nothing leaves the machine. The fakes
of tests/fakes/fake_agent.py copy what these runs show.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo

from gitstate.storage import launcher

CLAUDE = os.environ.get("AGY_E2E_CLAUDE")
GEMINI = os.environ.get("AGY_E2E_GEMINI")

needs_claude = pytest.mark.skipif(
    not CLAUDE, reason="opt in: AGY_E2E_CLAUDE=/path/to/claude runs the real Claude Code"
)
needs_gemini = pytest.mark.skipif(
    not GEMINI, reason="opt in: AGY_E2E_GEMINI=/path/to/gemini runs the real Gemini CLI"
)

# A CLI run: start-up, a few hook processes and two model calls. Gemini CLI takes 10-15 s on a
# loaded two-core machine; the bound is for a CLI that hangs, not a measure.
RUN_TIMEOUT = 240
# A request body larger than this is refused unread (the fake reads nothing unbounded).
BODY_LIMIT = 32 << 20

GOAL = "Make the pool retry"
STEP = "write the test"
REASON_START = f'STATE.md has a step in progress: "{STEP}".'


# ---- a fake model API on loopback ---------------------------------------------------------


@dataclass
class Seen:
    path: str
    body: dict[str, Any]


@dataclass
class Model:
    """The fake API's address and the requests it received, in order."""

    url: str
    seen: list[Seen] = field(default_factory=list)

    def calls(self, marker: str) -> list[dict[str, Any]]:
        """The bodies of the requests whose path holds `marker` (the model calls)."""
        return [s.body for s in self.seen if marker in s.path]


Answer = Callable[[str, dict[str, Any], int], tuple[str, bytes]]


@contextmanager
def serve(answer: Answer) -> Iterator[Model]:
    """A threaded HTTP server on 127.0.0.1 (an ephemeral port) answering each POST with
    `answer(path, body, n)`, n counting from 1; shut down and joined on exit."""
    lock = threading.Lock()
    model = Model("")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._send("application/json", b"{}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 <= length <= BODY_LIMIT:
                self.send_error(413)
                return
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                model.seen.append(Seen(self.path, body))
                n = len(model.seen)
            self._send(*answer(self.path, body, n))

        def _send(self, kind: str, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    model.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
        assert not thread.is_alive()


def sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    return "".join(
        (f"event: {kind}\n" if kind else "") + f"data: {json.dumps(data)}\n\n"
        for kind, data in events
    ).encode()


def anthropic(path: str, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    """The Messages API: one text block, `reply N`, under a unique message id (Claude Code's
    compaction needs distinct ids)."""
    if "count_tokens" in path:
        return "application/json", json.dumps({"input_tokens": 10}).encode()
    message = {
        "id": f"msg_{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    text = f"reply {n}"
    if not body.get("stream"):
        done = {**message, "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
        return "application/json", json.dumps(done).encode()
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"message": message}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"index": 0}),
        (
            "message_delta",
            {
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 2},
            },
        ),
        ("message_stop", {}),
    ]
    return "text/event-stream", sse([(kind, {"type": kind, **data}) for kind, data in events])


def gemini_api(path: str, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    """generateContent / streamGenerateContent: one candidate, `reply N`."""
    if ":countTokens" in path:
        return "application/json", json.dumps({"totalTokens": 10}).encode()
    answer = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": f"reply {n}"}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
    }
    if ":streamGenerateContent" in path:
        return "text/event-stream", sse([(None, answer)])
    return "application/json", json.dumps(answer).encode()


# ---- shared steps -------------------------------------------------------------------------


def in_progress(cli: Any) -> None:
    result = cli("patch", "--set", f"goal={GOAL}", "--todo", STEP, "--start", "1")
    assert result.exit_code == 0, result.output


def edit_by_hand(repo: Repo) -> None:
    """A valid edit of STATE.md no snapshot holds yet (a hook that saves it says `key_data`)."""
    text = repo.view.read_text()
    assert "## Key data (verbatim)\n" in text
    repo.view.write_text(
        text.replace("## Key data (verbatim)\n", "## Key data (verbatim)\n- pool size: 8\n")
    )


def snapshots(repo: Repo) -> list[str]:
    return repo.git("log", "--format=%s", "refs/agy/state").splitlines()


def command(event: str, agent: str) -> str:
    """The command install writes for this hook: the one the CLI must have run."""
    return f"{launcher.hook_command()} hook {event} --agent {agent}"


def texts(message: dict[str, Any]) -> list[str]:
    """The text of a Messages API message (a string, or a list of content blocks)."""
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [block["text"] for block in content if block.get("type") == "text"]


def run(argv: list[str], repo: Repo, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=repo.path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        env={**os.environ, **env},
        check=False,
    )


# ---- Claude Code --------------------------------------------------------------------------


def claude(model: Model, repo: Repo, debug: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`claude --debug-file DEBUG ARGS…` against the fake, with an API key (no login) and no
    traffic but the model calls."""
    assert CLAUDE is not None
    env = {
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    return run([CLAUDE, "--debug-file", str(debug), *args], repo, env)


@needs_claude
@pytest.mark.parametrize("scope", ["project", "user"])
def test_the_real_claude_code_resumes_from_our_state_and_cannot_stop_mid_step(
    repo: Repo, cli: Any, tmp_path: Path, scope: str
) -> None:
    """`claude -p hello`: the first request carries our state as SessionStart's context; the
    Stop hook blocks once (the next request ends with our reason), the retry
    (`stop_hook_active`) is let go; every answer of ours parsed as valid hook JSON."""
    assert cli("install", "--agent", "claude", "--scope", scope).exit_code == 0
    in_progress(cli)
    view = repo.view.read_text()
    debug = tmp_path / "claude-debug.txt"
    with serve(anthropic) as model:
        proc = claude(model, repo, debug, "-p", "hello")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "reply 2"  # the answer after the block is the result

    first, second = model.calls("/v1/messages")  # exactly two: no third after the let-go
    [context] = [
        text
        for message in first["messages"]
        for text in texts(message)
        if text.startswith("SessionStart hook additional context: ")
    ]
    assert "=== BEGIN agy-state notes" in context and GOAL in context
    # as written, nothing escaped (Claude Code appends its own text after ours: skills)
    assert view + "=== END agy-state notes ===\n" in context

    last = second["messages"][-1]
    assert last["role"] == "user"
    [feedback] = texts(last)
    assert feedback.startswith("Stop hook feedback:\n" + REASON_START)
    assert '--verify "<how you checked it>"' in feedback  # quotes and brackets intact

    log = debug.read_text()
    assert f"Hook SessionStart ({command('inject', 'claude')}) provided additionalContext" in log
    assert f"Hook Stop ({command('stop-guard', 'claude')}) returned" in log
    # SessionStart, the blocking Stop and the Stop let go (`{}`): three valid JSON answers.
    assert log.count("Successfully parsed and validated hook JSON output") == 3
    assert not (repo.path / ".git" / "agy" / "hook.log").exists()


@needs_claude
def test_the_real_claude_code_compaction_saves_the_hand_edit_and_reinjects(
    repo: Repo, cli: Any, tmp_path: Path
) -> None:
    """`claude -p /compact --continue` after a session: PreCompact (trigger manual) saves the
    hand-edited STATE.md as a snapshot, exit 0; SessionStart with source compact injects
    again."""
    assert cli("install", "--agent", "claude", "--scope", "project").exit_code == 0
    in_progress(cli)
    with serve(anthropic) as model:
        assert claude(model, repo, tmp_path / "first.txt", "-p", "hello").returncode == 0
        edit_by_hand(repo)
        before = snapshots(repo)
        debug = tmp_path / "compact.txt"
        proc = claude(model, repo, debug, "-p", "/compact", "--continue")
    assert proc.returncode == 0, proc.stderr
    assert snapshots(repo) == ["save (pre-compact): key_data", *before]
    log = debug.read_text()
    assert f"PreCompact:manual [{command('pre-compact', 'claude')}] completed with status 0" in log
    assert "Hook SessionStart:compact (SessionStart) success" in log
    assert not (repo.path / ".git" / "agy" / "hook.log").exists()


# ---- Gemini CLI ---------------------------------------------------------------------------


def gemini(model: Model, repo: Repo) -> subprocess.CompletedProcess[str]:
    """`gemini --debug -m gemini-2.5-flash -p hello` against the fake, in a trusted folder.

    A model is named: with the default `auto` the router first asks a classifier model for a
    JSON verdict and retries for over a minute on anything else. `--debug` makes the CLI log
    each hook run (the command it expanded, whether it succeeded)."""
    assert GEMINI is not None
    env = {
        "GOOGLE_GEMINI_BASE_URL": model.url,
        "GEMINI_API_KEY": "dummy",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    return run([GEMINI, "--debug", "-m", "gemini-2.5-flash", "-p", "hello"], repo, env)


def gemini_user_settings(home: Path) -> None:
    """With only a base URL the auth type is "gateway", refused ("Invalid auth method
    selected."); an API key needs it named. No usage statistics, no update check."""
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    path.write_text(json.dumps(settings))


@needs_gemini
@pytest.mark.parametrize(
    ("scope", "edited"), [("project", False), ("user", False), ("project", True)]
)
def test_the_real_gemini_cli_resumes_from_our_state_and_cannot_stop_mid_step(
    repo: Repo, cli: Any, hermetic: Path, scope: str, edited: bool
) -> None:
    """`gemini -p hello`: the first request holds our `<hook_context>` (escaped by Gemini);
    PreCompress runs before each of the two model calls and succeeds (a clean view: nothing
    written; a hand edit: saved once); AfterAgent denies once with our reason, unescaped, then
    lets go."""
    gemini_user_settings(hermetic)
    assert cli("install", "--agent", "gemini", "--scope", scope).exit_code == 0
    in_progress(cli)
    if edited:
        edit_by_hand(repo)
    view = repo.view.read_text()
    before = snapshots(repo)
    with serve(gemini_api) as model:
        proc = gemini(model, repo)
    assert proc.returncode == 0, proc.stderr
    output = proc.stdout + proc.stderr

    first, second = model.calls(":streamGenerateContent")  # exactly two model calls
    [context] = [
        part["text"]
        for content in first["contents"]
        for part in content["parts"]
        if part.get("text", "").startswith("<hook_context>")
    ]
    assert GOAL in context and f"- [&gt;] {STEP}" in context
    assert view.rstrip("\n").replace("<", "&lt;").replace(">", "&gt;") in context

    last = second["contents"][-1]
    assert last["role"] == "user"
    [reason] = [part["text"] for part in last["parts"]]
    assert reason.startswith(REASON_START)
    assert '--verify "<how you checked it>"' in reason  # a deny reason is not escaped

    for event, hook in [
        ("SessionStart", "inject"),
        ("PreCompress", "pre-compact"),
        ("AfterAgent", "stop-guard"),
    ]:
        assert f"Expanding hook command: {command(hook, 'gemini')} (cwd: " in output, event
    done = {
        event: output.count(f"Hook execution for {event}: 1 hooks executed successfully")
        for event in ("SessionStart", "PreCompress", "AfterAgent")
    }
    assert done == {"SessionStart": 1, "PreCompress": 2, "AfterAgent": 2}  # PreCompress: per call
    assert snapshots(repo) == (["save (pre-compact): key_data", *before] if edited else before)
    assert not (repo.path / ".git" / "agy" / "hook.log").exists()
