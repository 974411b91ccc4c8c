"""`git agy-state install`: agent hooks into the agents' settings, and git hooks (uninstall shares it)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gitstate import agents as agent_registry
from gitstate.cli.output import emit_json, json_option, say
from gitstate.errors import UsageError
from gitstate.usecases.workspace import Workspace

AGENT_CHOICES = [*agent_registry.NAMES, "all"]


def _agents(values: tuple[str, ...]) -> list[str]:
    if "all" in values:
        return list(agent_registry.NAMES)
    return list(dict.fromkeys(values))


def hook_command() -> str:
    """How the agents' settings call us: this interpreter in isolated mode (storage/launcher.py).

    Not the console script found on PATH: PATH may hold a folder of the work tree, and the
    script itself honours PYTHONPATH; either would let other code answer as the tool.
    """
    from gitstate.storage import launcher

    launcher.check(what="agent hooks")
    return launcher.hook_command()


def mcp_argv() -> list[str]:
    """How the agents start the MCP server: this interpreter, isolated (`-I -m gitstate`: the
    server starts once per session), then `mcp`."""
    from gitstate.storage import launcher

    return [*launcher.argv(), "mcp"]


def options(func: click.decorators.FC) -> click.decorators.FC:
    func = click.option(
        "--agent",
        "agents",
        multiple=True,
        type=click.Choice(AGENT_CHOICES),
        help="The agent CLI(s) whose hooks to manage.",
    )(func)
    func = click.option(
        "--scope",
        type=click.Choice(["project", "user"]),
        default="project",
        show_default=True,
        help="This project's settings, or the user's.",
    )(func)
    func = click.option("--git", "git_hooks", is_flag=True, help="Git hooks too.")(func)
    func = click.option(
        "--mcp",
        is_flag=True,
        help="The MCP server (git agy-state mcp) too; uninstall removes it either way.",
    )(func)
    return json_option(func)


def run(
    agents: tuple[str, ...],
    scope: str,
    git_hooks: bool,
    as_json: bool,
    remove: bool,
    mcp: bool = False,
) -> None:
    if mcp and not agents:
        raise UsageError("--mcp goes with --agent", hint="e.g. --agent claude --mcp")
    if not agents and not git_hooks:
        raise UsageError(
            "say what to " + ("uninstall" if remove else "install"),
            hint=f"--agent {'|'.join(AGENT_CHOICES)} and/or --git",
        )
    done: list[str] = []
    ws = Workspace.open() if (git_hooks or scope == "project") else None
    if agents:
        from gitstate.usecases.setup import install as agent_install

        project = ws.require_workdir() if ws is not None else Path.cwd()
        home = Path.home()
        command = "" if remove else hook_command()
        for agent in _agents(agents):
            if remove:
                done += agent_install.uninstall_mcp(agent, scope, project, home)
                done += agent_install.uninstall(agent, scope, project, home)
            else:
                done += agent_install.install(agent, scope, project, home, command)
                if mcp:
                    done += agent_install.install_mcp(agent, scope, project, home, mcp_argv())
    if git_hooks:
        from gitstate.storage import githooks

        assert ws is not None
        if remove:
            done += githooks.uninstall(ws.layout)
        else:
            done += githooks.install(ws.layout, sys.executable)
    if as_json:
        emit_json({"actions": done})
    else:
        for line in done:
            say(line)


@click.command()
@options
def install(agents: tuple[str, ...], scope: str, git_hooks: bool, mcp: bool, as_json: bool) -> None:
    """Install the agent hooks (inject, stop guard, pre-compact) and/or the git hooks; with
    --mcp, register the MCP server with the agent CLIs too."""
    run(agents, scope, git_hooks, as_json, remove=False, mcp=mcp)
