"""Installing our git hooks beside the user's own, the way pre-commit does.

Hooks go where git looks for them (`git rev-parse --git-path hooks`: the common dir, shared by
every worktree, or core.hooksPath). A hook already there is kept as `<name>.agy-prev` and run
first with the same arguments and stdin; uninstall puts it back byte for byte. Ours carry a
marker line so we never touch a file that is not ours. They run the tool by absolute path in
isolated mode, never anything the work tree or the environment could supply (docs/hooks.md);
a hooks folder inside the work tree (tracked files) is refused.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from pathlib import Path

from gitstate.errors import Failure
from gitstate.storage import launcher
from gitstate.storage.layout import Layout

HOOKS = ("pre-push", "post-commit", "post-checkout")
MARKER = "# git-agy-state managed hook"
PREV_SUFFIX = ".agy-prev"

# The interpreter by absolute path, in isolated mode (-I): neither the work tree (which `-m`
# would put first on sys.path: a `gitstate/` folder in a checked-out branch would run as the
# tool) nor PYTHONPATH nor the user's site-packages. No fallback through PATH either.
_PRELUDE = """#!/bin/sh
{marker}: {name}
# `git agy-state uninstall --git` removes it and restores the hook it replaced ({name}{prev}).
here=$(dirname -- "$0")
prev="$here/{name}{prev}"
agy_state() {{
    if [ -x {python} ]; then
        {python} -I -m gitstate "$@"
    else
        echo "git-agy-state: {python} is gone; run git agy-state install --git again" >&2
    fi
}}
"""

_BODIES = {
    # The user's hook decides whether the push goes on; ours only carries refs after the push,
    # in the background, so it can neither fail nor slow the user's push. git's ref lines go
    # along on its stdin: the step checks that the remote really took them.
    "pre-push": """input=$(cat)
if [ -x "$prev" ]; then
    if [ -n "$input" ]; then printf '%s\\n' "$input"; fi | "$prev" "$@" || exit $?
fi
if [ -z "$AGY_STATE_IN_HOOK" ]; then
    # exec, not a redirection on the call: sh would keep copies of git's stdout and stderr
    # open in the background job, and whoever reads `git push`'s output would wait for us.
    (
        exec </dev/null >/dev/null 2>&1
        printf '%s\\n' "$input" | agy_state hook pre-push --after "$PPID" -- "$1" "$2"
    ) &
fi
exit 0
""",
    "post-commit": """if [ -x "$prev" ]; then "$prev" "$@"; fi
agy_state hook post-commit || true
exit 0
""",
    "post-checkout": """status=0
if [ -x "$prev" ]; then "$prev" "$@" || status=$?; fi
agy_state hook post-checkout "$@" || true
exit $status
""",
}

# What a hook of the user's runs to chain ours by hand (core.hooksPath in the work tree).
_BY_HAND = {
    "pre-push": 'hook pre-push "$1" "$2"',
    "post-commit": "hook post-commit",
    "post-checkout": 'hook post-checkout "$@"',
}


def hooks_dir(layout: Layout) -> Path:
    """Where git runs hooks from for this repository (honours core.hooksPath)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_DIR"] = str(layout.gitdir)
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--git-path", "hooks"],
            cwd=layout.workdir or layout.commondir,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return layout.commondir / "hooks"
    path = Path(out)
    if not path.is_absolute():
        path = (layout.workdir or layout.commondir) / path
    return path.resolve()


def script(name: str, python: str) -> str:
    prelude = _PRELUDE.format(
        marker=MARKER, name=name, prev=PREV_SUFFIX, python=shlex.quote(python)
    )
    return prelude + _BODIES[name]


def is_ours(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return MARKER.encode() in handle.read(4096)
    except OSError:
        return False


def is_isolated(path: Path) -> bool:
    """True when our hook at `path` runs the tool in isolated mode (older ones did not)."""
    try:
        return b" -I -m gitstate " in path.read_bytes()[:8192]
    except OSError:
        return False


def _write_executable(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".agy-tmp")
    tmp.write_text(text)
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, path)


def by_hand(name: str, python: str) -> str:
    """The line a user's own `name` hook runs to chain ours by hand."""
    return f"{shlex.quote(python)} -I -m gitstate {_BY_HAND[name]}"


def _in_work_tree(layout: Layout, folder: Path) -> bool:
    """True when `folder` lies in a work tree (files there may be tracked), not in a git dir."""
    trees = [layout.workdir]
    if layout.commondir.name == ".git":
        trees.append(layout.commondir.parent)
    for inside_git in (layout.gitdir, layout.commondir):
        if folder.is_relative_to(inside_git.resolve()):
            return False
    return any(tree is not None and folder.is_relative_to(tree.resolve()) for tree in trees)


def install(layout: Layout, python: str) -> list[str]:
    folder = hooks_dir(layout)
    # Every refusal is found before anything is written: a refusal leaves all hooks as they were.
    if _in_work_tree(layout, folder):
        chain = "; ".join(f"to {folder / name}: {by_hand(name, python)}" for name in HOOKS)
        raise Failure(
            f"core.hooksPath is {folder}, inside the work tree: hooks written there would put "
            "this machine's paths into files your team may commit; nothing was installed",
            hint=f"chain by hand, adding a line to each of your hooks: {chain} (docs/hooks.md)",
        )
    launcher.check(python, "git hooks")
    for name in HOOKS:
        path = folder / name
        prev = folder / (name + PREV_SUFFIX)
        if path.exists() and not is_ours(path) and prev.exists():
            raise Failure(
                f"{path} is not ours and {prev.name} already exists; refusing to overwrite either",
                hint=f"look at both files and remove {prev} if it is stale",
            )
    folder.mkdir(parents=True, exist_ok=True)
    done = []
    for name in HOOKS:
        path = folder / name
        prev = folder / (name + PREV_SUFFIX)
        if path.exists() and not is_ours(path):
            os.replace(path, prev)
            done.append(f"kept your {name} hook as {prev.name}; it runs first")
        existed = path.exists()
        _write_executable(path, script(name, python))
        done.append(f"{'updated' if existed else 'installed'} {path}")
    return done


def uninstall(layout: Layout) -> list[str]:
    folder = hooks_dir(layout)
    done = []
    for name in HOOKS:
        path = folder / name
        prev = folder / (name + PREV_SUFFIX)
        if path.exists() and not is_ours(path):
            done.append(f"{path} is not ours; left alone")
            continue
        if path.exists():
            path.unlink()
            done.append(f"removed {path}")
        if prev.exists():
            os.replace(prev, path)
            done.append(f"restored your {name} hook")
    return done
