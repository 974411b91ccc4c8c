"""`git agy-state mcp`: serve the tool as MCP tools over stdio (docs/mcp.md)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from gitstate.errors import Failure, UsageError


@click.command()
@click.option(
    "--repo",
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="The repository (default: the current directory).",
)
def mcp(repo: Path | None) -> None:
    """Serve the state, decisions, jobs and memory as MCP tools on stdin/stdout.

    For an agent CLI to start (git agy-state install --agent NAME --mcp registers it); each
    tool returns the JSON its command prints with --json. Needs the `mcp` extra:
    pip install 'git-agy-state[mcp]'.
    """
    if repo is not None:
        # Every call opens the repository found from here, as a command run there would.
        try:
            os.chdir(repo)
        except OSError as exc:
            raise UsageError(
                f"--repo {repo}: {exc.strerror or exc}", hint="name a repository's folder"
            ) from None
    try:
        from gitstate.mcp import server
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        raise Failure(
            "git agy-state mcp needs the MCP SDK, which is not installed",
            hint="pip install 'git-agy-state[mcp]' (or pipx inject git-agy-state mcp)",
        ) from None
    server.serve()
