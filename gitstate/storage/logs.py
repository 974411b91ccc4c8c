"""The tool's logs under a work tree's `<gitdir>/agy/` (hook.log, push.log, memory.log).

What failed open, or ran detached, is written here, since no one saw it (docs/hooks.md): one
timestamped entry per append, the rest of a multi-line text below it. Appending never raises
and never fails its caller. Standard library only, on paths as strings: the agent hooks use it.
"""

from __future__ import annotations

import os
import time

HOOK_LOG = "hook.log"
PUSH_LOG = "push.log"
MEMORY_LOG = "memory.log"


def append(agy_dir: str | os.PathLike[str], name: str, text: str) -> None:
    """Append `<stamp> <text>` to `agy_dir/name`. Only `agy_dir` itself is made, never its
    parents: a log goes inside an existing git dir, never into a path made up."""
    # No contextlib: a saving agent hook imports this module (docs/hooks.md, "Start-up cost").
    try:
        if not os.path.isdir(agy_dir):
            _make_folder(agy_dir)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with open(os.path.join(agy_dir, name), "a", encoding="utf-8") as log:
            log.write(f"{stamp} {text.rstrip()}\n")
    except (OSError, ValueError):  # ValueError: a NUL in the path; neither may reach the caller
        pass


def _make_folder(folder: str | os.PathLike[str]) -> None:
    try:
        os.mkdir(folder)
    except FileExistsError:
        return  # another process made it meanwhile
