"""The agent CLIs as plugins (gitstate/agents/): every registered agent provides every
capability, each is recognised from its own payload, answers in its own shape, and installs and
uninstalls leaving the user's files byte for byte as they were. Driven by the registry, so an
agent added there (docs/hooks.md, "Adding an agent CLI") is tested here without a new test.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitstate import agents
from gitstate.agents import plugin
from gitstate.agents.base import ACTIONS
from gitstate.errors import UsageError
from gitstate.hooks import agent as hook_runtime
from gitstate.usecases.setup import install as agent_install

REGISTERED = [pytest.param(module, id=module.NAME) for module in agents.plugins()]

# Each agent's real payload shapes (docs/hooks.md): what the CLI sends on the events we use.
PAYLOADS: dict[str, list[dict[str, Any]]] = {
    "agy": [
        {
            "conversationId": "c-1",
            "workspacePaths": ["file:///work/p"],
            "invocationNum": 1,
            "model": "gemini-3-pro",
        },
        {"conversationId": "c-1", "workspacePaths": ["/work/p"], "executionNum": 1},
    ],
    "claude": [
        {
            "session_id": "s-1",
            "transcript_path": "/home/u/.claude/projects/p/s-1.jsonl",
            "cwd": "/work/p",
            "hook_event_name": "SessionStart",
            "source": "startup",
        },
        {
            "session_id": "s-1",
            "transcript_path": "/t.jsonl",
            "cwd": "/work/p",
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        },
        {"session_id": "s-1", "hook_event_name": "PreCompact", "trigger": "auto", "cwd": "/p"},
    ],
    "gemini": [
        {
            "session_id": "g-1",
            "transcript_path": "/home/u/.gemini/tmp/chats/g-1.json",
            "cwd": "/work/p",
            "hook_event_name": "SessionStart",
            "timestamp": "2026-01-02T03:04:05Z",
            "source": "startup",
        },
        {
            "session_id": "g-1",
            "cwd": "/work/p",
            "hook_event_name": "AfterAgent",
            "timestamp": "2026-01-02T03:04:05Z",
            "prompt": "hi",
            "prompt_response": "done",
            "stop_hook_active": False,
        },
        {"session_id": "g-1", "hook_event_name": "PreCompress", "timestamp": "t", "cwd": "/p"},
    ],
    # Codex CLI 0.171.0 (the input schemas in its binary): Stop and PreCompact carry turn_id.
    "codex": [
        {
            "session_id": "019a-c",
            "turn_id": "t-2",
            "transcript_path": None,
            "cwd": "/work/p",
            "hook_event_name": "Stop",
            "model": "gpt-5.5",
            "permission_mode": "bypassPermissions",
            "stop_hook_active": False,
            "last_assistant_message": "done",
        },
        {
            "session_id": "019a-c",
            "turn_id": "t-3",
            "transcript_path": "/home/u/.codex/sessions/2026/12/02/rollout-x.jsonl",
            "cwd": "/work/p",
            "hook_event_name": "PreCompact",
            "model": "gpt-5.5",
            "trigger": "auto",
        },
    ],
}


def test_names_are_unique_and_every_agent_has_payload_samples() -> None:
    assert len(set(agents.NAMES)) == len(agents.NAMES) == len(agents.plugins())
    assert set(PAYLOADS) == set(agents.NAMES), "add the new agent's payloads to PAYLOADS"


@pytest.mark.parametrize("module", REGISTERED)
def test_every_agent_provides_every_capability(module: Any) -> None:
    for name in ("NAME", "TITLE", "SESSION_KEY"):
        assert isinstance(getattr(module, name), str) and getattr(module, name), name
    assert module.PROJECT_ENV is None or (
        isinstance(module.PROJECT_ENV, str) and module.PROJECT_ENV
    )
    for name in (
        "claims",
        "project_dir",
        "inject_skipped",
        "stop_looping",
        "memory_key",
        "nothing",
        "inject",
        "block",
        "hook_entries",
        "plugin_files",
        "install",
        "uninstall",
        "doctor",
    ):
        assert callable(getattr(module, name)), name
    assert agents.get(module.NAME) is module
    for action in ACTIONS:
        json.dumps(module.nothing(action))
    assert "the text" in json.dumps(module.inject("the text"))
    assert "the reason" in json.dumps(module.block("the reason"))
    if module.JOB is not None:
        assert module.NAME in agents.job_kinds()
        for name in ("argv", "quota_argv", "auth_dirs", "result_body", "result_fields"):
            assert callable(getattr(module.JOB, name)), name
        assert all(isinstance(key, str) for key in module.JOB.CONVERSATION_KEYS)


@pytest.mark.parametrize("module", REGISTERED)
def test_hook_entries_run_only_our_actions_for_this_agent(module: Any) -> None:
    text = json.dumps(module.hook_entries("/opt/bin/git-agy-state"))
    commands = [c for c in _strings(json.loads(text)) if "hook " in c]
    assert commands, "an agent must wire at least one hook"
    for command in commands:
        assert plugin.OURS.search(command), command
        action = command.split(" hook ", 1)[1].split()[0]
        assert action in ACTIONS
        assert command == plugin.hook_command("/opt/bin/git-agy-state", module.NAME, action)
    files = module.plugin_files(plugin.DEFAULT_COMMAND)
    assert files[plugin.SKILL_PATH] == plugin.SKILL
    for rel, body in files.items():
        if rel.endswith(".json"):
            json.loads(body)


@pytest.mark.parametrize("name", agents.NAMES)
def test_each_agent_is_detected_from_its_own_payloads(name: str) -> None:
    for payload in PAYLOADS[name]:
        assert agents.detect_agent(payload) == name, payload


HOOK_FACING = (
    "NAME",
    "SESSION_KEY",
    "PROJECT_ENV",
    "claims",
    "project_dir",
    "inject_skipped",
    "stop_looping",
    "memory_key",
    "after_compaction",
    "nothing",
    "inject",
    "block",
)


@pytest.mark.parametrize("name", agents.NAMES)
def test_each_plugin_is_its_hook_module_for_the_hook_facing_part(name: str) -> None:
    """A hook process sees `<name>_hook.py`, install and jobs see `<name>.py`: the same
    objects, so the two can never answer differently."""
    hook, full = agents.find(name), agents.get(name)
    assert hook is not None and hook is not full
    for attr in HOOK_FACING:
        assert getattr(full, attr) is getattr(hook, attr), attr
    assert not hasattr(hook, "install") and not hasattr(hook, "JOB")


@pytest.mark.parametrize("action", ["inject", "stop-guard"])
@pytest.mark.parametrize("name", agents.NAMES)
def test_a_hook_named_by_its_agent_loads_neither_plugins_nor_other_agents(
    name: str, action: str, hermetic: Path, tmp_path: Path
) -> None:
    """The installed hooks pass `--agent`: that agent's hook module is all of gitstate/agents/
    the hook process loads (no plugin module, no other agent's)."""
    project = tmp_path / "p"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    sent = {**PAYLOADS[name][0], "cwd": str(project)}
    if "workspacePaths" in sent:
        sent["workspacePaths"] = [str(project)]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitstate", "hook", action, "--agent", name],
        cwd=project,
        input=json.dumps(sent),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    loaded = {m for m in modules if m.startswith("gitstate.agents.")}
    assert f"gitstate.agents.{name}_hook" in loaded
    assert loaded <= {f"gitstate.agents.{name}_hook", "gitstate.agents.session_payload"}


def test_unknown_agent_and_no_payload() -> None:
    assert agents.detect(None) is None and agents.detect({}) is None
    assert agents.detect({"something": "else"}) is None
    assert agents.find("aider") is None and agents.find(None) is None
    with pytest.raises(UsageError, match="unknown agent 'aider'"):
        agents.get("aider")
    with pytest.raises(UsageError, match="no job adapter"):
        agents.job_adapter("aider")
    with pytest.raises(UsageError, match="no job adapter"):
        agents.job_adapter("gemini")


@pytest.mark.parametrize("name", agents.NAMES)
def test_each_agent_gets_its_own_nothing_answer(
    name: str, hermetic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the hook runtime itself: a repository with no STATE.md, each agent's payload
    (its project field pointing there), every action: the answer is that agent's `nothing`."""
    project = tmp_path / "p"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    module = agents.get(name)
    for payload in PAYLOADS[name]:
        sent = {**payload, "cwd": str(project)}
        if "workspacePaths" in sent:
            sent["workspacePaths"] = [str(project)]
        for action in ACTIONS:
            code = hook_runtime.run([action], stdin=io.StringIO(json.dumps(sent)))
            out = capsys.readouterr().out
            assert code == 0
            assert json.loads(out) == module.nothing(action), (action, sent)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


# ---- install and uninstall, byte for byte ----------------------------------------------------


def _tree(*roots: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and directory (None) under the roots."""
    found: dict[str, bytes | None] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            found[str(path)] = path.read_bytes() if path.is_file() else None
    return found


@pytest.fixture
def place(hermetic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no agy on PATH: its file routes, not its CLI
    project = tmp_path / "project"
    project.mkdir()
    (hermetic / ".local" / "share").mkdir(parents=True, exist_ok=True)
    return project, hermetic


@pytest.mark.parametrize("scope", agent_install.SCOPES)
@pytest.mark.parametrize("name", agents.NAMES)
def test_install_then_uninstall_leaves_every_file_as_it_was(
    name: str, scope: str, place: tuple[Path, Path]
) -> None:
    project, home = place
    data = agent_install.data_dir(home)
    before = _tree(project, home)
    lines = agent_install.install(name, scope, project, home, "/opt/bin/git-agy-state")
    assert lines and all(isinstance(line, str) for line in lines)
    installed = _tree(project, home)
    created = [Path(p) for p, body in installed.items() if body is not None and p not in before]
    assert created, f"{name} {scope}: install wrote nothing"
    assert agent_install.install(name, scope, project, home, "/opt/bin/git-agy-state")
    assert _tree(project, home) == installed, "a second install changed something"
    agent_install.uninstall(name, scope, project, home)
    assert _tree(project, home) == before, f"{name} {scope}: uninstall left something behind"

    # Now with the user's own files where install writes JSON (our data dir aside: it is ours).
    theirs = [p for p in created if p.suffix == ".json" and data not in p.parents]
    for number, path in enumerate(theirs):
        path.parent.mkdir(parents=True, exist_ok=True)
        mine = {"user": {"n": number, "text": "héllo — 你好"}, "list": [1, 2]}
        path.write_text(json.dumps(mine, indent=4, ensure_ascii=False), encoding="utf-8")
    seeded = _tree(project, home)
    agent_install.install(name, scope, project, home, "/opt/bin/git-agy-state")
    for path in theirs:
        assert json.loads(path.read_text(encoding="utf-8"))["user"]["text"] == "héllo — 你好"
    agent_install.uninstall(name, scope, project, home)
    assert _tree(project, home) == seeded, f"{name} {scope}: the user's files changed"


def test_the_committed_hooks_dir_holds_exactly_the_registered_agents() -> None:
    hooks = Path(__file__).resolve().parent.parent / "hooks"
    folders = {p.name for p in hooks.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders == set(agents.NAMES)


def test_the_generator_writes_every_registered_agents_plugin(tmp_path: Path) -> None:
    """`python -m gitstate.usecases.setup.install --write-hooks-dir DIR`, which hooks/generate.py
    runs on hooks/: one folder per registered agent, its plugin files as they are."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gitstate.usecases.setup.install",
            "--write-hooks-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout
    assert {p.name for p in tmp_path.iterdir()} == set(agents.NAMES)
    for name in agents.NAMES:
        for rel, text in agent_install.plugin_files(name).items():
            assert (tmp_path / name / rel).read_text(encoding="utf-8") == text


# ---- what the registry answers for the hooks and the jobs, per agent ---------------------------


@pytest.mark.parametrize("name", agents.NAMES)
def test_each_agent_says_whether_an_inject_follows_a_compaction(name: str) -> None:
    """A session's start after a compaction gets no memory core (hooks/memory.py); the agent's
    module says which start that is, and the registry asks it."""
    module = agents.get(name)
    for payload in PAYLOADS[name]:
        assert module.after_compaction(payload) is False, payload
        assert agents.after_compaction(module, payload) is False
        if "source" in payload:  # a session start: the same start after a compaction
            compacted = {**payload, "source": "compact"}
            assert agents.detect(compacted) is agents.find(name)
            assert module.after_compaction(compacted) is True
            assert agents.after_compaction(module, compacted) is True
    # With no agent known (plain CLI mode), any agent's word counts.
    assert agents.after_compaction(None, {"source": "compact"}) is any(
        m.after_compaction({"source": "compact"}) for m in agents.plugins()
    )
    assert agents.after_compaction(None, {}) is False


def test_the_jobs_default_agent_is_the_first_with_a_job_adapter() -> None:
    from gitstate.jobs.document import config

    default = agents.default_job_agent()
    assert default == agents.job_kinds()[0]
    assert config.load(lambda key: None).agent == (default,)
    assert agents.job_kind_of("/opt/bin/some-wrapper") == default


QUOTA_JSON = json.dumps(
    {"command": {"data": {"groups": [{"window": "5h", "used": 3, "limit": 10}, "junk"]}}}
)
WINDOW_KEYS = ["name", "used", "limit", "remaining", "percent", "resets_at"]


@pytest.mark.parametrize("name", agents.job_kinds())
def test_each_job_adapter_reads_its_own_quota_answer(name: str) -> None:
    """`job quota` asks the agents whose CLI reports usage windows; the adapter reads the answer
    into the neutral Quota, named by the agent's display name, or refuses in a Failure."""
    from gitstate.errors import Failure

    module = agents.get(name)
    adapter = agents.job_adapter(name)
    if module not in agents.quota_agents():
        assert adapter.quota_argv((name,)) is None
        with pytest.raises(Failure):
            adapter.read_quota(QUOTA_JSON)
        return
    argv = adapter.quota_argv(("/opt/bin/" + name,))
    assert argv is not None and argv[0] == "/opt/bin/" + name
    found = adapter.read_quota(QUOTA_JSON)
    assert found.agent == module.TITLE
    assert list(found.as_json()) == ["source", "windows"]
    assert [list(window) for window in found.windows] == [WINDOW_KEYS]
    assert found.windows[0]["name"] == "5h" and found.windows[0]["used"] == 3
    with pytest.raises(Failure, match=module.TITLE):
        adapter.read_quota("no usage here")


def test_quota_is_asked_of_agy() -> None:
    assert [module.NAME for module in agents.quota_agents()] == ["agy"]
    found = agents.job_adapter("agy").read_quota("5h\t1\t9\n")
    assert (found.agent, found.source, found.windows[0]["limit"]) == ("agy", "text", "9")


@pytest.mark.parametrize("name", agents.job_kinds())
def test_each_job_adapter_judges_its_own_false_alarms(name: str) -> None:
    """An attempt's failed result may be the agent's known false alarm (the round is done);
    only agy has one: ERROR "not a valid artifact path" with its structured answer there."""
    from gitstate.agents.jobs import Outcome

    def outcome(status: str, response: str, structured: Any) -> Outcome:
        return Outcome(status, response, structured, None, None, None, None)

    adapter = agents.job_adapter(name)
    alarm = outcome("ERROR", "x: not a valid artifact path", {"summary": "done"})
    assert adapter.false_alarm(outcome("SUCCESS", "", {"summary": "done"})) is False
    assert adapter.false_alarm(outcome("ERROR", "boom", {"summary": "done"})) is False
    assert adapter.false_alarm(alarm._replace(structured_output=None)) is False
    assert adapter.false_alarm(alarm) is (name == "agy")
