"""Agent plugin files and install/uninstall into the agents' settings (agy, Claude Code, Gemini CLI).

Settings files are written the way users and their tools write them (json.dumps with various
indents, non-ASCII text, with or without a final newline) and must come back byte for byte.
agy is a small fake CLI on PATH that records its argv and keeps a plugin registry like the
real one; nothing of ours is mocked.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from gitstate import __version__
from gitstate.agents.plugin import OURS, SKILL, SKILL_PATH
from gitstate.errors import Failure, UsageError
from gitstate.storage import launcher
from gitstate.usecases.setup import install as agent_install
from gitstate.usecases.setup.install import AGENTS, install, plugin_files, uninstall

REPO_ROOT = Path(__file__).resolve().parent.parent
CMD = "git-agy-state"

USER_CLAUDE: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": []},
    "env": {"GREETING": "héllo — 你好"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
        ],
    },
    "statusLine": {"type": "command", "command": "git-agy-state status --short"},
}

USER_GEMINI: dict[str, Any] = {
    "general": {"vimMode": True},
    "hooksConfig": {"notifications": False},
    "hooks": {
        "BeforeTool": [
            {
                "matcher": "write_file|replace",
                "hooks": [{"type": "command", "name": "guard", "command": "./guard.sh"}],
            }
        ],
        "AfterAgent": [
            {
                "hooks": [
                    {"type": "command", "name": "lint", "command": "npm run lint", "timeout": 6000}
                ]
            }
        ],
        "disabled": ["old-hook"],
    },
    "ui": {"theme": "GitHub", "customWittyPhrases": ["Ça marche", "稍等"]},
}

USER_AGY: dict[str, Any] = {
    "my-guard": {
        "PreToolUse": [
            {"matcher": "run_command", "hooks": [{"type": "command", "command": "./g.sh"}]}
        ],
        "Stop": [{"type": "command", "command": "say done", "timeout": 5}],
    }
}

USER_SETTINGS = {"claude": USER_CLAUDE, "gemini": USER_GEMINI}
EVENTS = {
    "claude": ("SessionStart", "Stop", "PreCompact"),
    "gemini": ("SessionStart", "AfterAgent", "PreCompress"),
}
ACTIONS = ("inject", "stop-guard", "pre-compact")


def dump(obj: Any, indent: int | str | None = 2, newline: bool = True) -> str:
    return json.dumps(obj, indent=indent, ensure_ascii=False) + ("\n" if newline else "")


def strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def settings_file(agent: str, scope: str, project: Path, home: Path) -> Path:
    """Where install puts our hooks: Claude Code's project hooks go to its personal file."""
    name = "settings.local.json" if (agent, scope) == ("claude", "project") else "settings.json"
    return (project if scope == "project" else home) / f".{agent}" / name


def ours(hooks: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        h
        for group in hooks.get(event, [])
        for h in group.get("hooks", [])
        if OURS.search(h["command"])
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def home(hermetic: Path) -> Path:
    return hermetic


@pytest.fixture
def no_agy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


FAKE_AGY = """\
#!{python}
# A fake agy CLI: records its argv, keeps installed plugins (copies) like `agy plugin` does.
import json, os, shutil, sys
from pathlib import Path

state = Path(os.environ["FAKE_AGY_STATE"])
with (state / "argv.log").open("a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if os.environ.get("FAKE_AGY_BROKEN"):
    print("error: plugin registry is locked", file=sys.stderr)
    sys.exit(3)
installed = state / "plugins"
args = sys.argv[1:]
if args[:2] == ["plugin", "install"] and len(args) == 3:
    src = Path(args[2])
    try:
        name = json.loads((src / "plugin.json").read_text())["name"]
        json.loads((src / "hooks.json").read_text())
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: invalid plugin: {{exc}}", file=sys.stderr)
        sys.exit(1)
    if (installed / name).exists():
        print(f"error: plugin {{name}} is already installed", file=sys.stderr)
        sys.exit(1)
    shutil.copytree(src, installed / name)
    print(f"installed {{name}}")
elif args[:2] == ["plugin", "uninstall"] and len(args) == 3:
    if not (installed / args[2]).exists():
        print(f"error: plugin {{args[2]}} is not installed", file=sys.stderr)
        sys.exit(1)
    shutil.rmtree(installed / args[2])
else:
    print("usage: agy plugin install|uninstall", file=sys.stderr)
    sys.exit(64)
"""


class FakeAgy:
    def __init__(self, root: Path) -> None:
        self.state = root / "agy-state"
        (self.state / "plugins").mkdir(parents=True)
        self.bin = root / "agy-bin"
        self.bin.mkdir()
        script = self.bin / "agy"
        script.write_text(FAKE_AGY.format(python=sys.executable))
        script.chmod(0o755)

    def calls(self) -> list[list[str]]:
        log = self.state / "argv.log"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]

    def installed(self, name: str = "agy-state") -> Path | None:
        path = self.state / "plugins" / name
        return path if path.exists() else None


