"""Codex CLI end to end (gitstate/agents/codex.py): `install --agent codex` puts hooks and their
trust where Codex reads them, a fake `codex exec` (tests/fakes/fake_codex.py: the payloads,
answers, trust and loop rules of codex-cli 0.171.0) then injects the state at a session's start,
blocks the stop once while a step is `[>]`, saves at compaction; doctor says what is missing;
`job run` with agy.agent = codex runs `codex exec`. One opt-in test runs the real codex against
a local fake model server.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, meta, run_json, submit

__all__ = ["agents", "jobs_repo"]  # fixtures, used by name

FAKE = Path(__file__).parent / "fakes" / "fake_codex.py"


@pytest.fixture
def codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `codex` on PATH; returns the file its runs are reported to."""
    folder = tmp_path / "codex-bin"
    folder.mkdir()
    _script(folder / "codex")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    report = tmp_path / "codex-report.jsonl"
    monkeypatch.setenv("FAKE_CODEX_REPORT", str(report))
    return report


def _script(path: Path) -> None:
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def run(repo: Repo, report: Path, *args: str, **env: str) -> dict[str, Any]:
    """`codex exec --json …` in the repository; what the fake saw and did."""
    proc = subprocess.run(
        ["codex", "exec", *args],
        cwd=repo.path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    found: dict[str, Any] = json.loads(report.read_text().splitlines()[-1])
    found["stdout"] = proc.stdout
    return found


def config(home: Path) -> Path:
    return home / ".codex" / "config.toml"


def trust_project(repo: Repo, home: Path) -> None:
    """What answering Codex's "trust this folder?" prompt writes (never install)."""
    path = config(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text() if path.exists() else ""
    path.write_text(text + f'\n[projects."{repo.path}"]\ntrust_level = "trusted"\n')


def doctor(cli: Any) -> dict[str, dict[str, Any]]:
    body = json.loads(cli("doctor", "--json").stdout)
    return {c["name"]: c for c in body["checks"]}


def in_progress(cli: Any) -> None:
    result = cli(
        "patch", "--set", "goal=Make the pool retry", "--todo", "write the test", "--start", "1"
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("scope", ["project", "user"])
def test_installed_codex_resumes_and_is_guarded(
    repo: Repo, cli: Any, codex: Path, hermetic: Path, scope: str
) -> None:
    result = cli("install", "--agent", "codex", "--scope", scope)
    assert result.exit_code == 0, result.output
    assert "trusted our 3 hooks" in result.output
    if scope == "project":
        assert 'trust_level = "trusted"' in result.output  # said, not written
        assert "projects" not in config(hermetic).read_text()
        trust_project(repo, hermetic)
    in_progress(cli)

    first = run(repo, codex, "--json", "--", "hi")
    (context,) = first["context"]
    assert "Resume from the first next step" in context
    assert context.endswith(repo.view.read_text() + "=== END agy-state notes ===\n")
    assert len(first["blocks"]) == 1 and '"write the test"' in first["blocks"][0]
    assert first["stops"] == 2 and first["looped"] is False  # stop_hook_active: let go
    assert first["skipped_untrusted"] == 0

    again = run(repo, codex, "resume", "--json", "--", first["thread_id"], "go on")
    assert len(again["context"]) == 1 and len(again["blocks"]) == 1  # source resume injects

    assert cli("patch", "--done", "1", "--verify", "pytest passes").exit_code == 0
    done = run(repo, codex, "resume", "--json", "--", first["thread_id"], "and now?")
    assert done["blocks"] == [] and done["stops"] == 1  # the task is finished: let go

    assert doctor(cli)[f"Codex CLI {scope} hooks"]["status"] == "ok"
    result = cli("uninstall", "--agent", "codex", "--scope", scope)
    assert result.exit_code == 0, result.output
    assert run(repo, codex, "--json", "--", "hi")["ran"] == 0


def test_untrusted_hooks_do_not_run_and_doctor_says_how(
    repo: Repo, cli: Any, codex: Path, hermetic: Path
) -> None:
    cli("install", "--agent", "codex", "--scope", "user")
    config(hermetic).unlink()  # the trust gone (a changed command would do the same)
    in_progress(cli)
    found = run(repo, codex, "--json", "--", "hi")
    assert found["ran"] == 0 and found["skipped_untrusted"] > 0 and found["blocks"] == []
    check = doctor(cli)["Codex CLI user hooks"]
    assert check["status"] == "warn" and "3 of our 3 hooks are not trusted" in check["detail"]
    assert "install --agent codex --scope user" in check["hint"]
    cli("install", "--agent", "codex", "--scope", "user")
    assert doctor(cli)["Codex CLI user hooks"]["status"] == "ok"
    assert run(repo, codex, "--json", "--", "hi")["blocks"]


def test_an_untrusted_project_loads_no_project_hooks(
    repo: Repo, cli: Any, codex: Path, hermetic: Path
) -> None:
    cli("install", "--agent", "codex")
    in_progress(cli)
    assert run(repo, codex, "--json", "--", "hi")["ran"] == 0
    check = doctor(cli)["Codex CLI project trust"]
    assert check["status"] == "warn"
    assert f'[projects."{repo.path}"]; trust_level = "trusted"' in check["hint"]
    assert doctor(cli)["Codex CLI"]["status"] == "ok"  # the fake codex 0.171.0: hooks on


def test_hooks_turned_off_fail_doctor(repo: Repo, cli: Any, codex: Path, hermetic: Path) -> None:
    cli("install", "--agent", "codex", "--scope", "user")
    path = config(hermetic)
    path.write_text(path.read_text() + "\n[features]\nhooks = false\n")
    check = doctor(cli)["Codex CLI"]
    assert check["status"] == "fail" and "hooks = false" in check["detail"]
    assert cli("doctor").exit_code == 1
    assert run(repo, codex, "--json", "--", "hi")["ran"] == 0


def test_an_old_codex_needs_the_old_switch(
    repo: Repo, cli: Any, codex: Path, hermetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("install", "--agent", "codex", "--scope", "user")
    monkeypatch.setenv("FAKE_CODEX_VERSION", "codex-cli 0.120.3")
    check = doctor(cli)["Codex CLI"]
    assert check["status"] == "warn" and "0.120.3" in check["detail"]
    assert "codex_hooks = true" in check["hint"]
    path = config(hermetic)
    path.write_text(path.read_text() + "\n[features]\ncodex_hooks = true\n")
    assert doctor(cli)["Codex CLI"]["status"] == "ok"


def test_nothing_installed_means_no_codex_checks(repo: Repo, cli: Any, codex: Path) -> None:
    assert not [name for name in doctor(cli) if name.startswith("Codex")]


def test_compaction_saves_unsaved_edits_and_injects_again(
    repo: Repo, cli: Any, codex: Path
) -> None:
    cli("install", "--agent", "codex", "--scope", "user")
    cli("patch", "--todo", "later")
    first = run(repo, codex, "--json", "--", "hi")
    repo.view.write_text(
        repo.view.read_text().replace("## Open issues\n", "## Open issues\n- kept\n")
    )
    compacted = run(
        repo, codex, "resume", "--json", "--", first["thread_id"], "again", FAKE_CODEX_COMPACT="1"
    )
    assert compacted["compacted"] is True
    assert "- kept" in repo.git("show", "refs/agy/state:STATE.md")  # PreCompact saved it
    assert len(compacted["context"]) == 2  # SessionStart resume and compact both inject
    assert all("- kept" in text for text in compacted["context"])


def test_a_job_runs_codex_exec(jobs_repo: Repo, agents: Agents, cli: Any) -> None:
    _script(agents.bin / "codex")
    jobs_repo.git("config", "agy.agent", "codex")
    job = submit(cli, "-do it", "--effort", "low")["job_id"]
    [row] = finish(cli, job)
    assert row["state"] == "done" and row["contract_ok"] is True, row
    argv = agents.starts()[0]["argv"][1:]
    assert argv[:2] == ["exec", "--json"] and "resume" not in argv
    assert argv[-2] == "--" and argv[-1].startswith("-do it")  # never read as an option
    assert 'model_reasoning_effort="low"' in argv
    bypass = "--dangerously-bypass-approvals-and-sandbox" in argv  # agy.skipPermissions (default)
    assert bypass is not ('sandbox_mode="workspace-write"' in argv)
    strict = json.loads(Path(argv[argv.index("--output-schema") + 1]).read_text())
    assert sorted(strict["required"]) == sorted(strict["properties"])
    thread = meta(jobs_repo, job)["conversation_id"]
    run_json(cli, "job", "feedback", job, "again")
    finish(cli, job)
    argv = agents.starts()[1]["argv"][1:]
    assert argv[:2] == ["exec", "resume"] and argv[-3:-1] == ["--", thread]


# ---- the real codex, opt in --------------------------------------------------------------------

REAL = os.environ.get("AGY_E2E_CODEX") or shutil.which("codex")


class _FakeModel(BaseHTTPRequestHandler):
    """The Responses API as far as `codex exec` needs it: one streamed message per request."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._send(200, "application/json", json.dumps({"data": [], "object": "list"}).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        type(self).requests.append(body)
        n = len(type(self).requests)
        usage = {
            "input_tokens": 10,
            "output_tokens": 2,
            "total_tokens": 12,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        text = f"reply {n}"
        wanted = body.get("text", {}).get("format", {})
        if wanted.get("type") == "json_schema":  # --output-schema: an answer of that schema
            kinds = {"boolean": True, "array": []}
            properties = wanted["schema"]["properties"].items()
            text = json.dumps({k: kinds.get(v.get("type"), "done") for k, v in properties})
        message = {
            "type": "message",
            "role": "assistant",
            "id": f"m{n}",
            "content": [{"type": "output_text", "text": text}],
        }
        events = [
            ("response.created", {"response": {"id": f"r{n}"}}),
            ("response.output_item.done", {"item": message}),
            ("response.completed", {"response": {"id": f"r{n}", "usage": usage}}),
        ]
        data = "".join(
            f"event: {kind}\ndata: {json.dumps({'type': kind, **body})}\n\n"
            for kind, body in events
        )
        self._send(200, "text/event-stream", data.encode())

    def _send(self, code: int, kind: str, data: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def model_server() -> Iterator[str]:
    _FakeModel.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    thread.join(10)


@pytest.mark.skipif(
    not REAL or not os.environ.get("AGY_E2E_CODEX"),
    reason="opt in: AGY_E2E_CODEX=/path/to/codex runs the real Codex CLI",
)
@pytest.mark.parametrize("scope", ["project", "user"])
def test_the_real_codex_runs_our_trusted_hooks(
    repo: Repo, cli: Any, hermetic: Path, model_server: str, scope: str
) -> None:
    """codex exec against a local fake model: the state injected as a developer message, the
    stop blocked once (the reason comes back as the next prompt), then let go."""
    home = hermetic / ".codex"
    home.mkdir()
    config(hermetic).write_text(
        'model = "fake-model"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
        f'name = "fake"\nbase_url = "{model_server}"\nenv_key = "FAKE_KEY"\n'
        'wire_api = "responses"\n'
    )
    assert cli("install", "--agent", "codex", "--scope", scope).exit_code == 0
    if scope == "project":
        trust_project(repo, hermetic)
    in_progress(cli)
    assert REAL is not None
    proc = subprocess.run(
        [REAL, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-s", "read-only", "hi"],
        cwd=repo.path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "CODEX_HOME": str(home), "FAKE_KEY": "x"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    first, *rest = _FakeModel.requests
    assert "Resume from the first next step" in json.dumps(first["input"])
    assert len(rest) == 1, "one continuation after the block, then the stop is let go"
    assert "write the test" in json.dumps(rest[0]["input"][-1])
    messages = [
        json.loads(line)["item"]["text"]
        for line in proc.stdout.splitlines()
        if '"agent_message"' in line
    ]
    assert messages == ["reply 1", "reply 2"]


@pytest.mark.skipif(
    not REAL or not os.environ.get("AGY_E2E_CODEX"),
    reason="opt in: AGY_E2E_CODEX=/path/to/codex runs the real Codex CLI",
)
def test_a_job_runs_the_real_codex_exec(
    jobs_repo: Repo, cli: Any, hermetic: Path, model_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = hermetic / ".codex"
    home.mkdir()
    config(hermetic).write_text(
        'model = "fake-model"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
        f'name = "fake"\nbase_url = "{model_server}"\nenv_key = "FAKE_KEY"\n'
        'wire_api = "responses"\n'
    )
    monkeypatch.setenv("FAKE_KEY", "x")
    assert REAL is not None
    jobs_repo.git("config", "agy.agent", REAL)
    jobs_repo.git("config", "agy.agentKind", "codex")
    job = submit(cli, "-do it")["job_id"]
    [row] = finish(cli, job)
    assert row["state"] == "done" and row["contract_ok"] is True, row
    first = _FakeModel.requests[0]
    assert first["text"]["format"]["strict"] is True
    assert "-do it" in json.dumps(first["input"][-1])
    run_json(cli, "job", "feedback", job, "again")
    [row] = finish(cli, job)
    assert row["state"] == "done", row
    assert "again" in json.dumps(_FakeModel.requests[-1]["input"][-1])


USERS_CONFIG = """# my codex settings — 中文
model = "gpt-5.5"

[features]
hooks = true  # on

[mcp_servers.other]
command = "other-server"
args = ["--x"]

[hooks.state."/elsewhere/hooks.json:stop:0:0"]
trusted_hash = "sha256:0000"
enabled = false
"""


@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize("text", [USERS_CONFIG, USERS_CONFIG.rstrip("\n"), ""])
def test_the_users_config_toml_comes_back_byte_for_byte(
    repo: Repo, cli: Any, hermetic: Path, scope: str, text: str
) -> None:
    path = config(hermetic)
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode())
    assert cli("install", "--agent", "codex", "--scope", scope).exit_code == 0
    installed = path.read_text()
    assert installed.startswith(text) and installed.count("trusted_hash") == 3 + text.count(
        "trusted"
    )
    assert cli("install", "--agent", "codex", "--scope", scope).exit_code == 0
    assert path.read_text() == installed  # a second install changes nothing
    assert cli("uninstall", "--agent", "codex", "--scope", scope).exit_code == 0
    assert path.read_bytes() == text.encode()


def test_a_hook_the_user_disabled_stays_disabled_on_reinstall(
    repo: Repo, cli: Any, codex: Path, hermetic: Path
) -> None:
    cli("install", "--agent", "codex", "--scope", "user")
    path = config(hermetic)
    stop = next(line for line in path.read_text().splitlines() if ":stop:" in line)
    path.write_text(path.read_text().replace(stop, stop + "\nenabled = false"))
    cli("install", "--agent", "codex", "--scope", "user")
    assert stop + "\nenabled = false" in path.read_text()
    in_progress(cli)
    assert run(repo, codex, "--json", "--", "hi")["blocks"] == []  # Codex skips it


def test_a_config_toml_that_does_not_parse_is_refused_and_nothing_is_written(
    repo: Repo, cli: Any, hermetic: Path
) -> None:
    path = config(hermetic)
    path.parent.mkdir(parents=True)
    path.write_text("model = = 'x'\n")
    result = cli("install", "--agent", "codex", "--scope", "user")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and "not valid TOML" in result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.toml"]
    assert path.read_text() == "model = = 'x'\n"
