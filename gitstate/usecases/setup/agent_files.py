"""What the agent plugin files say: hook entries per agent, manifests, the skill (the rules P).

plugin_files() generates every file of the agy plugin, the Claude Code plugin and the Gemini CLI
extension as text; hooks/ in the repository is its output and install writes the same pieces.
Pure values: no I/O, standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from gitstate import __version__
from gitstate.errors import UsageError

AGENTS = ("agy", "claude", "gemini")
DEFAULT_COMMAND = "git-agy-state"
NAME = "agy-state"
DESCRIPTION = (
    "Keeps the agent's STATE.md hand-off sheet as commits in git (git agy-state): "
    "injects it at every reset, guards the stop while a step is in progress."
)
SKILL_PATH = f"skills/{NAME}/SKILL.md"

# A hook command is ours when it runs our hook runtime, however the executable is spelled
# (on PATH, an absolute path, quoted, `git agy-state`, or `python -m gitstate`).
OURS = re.compile(
    r"(?:git[- ]agy-state|-m\s+gitstate)[\"']?\s+hook\s+(?:inject|stop-guard|pre-compact)\b"
)


class _Hook(NamedTuple):
    event: str
    action: str
    timeout: int  # seconds (Gemini CLI's are milliseconds: multiplied on output)
    matcher: str | None = None


# Inject only reads a file; stop-guard and pre-compact may save a snapshot (load pygit2, commit,
# wait for the work tree's lock), so they get more time. All of them fail open.
_HOOKS: dict[str, tuple[_Hook, ...]] = {
    "agy": (_Hook("PreInvocation", "inject", 10), _Hook("Stop", "stop-guard", 30)),
    "claude": (
        _Hook("SessionStart", "inject", 10, "startup|resume|clear|compact"),
        _Hook("Stop", "stop-guard", 30),
        _Hook("PreCompact", "pre-compact", 30),
    ),
    "gemini": (
        _Hook("SessionStart", "inject", 10),
        _Hook("AfterAgent", "stop-guard", 30),
        _Hook("PreCompress", "pre-compact", 30),
    ),
}

_GEMINI_HOOK_TEXT = {
    "inject": "Inject STATE.md (git agy-state) when a session starts",
    "stop-guard": "Keep the agent going while a STATE.md step is in progress",
    "pre-compact": "Save STATE.md as a snapshot before compression",
}


def hook_command(command: str, agent: str, action: str) -> str:
    return f"{command} hook {action} --agent {agent}"


def hook_entries(agent: str, command: str = DEFAULT_COMMAND) -> dict[str, Any]:
    """The `hooks` object for agent: Claude/Gemini `{event: [group]}`; agy `{NAME: {event: [handler]}}`."""
    agent = check_agent(agent)
    if agent == "agy":
        return {
            NAME: {
                h.event: [
                    {
                        "type": "command",
                        "command": hook_command(command, agent, h.action),
                        "timeout": h.timeout,
                    }
                ]
                for h in _HOOKS[agent]
            }
        }
    entries: dict[str, Any] = {}
    for h in _HOOKS[agent]:
        handler: dict[str, Any] = {
            "type": "command",
            "command": hook_command(command, agent, h.action),
        }
        if agent == "gemini":
            handler["name"] = f"{NAME}-{h.action}"
            handler["description"] = _GEMINI_HOOK_TEXT[h.action]
            handler["timeout"] = h.timeout * 1000
        else:
            handler["timeout"] = h.timeout
        group: dict[str, Any] = {"matcher": h.matcher} if h.matcher else {}
        group["hooks"] = [handler]
        entries[h.event] = [group]
    return entries


def plugin_files(agent: str, command: str = DEFAULT_COMMAND) -> dict[str, str]:
    """Every file of agent's plugin (extension), as relative path → text."""
    agent = check_agent(agent)
    manifest = {"name": NAME, "version": __version__, "description": DESCRIPTION}
    if agent == "agy":
        return {
            "plugin.json": _json(manifest),
            "hooks.json": _json(hook_entries(agent, command)),
            SKILL_PATH: SKILL,
        }
    if agent == "claude":
        hooks = {"description": DESCRIPTION, "hooks": hook_entries(agent, command)}
        return {
            ".claude-plugin/plugin.json": _json(manifest),
            "hooks/hooks.json": _json(hooks),
            SKILL_PATH: SKILL,
        }
    return {
        "gemini-extension.json": _json({**manifest, "contextFileName": "GEMINI.md"}),
        "hooks/hooks.json": _json({"hooks": hook_entries(agent, command)}),
        SKILL_PATH: SKILL,
        "GEMINI.md": GEMINI_CONTEXT,
    }


def is_ours(handler: object) -> bool:
    """A hook handler (`{"type": "command", "command": …}`) that runs our hook runtime."""
    return isinstance(handler, dict) and bool(OURS.search(str(handler.get("command", ""))))