@pytest.fixture
def fake_agy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAgy:
    agy = FakeAgy(tmp_path)
    monkeypatch.setenv("PATH", str(agy.bin))
    monkeypatch.setenv("FAKE_AGY_STATE", str(agy.state))
    return agy


# ---- the generated files ------------------------------------------------------------------


class TestPluginFiles:
    def test_every_json_file_is_strict_json(self) -> None:
        for agent in AGENTS:
            for rel, text in plugin_files(agent).items():
                if rel.endswith(".json"):
                    strict_json(text)
                    assert text.endswith("}\n")

    def test_agy_plugin_is_a_named_hook_with_flat_handler_arrays(self) -> None:
        files = plugin_files("agy")
        assert set(files) == {"plugin.json", "hooks.json", SKILL_PATH}
        assert json.loads(files["plugin.json"]) == {
            "name": "agy-state",
            "version": __version__,
            "description": json.loads(files["plugin.json"])["description"],
        }
        hooks = json.loads(files["hooks.json"])
        assert list(hooks) == ["agy-state"]
        named = hooks["agy-state"]
        assert list(named) == ["PreInvocation", "Stop"]
        for event, action in (("PreInvocation", "inject"), ("Stop", "stop-guard")):
            (handler,) = named[event]
            assert set(handler) == {"type", "command", "timeout"}  # agy drops other keys
            assert handler["type"] == "command"
            assert handler["command"] == f"git-agy-state hook {action} --agent agy"
            assert isinstance(handler["timeout"], int) and 1 <= handler["timeout"] <= 60

    def test_claude_plugin_has_manifest_hooks_and_skill(self) -> None:
        files = plugin_files("claude")
        assert set(files) == {".claude-plugin/plugin.json", "hooks/hooks.json", SKILL_PATH}
        manifest = json.loads(files[".claude-plugin/plugin.json"])
        assert (manifest["name"], manifest["version"]) == ("agy-state", __version__)
        hooks = json.loads(files["hooks/hooks.json"])["hooks"]
        assert list(hooks) == list(EVENTS["claude"])
        assert hooks["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
        for event, action in zip(EVENTS["claude"], ACTIONS, strict=True):
            (group,) = hooks[event]
            (handler,) = group["hooks"]
            assert handler["command"] == f"git-agy-state hook {action} --agent claude"
            assert handler["type"] == "command"
            assert 1 <= handler["timeout"] <= 60  # seconds

    def test_gemini_extension_has_manifest_context_hooks_and_skill(self) -> None:
        files = plugin_files("gemini")
        assert set(files) == {
            "gemini-extension.json",
            "hooks/hooks.json",
            SKILL_PATH,
            "GEMINI.md",
        }
        manifest = json.loads(files["gemini-extension.json"])
        assert manifest["name"] == "agy-state" and manifest["version"] == __version__
        assert manifest["contextFileName"] == "GEMINI.md"
        assert "hooks" not in manifest  # extension hooks live in hooks/hooks.json only
        hooks = json.loads(files["hooks/hooks.json"])["hooks"]
        assert list(hooks) == list(EVENTS["gemini"])
        for event, action in zip(EVENTS["gemini"], ACTIONS, strict=True):
            (group,) = hooks[event]
            (handler,) = group["hooks"]
            assert handler["command"] == f"git-agy-state hook {action} --agent gemini"
            assert handler["name"] == f"agy-state-{action}"
            assert 1000 <= handler["timeout"] <= 60000  # milliseconds

    def test_command_prefix_is_used_verbatim(self) -> None:
        files = plugin_files("claude", "/opt/tools/bin/git-agy-state")
        hooks = json.loads(files["hooks/hooks.json"])["hooks"]
        assert hooks["Stop"][0]["hooks"][0]["command"] == (
            "/opt/tools/bin/git-agy-state hook stop-guard --agent claude"
        )

    def test_unknown_agent_is_a_usage_error(self) -> None:
        with pytest.raises(UsageError, match="unknown agent 'aider'"):
            plugin_files("aider")

    def test_skill_front_matter_and_rules(self) -> None:
        lines = SKILL.splitlines()
        assert lines[0] == "---" and lines[1] == "name: agy-state"
        assert lines[2].startswith("description: ") and ": " not in lines[2][len("description: ") :]
        assert lines.index("---", 1) == 3
        assert len(lines) < 120
        for needle in (
            "--done 1 --verify",
            "--start",
            "--block 2 --reason",
            "--todo",
            "--add ",
            "--set ",
            "--ops -",
            "[>]",
            "[ ]",
            "[!]",
            "[x]",
            " | verified: ",
            " | reason: ",
            "｜驗證：",
            "｜原因：",
            "git status",
            "git agy-state status",
            "git agy-state check",
            "git agy-state show",
            "git agy-state log",
            "/clear",
            "/compact",
            "Not every turn",
            "transcripts",
            "secrets",
        ):
            assert needle in SKILL, needle
        for heading in (
            "Goal",
            "Done",
            "Changed files",
            "Open issues",
            "Key data",
            "Tried and failed",
            "Next steps",
        ):
            assert f"- {heading}" in SKILL, heading

    def test_committed_hooks_dir_matches_the_generator(self) -> None:
        for agent in AGENTS:
            base = REPO_ROOT / "hooks" / agent
            on_disk = {
                p.relative_to(base).as_posix(): p.read_text(encoding="utf-8")
                for p in base.rglob("*")
                if p.is_file()
            }
            assert on_disk == plugin_files(agent), f"hooks/{agent} drifted: run hooks/generate.py"

    def test_write_plugin_dirs_writes_every_file_and_drops_stale_ones(self, tmp_path: Path) -> None:
        stale = tmp_path / "claude" / "hooks" / "old.json"
        stale.parent.mkdir(parents=True)
        stale.write_text("{}")
        (tmp_path / "agy" / "gone").mkdir(parents=True)
        assert agent_install.main(["--write-hooks-dir", str(tmp_path)]) == 0
        for agent in AGENTS:
            for rel, text in plugin_files(agent).items():
                assert (tmp_path / agent / rel).read_text(encoding="utf-8") == text
        assert not stale.exists()
        assert not (tmp_path / "agy" / "gone").exists()


# ---- Claude Code and Gemini CLI settings ------------------------------------------------------


LAYOUTS = [
    pytest.param(2, True, id="indent2"),
    pytest.param(4, True, id="indent4"),
    pytest.param(3, False, id="indent3-no-newline"),
    pytest.param("\t", True, id="tabs"),
    pytest.param(None, False, id="one-line"),
]


@pytest.mark.parametrize("agent", ["claude", "gemini"])
@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize(("indent", "newline"), LAYOUTS)
def test_round_trip_keeps_the_users_file_byte_for_byte(
    agent: str, scope: str, indent: int | str | None, newline: bool, project: Path, home: Path
) -> None:
    path = settings_file(agent, scope, project, home)
    path.parent.mkdir(parents=True)
    original = dump(USER_SETTINGS[agent], indent, newline)
    path.write_text(original, encoding="utf-8")

    lines = install(agent, scope, project, home, CMD)

    installed = path.read_text(encoding="utf-8")
    data = strict_json(installed)
    assert installed.endswith("\n") == newline
    assert installed == dump(data, indent, newline)  # the file's own layout
    assert {k: v for k, v in data.items() if k != "hooks"} == {
        k: v for k, v in USER_SETTINGS[agent].items() if k != "hooks"
    }
    for event, action in zip(EVENTS[agent], ACTIONS, strict=True):
        (handler,) = ours(data["hooks"], event)
        assert handler["command"] == f"{CMD} hook {action} --agent {agent}"
    for event, groups in USER_SETTINGS[agent]["hooks"].items():
        assert data["hooks"][event][: len(groups)] == groups  # the user's come first, untouched
    assert any(str(path) in line for line in lines)

    lines = uninstall(agent, scope, project, home)

    assert path.read_text(encoding="utf-8") == original
    assert any("removed our hooks" in line for line in lines)


def test_crlf_file_round_trips(project: Path, home: Path) -> None:
    path = settings_file("claude", "project", project, home)
    path.parent.mkdir(parents=True)
    original = dump(USER_CLAUDE).replace("\n", "\r\n").encode()
    path.write_bytes(original)
    install("claude", "project", project, home, CMD)
    assert b"\r\n" in path.read_bytes() and b"\n" not in path.read_bytes().replace(b"\r\n", b"")
    uninstall("claude", "project", project, home)
    assert path.read_bytes() == original


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_install_twice_is_installing_once(agent: str, project: Path, home: Path) -> None:
    path = settings_file(agent, "project", project, home)
    path.parent.mkdir(parents=True)
    path.write_text(dump(USER_SETTINGS[agent]), encoding="utf-8")
    install(agent, "project", project, home, CMD)
    once = path.read_bytes()
    lines = install(agent, "project", project, home, CMD)
    assert path.read_bytes() == once
    assert any("unchanged" in line for line in lines)
    for event in EVENTS[agent]:
        assert len(ours(json.loads(once)["hooks"], event)) == 1


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_reinstall_with_another_command_replaces_ours_in_place(
    agent: str, project: Path, home: Path
) -> None:
    path = settings_file(agent, "user", project, home)
    path.parent.mkdir(parents=True)
    path.write_text(dump(USER_SETTINGS[agent]), encoding="utf-8")
    install(agent, "user", project, home, CMD)
    first = json.loads(path.read_text())
    # the user adds a hook after ours; a reinstall must not jump over it
    stop_event = EVENTS[agent][1]
    first["hooks"][stop_event].append({"hooks": [{"type": "command", "command": "afterwards"}]})
    path.write_text(dump(first))

    install(agent, "user", project, home, "/venv/bin/python -m gitstate")

    data = json.loads(path.read_text())
    for event, action in zip(EVENTS[agent], ACTIONS, strict=True):
        (handler,) = ours(data["hooks"], event)
        assert handler["command"] == f"/venv/bin/python -m gitstate hook {action} --agent {agent}"
    assert data["hooks"][stop_event][-1]["hooks"][0]["command"] == "afterwards"
    positions = [
        i for i, g in enumerate(data["hooks"][stop_event]) if OURS.search(g["hooks"][0]["command"])
    ]
    assert positions == [len(data["hooks"][stop_event]) - 2]


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_the_command_install_writes_is_ours_through_upgrade_reinstall_and_uninstall(
    agent: str, project: Path, home: Path
) -> None:
    """The real command (storage/launcher.py:hook_command, not a stand-in): an earlier version's
    `-I -m gitstate` entries become it in place, installing it again changes nothing, and
    uninstall gives the user's file back: each step needs OURS to know both forms."""
    real = launcher.hook_command()
    old = f"{shlex.quote(sys.executable)} -I -m gitstate"  # what versions before it wrote
    path = settings_file(agent, "project", project, home)
    path.parent.mkdir(parents=True)
    original = dump(USER_SETTINGS[agent])
    path.write_text(original, encoding="utf-8")
    install(agent, "project", project, home, old)

    install(agent, "project", project, home, real)

    data = json.loads(path.read_text())
    for event, action in zip(EVENTS[agent], ACTIONS, strict=True):
        (handler,) = ours(data["hooks"], event)
        assert handler["command"] == f"{real} hook {action} --agent {agent}"
    once = path.read_bytes()
    lines = install(agent, "project", project, home, real)
    assert path.read_bytes() == once and any("unchanged" in line for line in lines)
    uninstall(agent, "project", project, home)
    assert path.read_text(encoding="utf-8") == original


def test_install_creates_what_is_missing_and_uninstall_removes_exactly_that(
    project: Path, home: Path
) -> None:
    lines = install("claude", "project", project, home, CMD)
    settings = project / ".claude" / "settings.local.json"
    skill = project / ".claude" / "skills" / "agy-state" / "SKILL.md"
    assert json.loads(settings.read_text()) == {"hooks": agent_install.hook_entries("claude", CMD)}
    assert skill.read_text() == SKILL
    assert any("wrote the skill" in line for line in lines)

    uninstall("claude", "project", project, home)

    assert list(project.iterdir()) == []  # .claude was ours: gone with everything in it
    assert not (agent_install.data_dir(home) / "installed.json").exists()


def test_uninstall_keeps_a_directory_the_user_had(project: Path, home: Path) -> None:
    (project / ".gemini").mkdir()
    (project / ".gemini" / "GEMINI.md").write_text("mine\n")
    install("gemini", "project", project, home, CMD)
    uninstall("gemini", "project", project, home)
    assert sorted(p.name for p in (project / ".gemini").iterdir()) == ["GEMINI.md"]


@pytest.mark.parametrize(
    "user",
    [
        pytest.param({"hooks": {}}, id="empty-hooks"),
        pytest.param({"hooks": {"Stop": []}}, id="empty-event"),
        pytest.param({}, id="empty-object"),
    ],
)
def test_empty_containers_the_user_had_survive(user: Any, project: Path, home: Path) -> None:
    path = settings_file("claude", "user", project, home)
    path.parent.mkdir(parents=True)
    original = dump(user, indent=2)
    path.write_text(original)
    install("claude", "user", project, home, CMD)
    assert ours(json.loads(path.read_text())["hooks"], "Stop")
    uninstall("claude", "user", project, home)
    assert path.read_text() == original


def test_user_hooks_that_look_alike_are_not_ours(project: Path, home: Path) -> None:
    user = {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "git-agy-state status"}]},
                {"hooks": [{"type": "command", "command": "my-git-agy-state-hook-wrapper"}]},
                {"hooks": [{"type": "prompt", "prompt": "is the work done?"}]},
                "not even an object",
            ]
        }
    }
    path = settings_file("claude", "project", project, home)
    path.parent.mkdir(parents=True)
    path.write_text(dump(user))
    install("claude", "project", project, home, CMD)
    uninstall("claude", "project", project, home)
    assert json.loads(path.read_text()) == user


