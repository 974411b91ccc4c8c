"""What a job's supervisor reads from git, without loading pygit2: its settings, the branch's
tip, and what the agent left uncommitted in the worktree.

One supervisor runs per job, so its start-up is paid per job; pygit2's import is most of it
(docs/jobs.md, "Cost per job"). These reads cost a file read or one `git` process each; only a
round whose branch moved loads pygit2, for the diff (records.changes). A supervisor forked from
the submitting process has pygit2 loaded already: it gets its settings from that process (read
there with pygit2, `Preset`) and lists the uncommitted files in-process, without either `git`
process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from gitstate.jobs.document import config as config_mod
from gitstate.jobs.storage import record_commit
from gitstate.storage import cmdconfig, gitcli
from gitstate.storage.layout import Layout
from gitstate.storage.rawobjects import is_oid, read_ref

Reader = Callable[[str], str | None]
Stamp = tuple[tuple[int, int], ...]
# Every key a supervisor reads: the jobs' settings and the record commit's. Lower case, as git
# matches them.
KEYS = tuple(sorted({key.lower() for key in (*config_mod.KEYS, *record_commit.CONFIG_KEYS)}))


class Preset(NamedTuple):
    """The settings as the submitting process read them, handed to the supervisor it forks: the
    two read at the same moment, and that process has them already (docs/jobs.md, "Cost per
    job")."""

    values: dict[str, str]  # settings()'s shape: the keys that are set, in lower case
    stamp: Stamp  # config_stamp() taken just before they were read


def settings(layout: Layout) -> dict[str, str]:
    """The jobs' settings and what the record commit reads (record_commit.CONFIG_KEYS), from
    one `git config` process (git's own reading: include files, every scope); keys in lower
    case, as git matches them. `git -c` values win, as in Store.config_value and preset():
    gitcli drops them from git's environment (they belong to the command that was given them)."""
    values = gitcli.config(layout, *KEYS)
    values.update({key: given for key in KEYS if (given := cmdconfig.value(key)) is not None})
    return values


def preset(layout: Layout, get: Reader) -> Preset:
    """The keys settings() reads, from `get` (the submitter's Store.config_value: pygit2's
    reading, the rule every commit we write takes its identity by, `git -c` values included),
    with the stamp taken first: a change made after the read changes the stamp, so a waiting
    supervisor reads the settings again."""
    stamp = config_stamp(layout)
    values = {key: value for key in KEYS if (value := get(key)) is not None}
    return Preset(values, stamp)


def config_reader(layout: Layout, values: dict[str, str] | None = None) -> Reader:
    """A reader for config_mod.load: of `values` (from settings()), else of a fresh read."""
    found = settings(layout) if values is None else values
    return lambda key: found.get(key.lower())


def config_stamp(layout: Layout) -> Stamp:
    """(size, mtime) of the config files git reads for the jobs' settings (the repository's,
    the global and the XDG one): a changed stamp means the settings may have changed. A file
    that only an include names is not in it: a change made there alone reaches the supervisors
    that start after it."""
    home = Path(os.environ.get("HOME") or "~").expanduser()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    paths = (
        layout.commondir / "config",
        Path(os.environ.get("GIT_CONFIG_GLOBAL") or home / ".gitconfig"),
        xdg / "git" / "config",
    )
    stamp = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            stamp.append((-1, 0))
        else:
            stamp.append((st.st_size, st.st_mtime_ns))
    return tuple(stamp)


def branch_tip(layout: Layout, branch: str) -> str | None:
    """The commit `refs/heads/<branch>` names (its loose file, else packed-refs); None when the
    branch is gone, cannot be read or is not a plain commit id."""
    try:
        value = read_ref(layout.commondir, f"refs/heads/{branch}")
    except (OSError, UnicodeDecodeError):
        return None
    return value if value is not None and is_oid(value, (40,)) else None


def uncommitted(worktree: Path, in_process: bool | None = None) -> list[str]:
    """Files the agent left changed or untracked in the worktree (ignored files aside), as
    records.uncommitted reads them with pygit2; [] when it is no work tree git can read.

    `in_process` (default: whether pygit2 is loaded already, as in a forked supervisor) asks
    pygit2 itself, a tenth of a `git status` process's CPU; else `git status`, cheaper than
    loading pygit2. Either way only a folder with its own `.git` is asked: pygit2 alone would
    look upwards and list the main work tree's files for a worktree the agent broke."""
    gitdir = _gitdir_of(worktree)
    if gitdir is None:
        return []
    if "pygit2" in sys.modules if in_process is None else in_process:
        from gitstate.jobs.storage import records

        names = records.uncommitted(worktree)
        # As the git route: a name that is not UTF-8 (pygit2 gives it with surrogates, which
        # result.json could not hold) leaves git's output unreadable as text, so nothing.
        return [] if any(not _is_text(name) for name in names) else names
    try:
        proc = gitcli.run_in(
            gitdir,
            worktree,
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignored=no",
            env={"GIT_OPTIONAL_LOCKS": "0"},  # a look: never rewrite the agent's index
        )
    except ValueError:  # a path that is not text in this locale: as pygit2, nothing to say
        return []
    if proc.returncode != 0:
        return []
    return sorted({entry[3:] for entry in proc.stdout.split("\0") if len(entry) > 3})


def _gitdir_of(worktree: Path) -> Path | None:
    """The git dir of a work tree: `.git` itself, or the folder a linked worktree's `.git` file
    names."""
    dotgit = worktree / ".git"
    if dotgit.is_dir():
        return dotgit
    try:
        text = dotgit.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    return target if target.is_absolute() else (worktree / target).resolve()


def _is_text(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
