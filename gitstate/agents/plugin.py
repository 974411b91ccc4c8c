"""What every agent's plugin files share: our name, the hook command, the manifest, the skill
(the rules P), and how a hook entry is known to be ours. Pure values: no I/O, standard library
only; imported by the agent modules only when they build files or install (not on the hook path).
"""

from __future__ import annotations

import json
import re
from typing import Any

from gitstate import __version__

DEFAULT_COMMAND = "git-agy-state"
NAME = "agy-state"
DESCRIPTION = (
    "Keeps the agent's STATE.md hand-off sheet as commits in git (git agy-state): "
    "injects it at every reset, guards the stop while a step is in progress."
)
SKILL_PATH = f"skills/{NAME}/SKILL.md"

# A hook command is ours when it runs our hook runtime, however the executable is spelled
# (on PATH, an absolute path, quoted, `git agy-state`, `python -m gitstate`, or `python -c
# 'import gitstate.__main__'`, which install writes: storage/launcher.py:hook_argv).
OURS = re.compile(
    r"(?:git[- ]agy-state|-m\s+gitstate|-c\s+[\"']?import\s+gitstate\.__main__)[\"']?"
    r"\s+hook\s+(?:inject|stop-guard|pre-compact)\b"
)


def hook_command(command: str, agent: str, action: str) -> str:
    return f"{command} hook {action} --agent {agent}"


def is_ours(handler: object) -> bool:
    """A hook handler (`{"type": "command", "command": …}`) that runs our hook runtime."""
    return isinstance(handler, dict) and bool(OURS.search(str(handler.get("command", ""))))


def manifest() -> dict[str, Any]:
    """The plugin manifest's common part: name, version, description."""
    return {"name": NAME, "version": __version__, "description": DESCRIPTION}


def render(data: Any) -> str:
    """A plugin JSON file's text: two-space indent, UTF-8 as it is, a final newline."""
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

## The agy-state MCP tools, when you have them
Prefer them to the shell lines above (`git agy-state install --mcp` registers the server):
`state_patch` takes the ops of `--ops` as a list, texts as they are (no shell quoting; CJK and
`|` are safe); `state_show`, `state_status`, `decide`, `phase`, `checkpoint` and the others
answer with what their command prints with `--json`; a failure is a tool error carrying
`error`, `hint` and `code`, and changed nothing.

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