def test_our_handler_inside_a_users_group_is_removed_alone(project: Path, home: Path) -> None:
    mixed = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "notify-send done"},
                        {"type": "command", "command": "'/opt/git-agy-state' hook stop-guard"},
                    ]
                }
            ]
        }
    }
    path = settings_file("claude", "project", project, home)
    path.parent.mkdir(parents=True)
    path.write_text(dump(mixed))
    uninstall("claude", "project", project, home)
    assert json.loads(path.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
    }


@pytest.mark.parametrize(
    ("text", "why"),
    [
        pytest.param('{"model": "opus",}\n', "not valid JSON", id="trailing-comma"),
        pytest.param('{\n  // my settings\n  "a": 1\n}\n', "hold comments", id="comment"),
        pytest.param("[1, 2]\n", "top level is a list", id="list"),
        pytest.param('{"hooks": [1]}\n', "hooks is a list, not a object", id="hooks-list"),
        pytest.param('{"hooks": {"Stop": {}}}\n', "hooks.Stop is a", id="event-object"),
        pytest.param('{"a": 1, "a": 2}\n', "key 'a' twice", id="duplicate-key"),
    ],
)
def test_a_settings_file_we_cannot_use_is_refused_untouched(
    text: str, why: str, project: Path, home: Path
) -> None:
    path = settings_file("claude", "project", project, home)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(Failure) as caught:
        install("claude", "project", project, home, CMD)
    assert str(path) in caught.value.message and why in caught.value.message
    assert "left it untouched" in caught.value.message
    assert path.read_text() == text
    assert not (project / ".claude" / "skills").exists()


