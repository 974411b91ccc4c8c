"""Keep the object store small: start git's own `gc --auto` in the background when it is due.

Each snapshot adds three loose objects (~16 KB on disk); git packs them to a few hundred bytes.
We only sample, as git does (objects/17 holds about 1/256 of all loose objects), and hand the
real decision and the work to git, detached, so a save never waits for it.
"""

from __future__ import annotations

import os

# Type checkers take this as typing.TYPE_CHECKING (True); at run time the pathlib Layout stays
# unloaded: an agent hook's save asks gc_due (docs/hooks.md, "Start-up cost").
TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitstate.storage.hooklayout import AnyLayout

DEFAULT_GC_AUTO = 6700


def loose_estimate(layout: AnyLayout) -> int:
    try:
        return len(os.listdir(os.path.join(layout.commondir, "objects", "17"))) * 256
    except OSError:
        return 0


def gc_due(layout: AnyLayout, gc_auto: int | None) -> bool:
    limit = DEFAULT_GC_AUTO if gc_auto is None else gc_auto
    return limit > 0 and loose_estimate(layout) > limit


def start_gc(layout: AnyLayout) -> None:
    """`git gc --auto --quiet` in its own session; never raises, never waits."""
    import subprocess  # here, not at the top: ~3 ms that only the rare save with gc due pays

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    cwd = layout.workdir or layout.commondir
    try:
        subprocess.Popen(
            ["git", "gc", "--auto", "--quiet"],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return  # no git on PATH: the store only grows, and doctor reports it
