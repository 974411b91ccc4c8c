"""`git agy-state uninstall`: remove only what install wrote."""

from __future__ import annotations

import click

from gitstate.cli.install import options, run


@click.command()
@options
def uninstall(
    agents: tuple[str, ...], scope: str, git_hooks: bool, mcp: bool, as_json: bool
) -> None:
    """Remove only what install wrote; the user's own settings and hooks stay as they were."""
    run(agents, scope, git_hooks, as_json, remove=True, mcp=mcp)