def test_non_utf8_settings_are_refused(project: Path, home: Path) -> None:
    path = settings_file("gemini", "project", project, home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(Failure, match="not UTF-8"):
        install("gemini", "project", project, home, CMD)
    assert path.read_bytes() == b'{"a": "\xff"}'


def test_hand_formatted_file_is_rewritten_and_says_so(project: Path, home: Path) -> None:
    path = settings_file("claude", "project", project, home)
    path.parent.mkdir(parents=True)
    path.write_text('{ "model" :  "opus",\n      "env": {"A": "1"} }')
    lines = install("claude", "project", project, home, CMD)
    assert any("standard JSON layout" in line for line in lines)
    data = json.loads(path.read_text())
    assert data["model"] == "opus" and data["env"] == {"A": "1"}


def test_symlinked_settings_are_written_through_and_keep_their_mode(
    project: Path, home: Path, tmp_path: Path
) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text(dump(USER_CLAUDE))
    real.chmod(0o640)
    link = settings_file("claude", "user", project, home)
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    install("claude", "user", project, home, CMD)
    assert link.is_symlink()
    assert ours(json.loads(real.read_text())["hooks"], "Stop")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    uninstall("claude", "user", project, home)
    assert link.is_symlink() and real.read_text() == dump(USER_CLAUDE)


def test_gemini_notes_hooks_switched_off(project: Path, home: Path) -> None:
    path = settings_file("gemini", "user", project, home)
    path.parent.mkdir(parents=True)
    path.write_text(dump({"hooksConfig": {"enabled": False}}))
    lines = install("gemini", "user", project, home, CMD)
    assert any("hooksConfig.enabled" in line and "false" in line for line in lines)
    assert json.loads(path.read_text())["hooksConfig"] == {"enabled": False}  # not ours to flip


def test_claude_config_dir_is_respected_for_user_scope(
    project: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    install("claude", "user", project, home, CMD)
    assert (tmp_path / "claude-config" / "settings.json").is_file()
    assert not (home / ".claude").exists()


def test_a_foreign_agy_state_skill_is_left_alone(project: Path, home: Path) -> None:
    skill = project / ".claude" / "skills" / "agy-state" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: agy-state\n---\nnode state-check.mjs check\n")
    lines = install("claude", "project", project, home, CMD)
    assert any("left" in line and "another tool" in line for line in lines)
    uninstall("claude", "project", project, home)
    assert skill.read_text().endswith("node state-check.mjs check\n")


def test_bad_scope_and_agent_are_usage_errors(project: Path, home: Path) -> None:
    with pytest.raises(UsageError, match="unknown scope"):
        install("claude", "system", project, home, CMD)
    with pytest.raises(UsageError, match="unknown agent"):
        uninstall("all", "user", project, home)


# ---- agy ----------------------------------------------------------------------------------


def test_agy_without_agy_on_path_writes_the_workspace_hooks_file(
    no_agy: None, project: Path, home: Path
) -> None:
    hooks_file = project / ".agents" / "hooks.json"
    hooks_file.parent.mkdir()
    original = dump(USER_AGY, indent=4)
    hooks_file.write_text(original)

    lines = install("agy", "project", project, home, CMD)

    data = strict_json(hooks_file.read_text())
    assert data["my-guard"] == USER_AGY["my-guard"]
    assert data["agy-state"] == json.loads(plugin_files("agy")["hooks.json"])["agy-state"]
    assert (project / ".agents" / SKILL_PATH).read_text() == SKILL
    assert any("not on PATH" in line for line in lines)
    assert any("git agy-state install --agent agy" in line for line in lines)

    uninstall("agy", "project", project, home)

    assert hooks_file.read_text() == original
    assert not (project / ".agents" / "skills").exists()


def test_agy_workspace_file_we_created_goes_away(no_agy: None, project: Path, home: Path) -> None:
    install("agy", "project", project, home, CMD)
    assert json.loads((project / ".agents" / "hooks.json").read_text())["agy-state"]
    install("agy", "project", project, home, CMD)  # idempotent
    uninstall("agy", "project", project, home)
    assert list(project.iterdir()) == []


def test_agy_user_scope_without_agy_writes_the_plugin_and_says_what_to_run(
    no_agy: None, project: Path, home: Path
) -> None:
    lines = install("agy", "user", project, home, "/x/git-agy-state")
    plugin = home / ".local" / "share" / "agy-state" / "agy-plugin"
    for rel, text in plugin_files("agy", "/x/git-agy-state").items():
        assert (plugin / rel).read_text() == text
    assert f"  agy plugin install {plugin}" in lines
    assert not (project / ".agents").exists()

    lines = uninstall("agy", "user", project, home)
    assert not plugin.exists()
    assert any("agy plugin uninstall agy-state" in line for line in lines)


def test_agy_on_path_installs_the_plugin(fake_agy: FakeAgy, project: Path, home: Path) -> None:
    lines = install("agy", "project", project, home, "/x/git-agy-state")
    plugin = agent_install.data_dir(home) / "agy-plugin"
    assert fake_agy.calls() == [["plugin", "install", str(plugin)]]
    installed = fake_agy.installed()
    assert installed is not None
    hooks = json.loads((installed / "hooks.json").read_text())
    assert (
        hooks["agy-state"]["Stop"][0]["command"] == "/x/git-agy-state hook stop-guard --agent agy"
    )
    assert any(f"ran agy plugin install {plugin}" in line for line in lines)
    assert not (project / ".agents").exists()

    # already installed: the fake refuses a second install, so we replace it
    install("agy", "project", project, home, "/y/git-agy-state")
    assert fake_agy.calls()[1:] == [
        ["plugin", "install", str(plugin)],
        ["plugin", "uninstall", "agy-state"],
        ["plugin", "install", str(plugin)],
    ]
    hooks = json.loads((installed / "hooks.json").read_text())
    assert hooks["agy-state"]["Stop"][0]["command"].startswith("/y/git-agy-state ")

    lines = uninstall("agy", "user", project, home)
    assert fake_agy.calls()[-1] == ["plugin", "uninstall", "agy-state"]
    assert fake_agy.installed() is None
    assert not plugin.exists()
    assert any("ran agy plugin uninstall agy-state" in line for line in lines)


def test_agy_plugin_replaces_an_earlier_workspace_install(
    tmp_path: Path, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no agy yet
    install("agy", "project", project, home, CMD)
    assert (project / ".agents" / "hooks.json").exists()

    agy = FakeAgy(tmp_path / "later")
    monkeypatch.setenv("PATH", str(agy.bin))
    monkeypatch.setenv("FAKE_AGY_STATE", str(agy.state))
    lines = install("agy", "project", project, home, CMD)

    assert agy.installed() is not None
    assert not (project / ".agents").exists()  # no second copy of the hooks to fire twice
    assert any("removed" in line for line in lines)


def test_agy_failing_is_reported_and_the_plugin_stays_written(
    fake_agy: FakeAgy, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGY_BROKEN", "1")
    with pytest.raises(Failure) as caught:
        install("agy", "user", project, home, CMD)
    plugin = agent_install.data_dir(home) / "agy-plugin"
    assert "exit 3" in caught.value.message and "registry is locked" in caught.value.message
    assert caught.value.hint is not None and f"agy plugin install {plugin}" in caught.value.hint
    assert (plugin / "plugin.json").is_file()


def test_agy_uninstall_when_nothing_is_installed_is_calm(
    fake_agy: FakeAgy, project: Path, home: Path
) -> None:
    lines = uninstall("agy", "project", project, home)
    assert fake_agy.calls() == [["plugin", "uninstall", "agy-state"]]
    assert any("exited 1" in line and "not installed" in line for line in lines)


def test_agy_foreign_named_hook_is_replaced_and_said(
    no_agy: None, project: Path, home: Path
) -> None:
    peer = {
        "agy-state": {"Stop": [{"type": "command", "command": "node state-check.mjs stop-guard"}]}
    }
    path = project / ".agents" / "hooks.json"
    path.parent.mkdir()
    path.write_text(dump(peer))
    lines = install("agy", "project", project, home, CMD)
    assert any("node state-check.mjs stop-guard" in line for line in lines)
    assert json.loads(path.read_text())["agy-state"]["PreInvocation"]


def test_xdg_data_home_decides_where_the_agy_plugin_goes(
    no_agy: None, project: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    install("agy", "user", project, home, CMD)
    assert (tmp_path / "data" / "agy-state" / "agy-plugin" / "plugin.json").is_file()
    assert os.listdir(tmp_path / "data") == ["agy-state"]


def test_a_lost_ledger_still_uninstalls_cleanly(project: Path, home: Path) -> None:
    path = settings_file("gemini", "project", project, home)
    path.parent.mkdir(parents=True)
    original = dump(USER_GEMINI)
    path.write_text(original)
    install("gemini", "project", project, home, CMD)
    (agent_install.data_dir(home) / "installed.json").unlink()
    uninstall("gemini", "project", project, home)
    assert path.read_text() == original  # the containers we emptied went with our entries


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_settings_directory_is_a_failure(project: Path, home: Path) -> None:
    path = settings_file("claude", "project", project, home)
    path.parent.mkdir(parents=True)
    path.write_text(dump(USER_CLAUDE))
    path.parent.chmod(0o500)
    try:
        with pytest.raises(Failure, match="cannot write"):
            install("claude", "project", project, home, CMD)
    finally:
        path.parent.chmod(0o700)
    assert path.read_text() == dump(USER_CLAUDE)


def test_a_settings_path_that_cannot_be_read_is_a_failure(project: Path, home: Path) -> None:
    (project / ".claude").write_text("a file where a directory should be\n")
    with pytest.raises(Failure, match=r"settings\.json: cannot read it"):
        install("claude", "project", project, home, CMD)
    assert (project / ".claude").read_text() == "a file where a directory should be\n"


def test_the_skills_examples_run_against_the_real_cli(repo: Any, cli: Any) -> None:
    block = SKILL.split("```sh\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    commands = [line for line in block.splitlines() if "git agy-state patch" in line]
    assert len(commands) >= 8
    start = cli("patch", "--set", "goal=g", *[f"--todo={s}" for s in "abcd"])
    assert start.exit_code == 0, start.stderr
    for line in commands:
        feed, _, command = line.rpartition("|")
        args = shlex.split(command, comments=True)
        assert args[:2] == ["git", "agy-state"], line
        stdin = shlex.split(feed)[1] if feed else None
        result = cli(*args[2:], input=stdin)
        assert result.exit_code == 0, f"{line}\n{result.stderr}"
    assert cli("check").exit_code == 0
