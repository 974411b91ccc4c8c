"""`git agy-state hook …`: the entry points agent CLIs and git call.

The agent events normally never get here (gitstate.entry takes them around click); these
commands exist for `--help` and for callers that go through the full command line.
"""

from __future__ import annotations

import sys

import click

from gitstate import agents as agent_registry


@click.group()
def hook() -> None:
    """Called by agent CLIs (inject, stop-guard, pre-compact) and by git (pre-push, …)."""


def _agent_event(event: str, summary: str) -> click.Command:
    @click.command(name=event, help=summary)
    @click.option("--agent", type=click.Choice(list(agent_registry.NAMES)))
    def command(agent: str | None) -> None:
        from gitstate.hooks.agent import run

        args = [event] + (["--agent", agent] if agent else [])
        click.get_current_context().exit(run(args))

    return command


hook.add_command(_agent_event("inject", "Print the state for the agent (first invocation)."))
hook.add_command(_agent_event("stop-guard", "Refuse to stop with a step half done."))
hook.add_command(_agent_event("pre-compact", "Save the view before compaction."))


@hook.command(name="pre-push")
@click.argument("remote")
@click.argument("url", required=False)
@click.option(
    "--after",
    type=click.IntRange(min=2),  # 0, 1 and negative numbers name no push (kill(2) groups, init)
    help="Wait for this process (the user's push) to end first.",
)
def pre_push(remote: str, url: str | None, after: int | None) -> None:
    """Carry your agy refs to the agy remote after the push (git runs this; it reads git's ref
    lines on stdin). Without --after it returns at once and the step waits in the background."""
    from gitstate.hooks import git

    lines = ""
    if sys.stdin is not None and not sys.stdin.isatty():
        # Bytes, bounded: git's ref lines are ASCII; anything else is no ref line (ignored).
        lines = sys.stdin.buffer.read(git.MAX_STDIN).decode("utf-8", errors="replace")
    if after is None:
        git.detach_pre_push(remote, url, lines)
    else:
        git.pre_push(remote, url, lines, after)


@hook.command(name="post-commit")
def post_commit() -> None:
    """Derive changed_files from git (git runs this)."""
    from gitstate.hooks import git

    git.post_commit()


@hook.command(name="post-checkout")
@click.argument("previous", required=False, default="")
@click.argument("new", required=False, default="")
@click.argument("flag", required=False, default="0")
def post_checkout(previous: str, new: str, flag: str) -> None:
    """Warn when STATE.md belongs to another branch (git runs this)."""
    from gitstate.hooks import git

    warning = git.post_checkout(previous, new, flag)  # logs its own failure: git goes on
    if warning:
        click.echo(warning, err=True)
