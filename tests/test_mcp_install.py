"""`install --agent claude|gemini|codex --mcp`: our server entry where each CLI looks for it,
nothing else touched, and uninstall gives back every file byte for byte (docs/mcp.md)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import Repo
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from support import WAIT, run_tool

from gitstate.agents import toml_table

CLAUDE_USER_STATE = {"numStartups": 3, "projects": {"/x": {"allowedTools": []}}, "userID": "é"}
OTHER_SERVER = {"command": "npx", "args": ["-y", "other-server"], "env": {"K": "v"}}
CODEX_CONFIG = (
    '# my codex settings\nmodel = "o3"  # the default\n\n[mcp_servers.other]\n'
    'command = "npx"\nargs = ["-y", "other"]\n\n[projects."/elsewhere"]\ntrust_level = "trusted"'
)


def mcp_file(agent: str, scope: str, project: Path, home: Path) -> Path:
    return {
        ("claude", "project"): project / ".mcp.json",
        ("claude", "user"): home / ".claude.json",
        ("gemini", "project"): project / ".gemini" / "settings.json",
        ("gemini", "user"): home / ".gemini" / "settings.json",
        ("codex", "project"): project / ".codex" / "config.toml",
        ("codex", "user"): home / ".codex" / "config.toml",
    }[(agent, scope)]


def entry(agent: str, path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if agent == "codex":
        return toml_table.get(text, ("mcp_servers", "agy-state"), str(path))
    return json.loads(text)["mcpServers"]["agy-state"]


def tree(*roots: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under the roots: what a round trip must keep."""
    found: dict[str, bytes | None] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for name in dirnames:
                found[os.path.join(dirpath, name)] = None
            for name in filenames:
                found[os.path.join(dirpath, name)] = Path(dirpath, name).read_bytes()
    return found


