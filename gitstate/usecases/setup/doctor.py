"""`doctor`: is everything the tool keeps in this repository sound? (docs/commands.md)

Checks the state chains and their snapshots, the view and its record, leftovers of killed
writers, the git hooks, the remote set-up and the jobs, and says what to do about each problem.
Never changes anything. A failed check makes the command exit 1; a warning does not.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from gitstate.document.language import counted
from gitstate.document.validate import check_bytes
from gitstate.errors import AgyError, BrokenRef, InvalidDocument, from_os_error
from gitstate.storage import abbrev, gitcli, githooks, logs, objects, view
from gitstate.storage.refs import STALE_REF_LOCK_SECONDS
from gitstate.usecases.state import history
from gitstate.usecases.sync import carry
from gitstate.usecases.workspace import Workspace

if TYPE_CHECKING:
    from gitstate.storage.snapshots import Store

OK, WARN, FAIL = "ok", "warn", "fail"
CHAIN_SAMPLE = 50  # snapshots read per chain: enough to catch damage, fast on long chains


class Check(NamedTuple):
    name: str
    status: str
    detail: str
    hint: str | None = None

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "hint": self.hint}


def doctor(ws: Workspace) -> list[Check]:
    """Every check, each guarded: a damaged ref, view or file is reported, never an abort."""
    checks = [_git_command()]
    checks += _guarded("state chain", lambda: _chains(ws))
    checks += _guarded("agy refs", lambda: _other_refs(ws))
    checks += _guarded("STATE.md", lambda: [_view(ws)])
    checks += _guarded("leftovers", lambda: _leftovers(ws))
    checks += _guarded("git hooks", lambda: [_hooks(ws)])
    checks += _guarded("remote", lambda: [_remote(ws)])
    checks += _guarded("jobs", lambda: [_jobs(ws)])
    checks += _guarded("agent hooks", lambda: _agent_hooks(ws))
    return checks


def _agent_hooks(ws: Workspace) -> list[Check]:
    """What each agent CLI's module finds about its installed hooks (gitstate/agents/: Codex's
    switch and trust); an agent with nothing installed says nothing."""
    from pathlib import Path

    from gitstate import agents
    from gitstate.usecases.setup.install import Place

    place = Place(ws.layout.workdir or Path.cwd(), Path.home())
    return [Check(*finding) for module in agents.plugins() for finding in module.doctor(place)]


def _guarded(name: str, run: Callable[[], list[Check]]) -> list[Check]:
    try:
        return run()
    except AgyError as exc:
        return [Check(name, FAIL, exc.message, exc.hint)]
    except OSError as exc:
        error = from_os_error(exc)
        return [Check(name, FAIL, error.message, error.hint)]
    except objects.READ_ERRORS as exc:
        return [Check(name, FAIL, f"cannot be checked: {exc}", "git fsck --full")]


def _git_command() -> Check:
    if shutil.which("git") is None:
        return Check("git", FAIL, "git is not on PATH", "sync, hooks and jobs need the git command")
    return Check("git", OK, "git found; libgit2 " + objects.library_version())


CHAIN_PREFIXES = ("refs/agy/",)
AGY_PREFIXES = ("refs/agy/", "refs/agy-remotes/", "refs/notes/agy", "refs/tags/checkpoint-")


def agy_refs(ws: Workspace) -> list[str]:
    """Every agy ref name, also those libgit2 will not list: a loose ref file that is not a ref
    (garbage) is skipped by its iterator, so the ref folders are read too."""
    names = set(objects.ref_names(ws.store, AGY_PREFIXES))
    common = ws.layout.commondir
    for folder in ("refs/agy", "refs/agy-remotes", "refs/notes", "refs/tags"):
        root = common / folder
        if not root.is_dir():
            continue
        for path in root.rglob("*"):
            name = path.relative_to(common).as_posix()
            if path.is_file() and not name.endswith(".lock") and name.startswith(AGY_PREFIXES):
                names.add(name)
    return sorted(names)


def _is_chain(ref: str) -> bool:
    return ref == "refs/agy/state" or (ref.startswith("refs/agy/wt/") and ref.endswith("/state"))


def _chains(ws: Workspace) -> list[Check]:
    store = ws.store
    refs = [r for r in agy_refs(ws) if _is_chain(r)]
    if not refs:
        return [Check("state chain", OK, "no snapshot yet")]
    checks = []
    for ref in refs:
        problems = []
        hint = (
            "git agy-state init starts the reflog; git agy-state check shows a snapshot's "
            "problems (a sync merge over the size limits is kept, flagged Agy-Conflict)"
        )
        count = 0
        try:
            for snap in store.walk(store.tip(ref), CHAIN_SAMPLE):
                count += 1
                if "Agy-Format" not in snap.trailers:
                    problems.append(
                        f"{abbrev.short_id(store, snap.commit)} has no Agy-Format trailer"
                    )
                data = store.state_bytes(snap.commit)
                report = check_bytes(data) if data is not None else None
                if report is not None and any(p.code == "not_text" for p in report.errors):
                    problems.append(
                        f"{abbrev.short_id(store, snap.commit)} holds a STATE.md that is not text"
                    )
                    hint = (
                        f"git agy-state log lists the chain; git update-ref {ref} <commit> puts "
                        "a sound snapshot back as the tip"
                    )
                elif report is not None and not report.valid:
                    problems.append(
                        f"{abbrev.short_id(store, snap.commit)} holds an invalid STATE.md"
                    )
        except BrokenRef as exc:
            problems.insert(0, exc.message.removeprefix(f"{ref} "))
            hint = exc.hint or hint
        except objects.READ_ERRORS as exc:
            problems.append(f"cannot read the chain: {exc}")
        log = ws.layout.commondir / "logs" / ref
        if not log.exists():
            problems.append("no reflog (updates are not recorded)")
        if problems:
            over_limit = all("invalid STATE.md" in p for p in problems)
            checks.append(
                Check(
                    ref,
                    WARN if over_limit else FAIL,
                    "; ".join(problems[:3])
                    + (f" (+{len(problems) - 3})" if len(problems) > 3 else ""),
                    hint,
                )
            )
        else:
            checks.append(Check(ref, OK, f"{counted(count, 'newest snapshot')} sound"))
    return checks


def _other_refs(ws: Workspace) -> list[Check]:
    """Archives, job records, notes, teammates' copies and checkpoint tags: each must point at
    a commit (a checkpoint: at a tag of one, or at one); a broken one is a failed check of its
    own, the sound ones one line."""
    store = ws.store
    checks = []
    sound = 0
    for ref in agy_refs(ws):
        if _is_chain(ref):
            continue
        try:
            if ref.startswith("refs/tags/"):
                _checkpoint_ref(store, ref)
            else:
                tip = store.tip(ref)
                if tip is not None and ref.startswith("refs/agy/archive/"):
                    store.state_text(tip)
            sound += 1
        except BrokenRef as exc:
            checks.append(Check(ref, FAIL, exc.message.removeprefix(f"{ref} "), exc.hint))
    if sound:
        checks.insert(0, Check("agy refs", OK, f"{counted(sound, 'other agy ref')} sound"))
    return checks


def _checkpoint_ref(store: Store, ref: str) -> None:
    found = objects.ref_target(store, ref)  # unreadable: BrokenRef
    if found is None:
        return
    if found.symbolic:
        raise BrokenRef(
            ref,
            f"{ref} is a symbolic ref (to {found.target}), not a tag",
            hint=f"drop it: git update-ref --no-deref -d {ref}",
        )
    obj = objects.describe(store, found.target)
    if obj is None:
        raise BrokenRef(
            ref,
            f"{ref} points at {abbrev.short_id(store, found.target)}, which is missing from this repository",
            hint=f"drop the tag: git tag -d {ref.removeprefix('refs/tags/')}",
        )
    if obj.commit is None:
        raise BrokenRef(
            ref,
            f"{ref} points at {obj.kind} {abbrev.short_id(store, obj.id)}, not a commit or a tag of one",
            hint=f"drop the tag: git tag -d {ref.removeprefix('refs/tags/')}",
        )


def _view(ws: Workspace) -> Check:
    if ws.layout.workdir is None:
        return Check("STATE.md", OK, "bare repository: no view")
    try:
        data = ws.view_bytes()
    except InvalidDocument as exc:  # a FIFO, a symbolic link, a directory: never read
        return Check("STATE.md", FAIL, exc.message, exc.hint)
    try:
        tip = ws.store.tip()
        tip_state = bool(tip and ws.store.state_bytes(tip))
    except BrokenRef:
        tip, tip_state = None, False  # said under the chain's own check
        broken = True
    else:
        broken = False
    state = ws.view_state(data, tip)
    if data is None:
        return Check(
            "STATE.md",
            OK,
            "missing" + (" (git agy-state checkout writes it)" if tip_state else ""),
        )
    report = ws.view_report(data)
    if not report.valid:
        return Check(
            "STATE.md",
            FAIL,
            f"{state}, invalid ({counted(len(report.errors), 'problem')})",
            "git agy-state check",
        )
    written = history.view_origin(ws, data, tip)  # the answer status gives
    if state == "clean" and written and written != tip and not broken:
        return Check(
            "STATE.md", WARN, "clean but written from an older snapshot", "git agy-state checkout"
        )
    return Check("STATE.md", OK, state)


def _leftovers(ws: Workspace) -> list[Check]:
    checks = []
    now = time.time()
    stale = []
    for lock in ws.layout.commondir.glob("refs/agy/**/*.lock"):
        try:
            if now - lock.stat().st_mtime > STALE_REF_LOCK_SECONDS:
                stale.append(str(lock.relative_to(ws.layout.commondir)))
        except OSError:
            continue
    if stale:
        checks.append(
            Check(
                "ref locks",
                WARN,
                "left by a killed writer: " + ", ".join(stale),
                "the next save removes them; nothing is lost",
            )
        )
    if ws.layout.workdir is not None:
        temps = sorted(p.name for p in ws.layout.workdir.glob(view.TMP_PREFIX + "*.tmp"))
        if temps:
            checks.append(Check("temp files", WARN, ", ".join(temps), "the next save removes them"))
    log = ws.layout.agy_dir / logs.HOOK_LOG
    if log.exists():
        recent = _recent_failures(log.read_text(errors="replace"), now)
        if recent:
            checks.append(
                Check(
                    "agent hooks",
                    WARN,
                    f"{counted(recent, 'hook failure')} in the last day (the agent was let through)",
                    f"see {log}",
                )
            )
    return checks


def _recent_failures(text: str, now: float) -> int:
    count = 0
    for line in text.splitlines():
        stamp = line.split(" ", 1)[0]
        if len(stamp) < 19 or ("failed open" not in line and "post-commit:" not in line):
            continue
        try:
            seen = time.mktime(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
        except ValueError:
            continue
        if now - seen < 86400:
            count += 1
    return count


def _hooks(ws: Workspace) -> Check:
    folder = githooks.hooks_dir(ws.layout)
    ours = [name for name in githooks.HOOKS if githooks.is_ours(folder / name)]
    if not ours:
        return Check("git hooks", OK, "not installed", "git agy-state install --git")
    missing = [name for name in githooks.HOOKS if name not in ours]
    if missing:
        return Check(
            "git hooks",
            WARN,
            f"installed: {', '.join(ours)}; missing or replaced: {', '.join(missing)}",
            "git agy-state install --git",
        )
    old = [name for name in ours if not githooks.is_isolated(folder / name)]
    if old:
        return Check(
            "git hooks",
            FAIL,
            f"{', '.join(old)} from an older version: it runs `python -m gitstate`, which code "
            "in the work tree can take over",
            "git agy-state install --git (rewrites them; docs/hooks.md)",
        )
    return Check("git hooks", OK, f"installed in {folder}")


def _remote(ws: Workspace) -> Check:
    user = carry.agy_user(ws)
    remotes = gitcli.remotes(ws.layout)
    if not remotes:
        return Check("remote", OK, "no remote (sync not used)")
    if user is None:
        why, hint = carry.no_name(ws)
        return Check("remote", WARN, f"{why}: sync and pre-push cannot carry the state", hint)
    configured = gitcli.config(ws.layout, carry.AGY_REMOTE).get(carry.AGY_REMOTE, "").strip()
    team = carry.team_remote(ws)
    if configured and team is None:
        return Check(
            "remote",
            FAIL,
            f"agy.remote={configured!r} begins with '-' and is ignored: nothing is carried",
            "git agy-state remote setup REMOTE",
        )
    if team is None:
        # Advice, not a problem: many repositories have no team remote for the agy refs.
        return Check(
            "remote",
            WARN,
            "no agy remote: git push carries none of your agy refs (sync uses the branch's remote)",
            f"to carry them on every push: git agy-state remote setup {remotes[0]}",
        )
    if team not in remotes and not ("/" in team or ":" in team):
        return Check(
            "remote",
            FAIL,
            f"agy.remote={team} names no remote: nothing is carried",
            "git agy-state remote setup REMOTE (git remote -v lists them)",
        )
    pushed = f"refs/agy-remotes/{team}/users/{user}/state"
    seen = objects.ref_exists(ws.store, pushed)
    return Check(
        "remote",
        OK,
        f"you sync as {user} with {team}"
        + ("" if seen else f"; {team} has not seen your chain yet"),
        None if seen else "git agy-state sync",
    )


def _jobs(ws: Workspace) -> Check:
    folder = ws.layout.common_agy_dir / "jobs"
    if not folder.is_dir():
        return Check("jobs", OK, "none")
    from gitstate.jobs.usecases import control

    metas = control.list_jobs(ws.layout)
    interrupted = [m["id"] for m in metas if m.get("state") == "interrupted"]
    waiting = control.pending(ws.layout)
    detail = f"{counted(len(metas), 'job')}; {len(waiting)} finished and not harvested"
    if interrupted:
        return Check(
            "jobs",
            WARN,
            detail + f"; interrupted: {', '.join(interrupted[:5])}",
            "git agy-state job result ID, then job cleanup ID or job feedback ID",
        )
    return Check("jobs", OK, detail, "git agy-state job pending" if waiting else None)