def check_agent(agent: str) -> str:
    if agent not in AGENTS:
        raise UsageError(
            f"unknown agent {agent!r}",
            hint=f"choose one of {', '.join(AGENTS)} (all: each in turn)",
        )
    return agent


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# How install recognises a SKILL.md as ours (an older copy it may overwrite or remove).
SKILL_MARK = "git agy-state patch"

SKILL = """\
---
name: agy-state
description: Keep and resume this task's hand-off sheet (STATE.md, saved in git by git agy-state). Use after a reset (/clear, compaction, a new session, a model switch) to resume; at a milestone (a step started, finished or blocked); before /clear, /compact or a model switch; when the stop guard asks; or when the user says "save state". Not for questions or one-turn tasks.
---

# agy-state: the task's hand-off sheet

`STATE.md` at the work-tree root is a small sheet that lets any session resume this task.
Every save is a commit on `refs/agy/state` (history: `git agy-state log`); the file itself is
never committed to the project.

## Resume
- After a reset the sheet is injected at the start. Resume from the first next step (the
  `[>]` one, else the first `[ ]`). Do not re-explore the project to rebuild what it says.
- The user's current instruction wins over the sheet.
- Git's reality wins over the conversation and the sheet: check `git status` and the files.
  Record a mismatch in Open issues (`--add open_issues=…`) instead of quietly fixing either.

## When to save
- At a milestone: a step started, finished (and verified) or blocked; a key fact found;
  an approach that failed.
- Before /clear, /compact or a model switch; then tell the user it is safe to go on.
- When the stop guard asks (see below).
- Not every turn: no change, no save.

## How: a small patch, never a rewrite
```sh
git agy-state patch --done 1 --verify "pytest tests/test_pool.py: 14 passed" --start 2
git agy-state patch --start 3                 # the one step in progress; others back to [ ]
git agy-state patch --pause 2                 # back to [ ]
git agy-state patch --block 2 --reason "needs the staging DB password from the user"
git agy-state patch --todo "add a retry test for timeouts"
git agy-state patch --add failed_attempts="sleep-based retry: flaky under load"
git agy-state patch --add key_data="ERR_POOL_EXHAUSTED at pool.ts:88"
git agy-state patch --set goal="Make the pool retry with backoff (issue 4412)"
echo '{"ops": [{"op": "done", "step": 1, "verify": "ran it"}, {"op": "start", "step": 2}]}' \\
  | git agy-state patch --ops -
```
- Steps count from 1 in Next steps order as it was before the patch.
- A patch applies whole and validates, or changes nothing; the error names the problem.
- Keys: goal, done, changed_files, open_issues, key_data, failed_attempts, next_steps.
- Hand edits to STATE.md are fine too: `git agy-state check`, then `git agy-state save -m "…"`.

## The seven sections (fixed order; at most 5 non-blank lines each)
- Goal: the task in a line or two, in the user's terms.
- Done: finished steps, `- [x] … | verified: how you checked it`. When full, the oldest
  line drops off the sheet (history keeps it).
- Changed files: the files touched, one line each (a git hook may keep it from git).
- Open issues: unresolved questions, risks, mismatches between the sheet and git.
- Key data (verbatim): at most 5 items copied exactly (error text, commands, ids, versions,
  paths); an item may run over several lines, and indented sub-bullets belong to it.
- Tried and failed: what did not work and why, so nobody tries it again.
- Next steps: the plan as items, at most one `[>]`.

## Markers (Next steps and Done only)
- `[>]` in progress: at most one.
- `[ ]` to do.
- `[!]` blocked, with ` | reason: why`.
- `[x]` done, only in Done, with ` | verified: how`.
A zh-TW sheet uses `｜驗證：` and `｜原因：` (zh-CN `｜验证：`, `｜原因：`); keep the sheet's
language. `git agy-state check` lists every problem with its line number.

## The stop guard
While a step is `[>]`, stopping is blocked. Take one of three ways out: finish it
(`--done N --verify "…"`), pause it (`--pause N`), or block it (`--block N --reason "…"`).
An invalid sheet also blocks: fix what `git agy-state check` reports.

## Reading
- `git agy-state status`: the sheet (clean, dirty, missing) and the step in progress.
- `git agy-state check`: validate STATE.md.
- `git agy-state show [REV] [--section KEY]`: a snapshot, byte for byte.
- `git agy-state log [-n N] [--patch]`: the snapshots, newest first.

## Never
- Paste transcripts, long tool output or your reasoning into the sheet: conclusions only.
- Put secrets in it (tokens, keys, passwords): a save that contains one is refused.
  Write where the secret lives instead ("token in $GH_TOKEN").
- Mark a step done without a verification you actually ran.
"""

GEMINI_CONTEXT = """\
# agy-state

This workspace may keep its task state in `STATE.md`, saved in git by `git agy-state`.
When a session starts the sheet is injected: resume from its first next step without
re-exploring. Change it only with small patches (`git agy-state patch`, see the agy-state
skill), at milestones and before /clear or /compress, never every turn.
`git agy-state status` shows where the task stands.
"""