def seed(agent: str, scope: str, project: Path, home: Path) -> None:
    """The user's own file there first, in the layout their tools write."""
    path = mcp_file(agent, scope, project, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    if agent == "codex":
        path.write_text(CODEX_CONFIG, encoding="utf-8")
    elif (agent, scope) == ("claude", "user"):
        path.write_text(json.dumps(CLAUDE_USER_STATE, indent=2, ensure_ascii=False))
    else:
        data = {"mcpServers": {"other": OTHER_SERVER}, "general": {"vimMode": True}}
        path.write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")


def tool(*args: str, cwd: Path) -> list[str]:
    done = run_tool(*args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return list(json.loads(done.stdout)["actions"])


@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize("agent", ["claude", "gemini", "codex"])
@pytest.mark.parametrize("existing", [True, False], ids=["users-file", "no-file"])
def test_install_mcp_registers_our_entry_and_uninstall_gives_back_every_byte(
    repo: Repo, hermetic: Path, agent: str, scope: str, existing: bool
) -> None:
    if existing:
        seed(agent, scope, repo.path, hermetic)
    # Where the install ledger lives (its own folder goes once empty; this one is the user's).
    (hermetic / ".local" / "share").mkdir(parents=True)
    before = tree(repo.path, hermetic)

    lines = tool("install", "--agent", agent, "--scope", scope, "--mcp", cwd=repo.path)

    path = mcp_file(agent, scope, repo.path, hermetic)
    ours = entry(agent, path)
    assert ours["command"] == sys.executable
    assert ours["args"] == ["-I", "-m", "gitstate", "mcp"]
    assert ("type" in ours) == (agent == "claude")
    assert any(f"MCP server agy-state registered in {path}" in line for line in lines)
    if existing and agent != "codex" and (agent, scope) != ("claude", "user"):
        assert json.loads(path.read_text())["mcpServers"]["other"] == OTHER_SERVER
    if existing and agent == "codex":
        assert path.read_text().startswith(CODEX_CONFIG)  # ours is appended, theirs untouched

    again = tool("install", "--agent", agent, "--scope", scope, "--mcp", cwd=repo.path)
    assert any("already registered; unchanged" in line for line in again)

    lines = tool("uninstall", "--agent", agent, "--scope", scope, cwd=repo.path)

    assert any(f"removed MCP server agy-state from {path}" in line for line in lines)
    assert tree(repo.path, hermetic) == before


def test_the_registered_command_starts_a_server_that_answers(repo: Repo, hermetic: Path) -> None:
    tool("install", "--agent", "claude", "--mcp", cwd=repo.path)
    ours = entry("claude", repo.path / ".mcp.json")
    params = StdioServerParameters(
        command=ours["command"], args=ours["args"], env=dict(os.environ), cwd=str(repo.path)
    )

    async def main() -> Any:
        with anyio.fail_after(WAIT):
            async with stdio_client(params) as streams, ClientSession(*streams) as client:
                await client.initialize()
                return await client.call_tool("state_status", {})

    status = anyio.run(main)
    assert not status.is_error
    assert status.structured_content["view"] == "missing"


def test_a_foreign_entry_named_agy_state_is_left_alone(repo: Repo, hermetic: Path) -> None:
    path = repo.path / ".mcp.json"
    original = json.dumps({"mcpServers": {"agy-state": OTHER_SERVER}}, indent=2)
    path.write_text(original)
    done = run_tool("install", "--agent", "claude", "--mcp", cwd=repo.path)
    assert done.returncode == 1
    assert "already has an MCP server named agy-state" in done.stderr
    assert path.read_text() == original
    run_tool("uninstall", "--agent", "claude", cwd=repo.path)
    assert path.read_text() == original


def test_a_codex_config_that_is_not_toml_is_refused_untouched(repo: Repo, hermetic: Path) -> None:
    path = hermetic / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = \n")
    done = run_tool("install", "--agent", "codex", "--scope", "user", "--mcp", cwd=repo.path)
    assert done.returncode == 1
    assert "not valid TOML" in done.stderr and "Traceback" not in done.stderr
    assert path.read_text() == "model = \n"


def test_mcp_without_an_agent_is_a_usage_error(repo: Repo) -> None:
    done = run_tool("install", "--git", "--mcp", cwd=repo.path)
    assert done.returncode == 64
    assert done.stderr.startswith("error: --mcp goes with --agent")


def git_status(repo: Repo) -> str:
    return repo.git("status", "--porcelain", "--untracked-files=all")


@pytest.mark.parametrize("agent", ["claude", "gemini", "codex"])
def test_a_project_mcp_file_install_created_is_excluded_until_uninstall(
    repo: Repo, hermetic: Path, agent: str
) -> None:
    exclude = repo.path / ".git" / "info" / "exclude"
    before, status = exclude.read_bytes(), git_status(repo)
    path = mcp_file(agent, "project", repo.path, hermetic)

    lines = tool("install", "--agent", agent, "--scope", "project", "--mcp", cwd=repo.path)

    line = "/" + path.relative_to(repo.path).as_posix()
    assert line in exclude.read_text().splitlines()
    # Our entry names this machine's interpreter (a new skill is the team's: it shows).
    assert path.relative_to(repo.path).as_posix() not in git_status(repo)
    assert any(f"added {line} to {exclude}" in found for found in lines)
    tool("uninstall", "--agent", agent, "--scope", "project", cwd=repo.path)
    assert exclude.read_bytes() == before
    assert git_status(repo) == status


@pytest.mark.parametrize("agent", ["claude", "gemini", "codex"])
def test_a_project_mcp_file_the_project_had_gets_a_note_not_an_exclude_line(
    repo: Repo, hermetic: Path, agent: str
) -> None:
    seed(agent, "project", repo.path, hermetic)
    exclude = repo.path / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    path = mcp_file(agent, "project", repo.path, hermetic)

    lines = tool("install", "--agent", agent, "--scope", "project", "--mcp", cwd=repo.path)

    line = "/" + path.relative_to(repo.path).as_posix()
    assert line not in exclude.read_text().splitlines()
    assert any(
        found.startswith(f"note: {path} is the project's own file") and "MCP server" in found
        for found in lines
    ), lines
    tool("uninstall", "--agent", agent, "--scope", "project", cwd=repo.path)
    assert exclude.read_bytes() == before
