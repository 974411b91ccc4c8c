"""Sync between machines through a real bare remote (docs/sync.md, docs/archive.md,
docs/phase-and-checkpoints.md, docs/refs.md; issue 5).

Every "machine" is a clone of one bare repository in a temp dir, with its own `user.email`: the
same person on two machines shares an email, a teammate has another. `sync` (and every call
whose exit code or stderr is checked) runs as a real subprocess (`python -m gitstate`) with the
machine as its working directory, so each sees its own repository, locks and view, as on
separate computers; the other commands that only set a scene (patch, decide, show…) run in
process, after a chdir into the machine, to keep the file fast.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import wait_until

EMAIL = "Dev.Person@Example.COM"
USER = "dev.person-example.com"  # the slug of EMAIL
MATE_EMAIL = "Mate+Work@Example.org"
MATE = "mate-work-example.org"
ON_REMOTE = f"refs/agy/users/{USER}/state"
SYNC_KEYS = {"remote", "user", "chains", "notes", "received", "clashes", "pushed", "view", "rounds"}
CHAIN_KEYS = {"ref", "action", "commit", "conflicts", "over_limit"}
HEX7 = "[0-9a-f]{7}"


# ---- machines and a remote --------------------------------------------------------------------


def run_git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env or os.environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd} failed: {proc.stderr}")
    return proc.stdout


@dataclass
class Machine:
    """One clone: runs the tool and git with the clone as the working directory."""

    path: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gitstate", *args],
            cwd=self.path,
            capture_output=True,
            text=True,
            input=input,
            env={**os.environ, **self.env},
            check=False,
            timeout=60,
        )

    def call(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Like `run`, but in process (click's runner, in the machine's directory) unless it is
        sync or the machine has an environment of its own."""
        if args[0] == "sync" or self.env:
            return self.run(*args)
        from gitstate.cli import main

        here = os.getcwd()
        os.chdir(self.path)
        try:
            result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        finally:
            os.chdir(here)
        return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)

    def ok(self, *args: str) -> str:
        proc = self.call(*args)
        assert proc.returncode == 0, f"{args} exited {proc.returncode}: {proc.stderr}"
        return proc.stdout

    def sync(self, *args: str) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.ok("sync", "--json", *args))
        return result

    def git(self, *args: str, check: bool = True) -> str:
        return run_git(self.path, *args, check=check, env={**os.environ, **self.env})

    def ref(self, name: str = "refs/agy/state") -> str | None:
        return self.git("rev-parse", "--verify", "-q", name, check=False).strip() or None

    def tip(self, name: str = "refs/agy/state") -> str:
        found = self.ref(name)
        assert found is not None, f"{self.path}: no {name}"
        return found

    def section(self, key: str) -> list[str]:
        return self.ok("show", "--section", key).splitlines()

    def tip_text(self, ref: str = "refs/agy/state") -> str:
        return self.git("show", f"{ref}:STATE.md")

    def parents(self, rev: str = "refs/agy/state") -> list[str]:
        return self.git("rev-list", "--parents", "-n", "1", rev).split()[1:]

    @property
    def view(self) -> Path:
        return self.path / "STATE.md"


@dataclass
class Net:
    """A bare remote with one commit on main, and the clones made of it."""

    root: Path
    remote: Path

    def clone(self, name: str, email: str | None = EMAIL, *options: str) -> Machine:
        run_git(self.root, "clone", "-q", *options, str(self.remote), name)
        machine = Machine(self.root / name)
        if email:
            machine.git("config", "user.email", email)
        return machine

    def remote_ref(self, name: str = ON_REMOTE) -> str | None:
        out = run_git(self.remote, "rev-parse", "--verify", "-q", name, check=False)
        return out.strip() or None

    def hook(self, name: str, body: str) -> None:
        path = self.remote / "hooks" / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)


@pytest.fixture
def net(tmp_path: Path, hermetic: Path) -> Net:
    remote = tmp_path / "remote.git"
    run_git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    seed = tmp_path / "seed"
    run_git(tmp_path, "init", "-q", "-b", "main", str(seed))
    run_git(seed, "commit", "-q", "--allow-empty", "-m", "initial")
    run_git(seed, "push", "-q", str(remote), "main")
    return Net(tmp_path, remote)


def start_task(machine: Machine, *extra: str) -> None:
    machine.ok(
        "patch",
        "--set",
        "goal=Make the pool retry",
        "--add",
        "open_issues=the timeout is hard-coded",
        "--todo",
        "write the retry test",
        "--todo",
        "move settings to config",
        *extra,
    )


def two_machines(net: Net) -> tuple[Machine, Machine]:
    """A started a task and synced; B cloned and took it with one sync: both on one tip."""
    a = net.clone("a")
    start_task(a)
    a.sync()
    b = net.clone("b")
    assert b.sync()["chains"][0]["action"] == "adopted"
    assert a.ref() == b.ref() == net.remote_ref()
    return a, b


def converge(a: Machine, b: Machine) -> dict[str, Any]:
    """A, B, A: each syncs once; returns B's report (the one that merges)."""
    a.sync()
    merged = b.sync()
    a.sync()
    assert a.ref() == b.ref() == net_ref(a)
    return merged


def net_ref(machine: Machine) -> str | None:
    out = machine.git("ls-remote", "origin", ON_REMOTE).split()
    return out[0] if out else None


def content_lines(text: str) -> list[str]:
    """The document's lines that carry content (no title, no headings, no blanks)."""
    return [
        line for line in text.splitlines() if line.strip() and not line.startswith(("# ", "## "))
    ]


# ---- 1. first push ----------------------------------------------------------------------------


def test_first_push_puts_the_chain_under_the_users_ref(net: Net) -> None:
    a = net.clone("a")
    start_task(a)
    assert net.remote_ref() is None
    report = a.sync()
    assert set(report) >= SYNC_KEYS
    assert report["remote"] == "origin"
    assert report["user"] == USER
    assert report["rounds"] == 1
    assert [set(chain) for chain in report["chains"]] == [CHAIN_KEYS]
    chain = report["chains"][0]
    assert chain["ref"] == "refs/agy/state"
    assert chain["action"] == "ahead"
    assert chain["commit"] == a.ref()
    assert chain["conflicts"] == [] and chain["over_limit"] == []
    assert ON_REMOTE in report["pushed"]
    assert net.remote_ref() == a.ref()
    # Only the person's chain travels under users/: the local name never lands on the remote.
    assert net.remote_ref("refs/agy/state") is None
    # A second sync has nothing to do and pushes nothing new.
    again = a.sync()
    assert again["chains"][0]["action"] in ("up-to-date", "ahead")
    assert again["pushed"] == []
    assert net.remote_ref() == a.ref()


# ---- 2. a fresh clone gets everything ---------------------------------------------------------


def test_a_fresh_clone_gets_everything_with_one_sync(net: Net) -> None:
    a = net.clone("a")
    a.ok("patch", "--set", "goal=First task", "--todo", "only step")
    a.ok("archive")
    first_archive = a.git("for-each-ref", "--format=%(refname)", "refs/agy/archive/").split()
    assert len(first_archive) == 1
    start_task(a)
    a.ok("decide", "--type", "Rule", "retries use exponential backoff")
    a.ok("checkpoint", "-m", "before the refactor")
    tag = a.git("tag", "-l", "checkpoint-*").split()
    assert len(tag) == 1
    a.sync()

    b = net.clone("b", EMAIL, "--no-tags")  # the tag must come through sync, not the clone
    assert b.git("tag", "-l").strip() == ""
    report = b.sync()
    assert report["chains"][0]["action"] == "adopted"
    assert report["view"] == "refreshed"
    assert b.ref() == a.ref()
    assert b.view.read_bytes() == a.view.read_bytes() == b.tip_text().encode()
    assert first_archive[0] in report["received"]
    assert f"refs/tags/{tag[0]}" in report["received"]
    decisions = json.loads(b.ok("decisions", "--json"))
    assert [d["text"] for d in decisions] == ["retries use exponential backoff"]
    assert [c["name"] for c in json.loads(b.ok("checkpoints", "--json"))] == tag
    assert [x["ref"] for x in json.loads(b.ok("archives", "--json"))] == first_archive
    assert b.ref(first_archive[0]) == a.ref(first_archive[0])
    assert json.loads(b.ok("status", "--json"))["view"] == "clean"


# ---- 3. divergence in different sections ------------------------------------------------------


def test_divergence_in_different_sections_converges_to_one_merge(net: Net) -> None:
    a, b = two_machines(net)
    base = a.ref()
    a.ok("patch", "--add", "key_data=- port: 5432 (from A)")
    b.ok("patch", "--add", "failed_attempts=fixed 1 s retry (from B)")
    a_tip, b_tip = a.tip(), b.tip()
    report = converge(a, b)
    chain = report["chains"][0]
    assert chain["action"] == "merged"
    assert chain["conflicts"] == []
    tip = a.tip()
    assert sorted(a.parents(tip)) == sorted([a_tip, b_tip])
    assert a.git("merge-base", a_tip, b_tip).strip() == base
    text = a.tip_text()
    assert "- port: 5432 (from A)" in text
    assert "- fixed 1 s retry (from B)" in text
    lines = content_lines(text)
    assert len(lines) == len(set(lines)), text
    for machine in (a, b):
        assert machine.view.read_text() == text  # both clean views followed the tip
    graph = a.git("log", "--graph", "--oneline", "refs/agy/state")
    assert "|\\" in graph or "|/" in graph, graph
    assert "sync: merge" in graph


# ---- 4. divergence in the same section --------------------------------------------------------


def test_same_section_union_and_a_visible_goal_conflict(net: Net) -> None:
    a, b = two_machines(net)
    a.ok("patch", "--add", "open_issues=pool size unknown (A)", "--set", "goal=Retry with jitter")
    b.ok("patch", "--add", "open_issues=logs too noisy (B)", "--set", "goal=Retry with a cap")
    a_tip = a.ref()
    report = converge(a, b)
    chain = report["chains"][0]
    assert chain["action"] == "merged"
    assert chain["conflicts"] == ["goal"]
    issues = a.section("open_issues")
    for line in ("- the timeout is hard-coded", "- pool size unknown (A)", "- logs too noisy (B)"):
        assert issues.count(line) == 1, issues
    goal = a.section("goal")
    # B made the merge: its goal stays, A's is kept beside it, marked with A's commit.
    assert "Retry with a cap" in goal
    marked = [line for line in goal if line.startswith("(sync conflict")]
    assert len(marked) == 1, goal
    assert re.fullmatch(rf"\(sync conflict ({HEX7})\) Retry with jitter", marked[0])
    assert a_tip is not None and a_tip.startswith(marked[0][len("(sync conflict ") :][:7])
    steps = a.section("next_steps")
    resolve = [s for s in steps if s.startswith("- [!] resolve the sync conflict in Goal")]
    assert len(resolve) == 1, steps
    assert " | reason: " in resolve[0]
    assert b.view.read_text() == a.view.read_text() == a.tip_text()
    assert a.call("check").returncode == 0


def test_a_merge_over_the_limit_is_kept_marked_and_can_be_shrunk(net: Net) -> None:
    a, b = two_machines(net)
    # One issue in the base, three more on each side: seven after the union; the limit is five.
    a.ok("patch", "--add", "open_issues=a one", "--add", "open_issues=a two")
    a.ok("patch", "--add", "open_issues=a three")
    b.ok("patch", "--add", "open_issues=b one", "--add", "open_issues=b two")
    b.ok("patch", "--add", "open_issues=b three")
    report = converge(a, b)
    chain = report["chains"][0]
    assert chain["action"] == "merged"
    assert chain["over_limit"] == ["open_issues"]
    issues = a.section("open_issues")
    assert len(issues) == 7 and len(set(issues)) == 7, issues
    trailers = a.git("log", "-1", "--format=%(trailers:key=Agy-Conflict)", "refs/agy/state")
    assert trailers.strip() == "Agy-Conflict: open_issues"
    for machine in (a, b):
        check = machine.call("check")
        assert check.returncode == 1
        assert "Open issues" in check.stdout + check.stderr
    # A patch that shrinks the violation is accepted although the view is (and stays) invalid.
    shrink = a.call("patch", "--remove", "open_issues=a one")
    assert shrink.returncode == 0, shrink.stderr
    assert len(a.section("open_issues")) == 6
    assert a.call("check").returncode == 1
    a.ok("patch", "--remove", "open_issues=b one")
    assert len(a.section("open_issues")) == 5
    assert a.call("check").returncode == 0
    a.sync()
    b.sync()
    assert b.ref() == a.ref()
    assert b.call("check").returncode == 0


# ---- 5. done on one side, blocked on the other --------------------------------------------------


def test_a_step_done_on_one_side_and_blocked_on_the_other_ends_done(net: Net) -> None:
    a, b = two_machines(net)
    a.ok("patch", "--done", "1", "--verify", "pytest tests/test_retry.py passes")
    b.ok("patch", "--block", "1", "--reason", "waiting for the fixture")
    assert a.ref() != b.ref()
    converge(a, b)
    for machine in (a, b):
        done = machine.section("done")
        steps = machine.section("next_steps")
        assert done == ["- [x] write the retry test | verified: pytest tests/test_retry.py passes"]
        assert not any("write the retry test" in s for s in steps), steps
        assert "- [ ] move settings to config" in steps
        assert machine.view.read_text() == machine.tip_text()


# ---- 6. decisions on the same commit from both machines ---------------------------------------


def test_decisions_on_one_commit_from_both_machines_merge_without_duplicates(net: Net) -> None:
    a, b = two_machines(net)
    head = a.git("rev-parse", "HEAD").strip()
    assert b.git("rev-parse", "HEAD").strip() == head
    a.ok("decide", "--type", "Architecture", "one pool per process")
    b.ok("decide", "--type", "Lib", "use tenacity for retries")
    a.sync()
    report = b.sync()
    assert report["notes"] == "merged"  # git notes merge -s cat_sort_uniq
    a.sync()
    b.sync()
    assert a.ref("refs/notes/agy/decisions") == b.ref("refs/notes/agy/decisions")
    assert net.remote_ref("refs/notes/agy/decisions") == a.ref("refs/notes/agy/decisions")
    for machine in (a, b):
        records = json.loads(machine.ok("decisions", "--json"))
        texts = sorted(r["text"] for r in records)
        assert texts == ["one pool per process", "use tenacity for retries"]
        assert len({r["id"] for r in records}) == 2
        assert {r["commit"] for r in records} == {head}
        note = machine.git("notes", "--ref=agy/decisions", "show", head)
        assert len(note.splitlines()) == 2, note  # one line each, no duplicate
        shown = machine.git("log", "-1", "--notes=agy/decisions", head)
        assert "one pool per process" in shown and "use tenacity for retries" in shown


# ---- 7. a race: someone pushes between our fetch and our push ---------------------------------


def test_a_push_between_fetch_and_push_is_retried_and_merged(net: Net, tmp_path: Path) -> None:
    a, b = two_machines(net)
    a.ok("patch", "--add", "key_data=- seen on A")
    a.ok("decide", "--type", "Rule", "decided on A")
    b.ok("patch", "--add", "failed_attempts=tried on B")
    b.ok("decide", "--type", "Rule", "decided on B")
    b_tip = b.tip()
    # A `git` early on A's PATH: the first push A makes runs B's push first, so A's push finds the
    # remote moved after A fetched it.
    real_git = shutil.which("git")
    assert real_git is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "raced"
    wrapper = bin_dir / "git"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = push ] && [ ! -e "{marker}" ]; then\n'
        f'  : > "{marker}"\n'
        f"  env -u GIT_DIR -u GIT_WORK_TREE {real_git} -C {shlex.quote(str(b.path))} push -q "
        f"origin refs/agy/state:{ON_REMOTE} refs/notes/agy/decisions || exit 99\n"
        "fi\n"
        f'exec {real_git} "$@"\n'
    )
    wrapper.chmod(0o755)
    a.env["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    report = a.sync()
    assert marker.exists()
    assert report["rounds"] >= 2
    assert report["chains"][0]["action"] == "merged"
    tip = a.tip()
    assert net.remote_ref() == tip
    assert b_tip in a.parents(tip)
    text = a.tip_text()
    assert "- seen on A" in text and "- tried on B" in text
    assert report["notes"] == "merged"
    assert b.sync()["chains"][0]["action"] == "fast-forward"
    assert b.ref() == tip
    for machine in (a, b):
        texts = sorted(d["text"] for d in json.loads(machine.ok("decisions", "--json")))
        assert texts == ["decided on A", "decided on B"]


def test_a_push_losing_the_race_at_the_remotes_ref_lock_is_retried(net: Net) -> None:
    """The other push lands after ours began but before the remote updates the ref (a
    pre-receive hook on the remote pushes B's chain): git reports `[remote rejected] (failed to
    update ref)`; that is a race too, not a refusal."""
    a, b = two_machines(net)
    a.ok("patch", "--add", "key_data=- seen on A")
    b.ok("patch", "--add", "failed_attempts=tried on B")
    b.ok("decide", "--type", "Rule", "decided on B")
    b_tip = b.tip()
    marker = net.root / "raced"
    clear = " ".join(
        f"-u {name}"
        for name in (
            "GIT_DIR",
            "GIT_QUARANTINE_PATH",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        )
    )
    net.hook(
        "pre-receive",
        "hit=\n"
        'while read -r old new ref; do case "$ref" in refs/agy/users/*) hit=1;; esac; done\n'
        f'if [ -n "$hit" ] && [ ! -e "{marker}" ]; then\n'
        f'  : > "{marker}"\n'
        f"  env {clear} git -C {shlex.quote(str(b.path))} push -q origin "
        f"refs/agy/state:{ON_REMOTE} refs/notes/agy/decisions >&2 || exit 1\n"
        "fi\n"
        "exit 0\n",
    )
    a.ok("decide", "--type", "Rule", "decided on A")
    report = a.sync()
    assert marker.exists()
    assert report["rounds"] == 2
    assert report["chains"][0]["action"] == "merged"
    tip = a.tip()
    assert net.remote_ref() == tip and b_tip in a.parents(tip)
    assert "- seen on A" in a.tip_text() and "- tried on B" in a.tip_text()
    assert report["notes"] == "merged"
    texts = sorted(d["text"] for d in json.loads(a.ok("decisions", "--json")))
    assert texts == ["decided on A", "decided on B"]


def test_a_ref_the_remote_cannot_update_is_refused_after_one_more_round(net: Net) -> None:
    """A stale lock on the remote is no race: the next fetch shows nobody moved the ref."""
    a = net.clone("a")
    start_task(a)
    a.sync()
    a.ok("patch", "--add", "key_data=- after the first push")
    on_remote = net.remote_ref()
    lock = net.remote / f"{ON_REMOTE}.lock"
    lock.write_text("")
    before = a.ref()
    proc = a.run("sync")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(f"error: origin refused {ON_REMOTE}: "), proc.stderr
    assert a.ref() == before and net.remote_ref() == on_remote
    lock.unlink()
    assert a.sync()["rounds"] == 1
    assert net.remote_ref() == a.ref()


# ---- 8. a remote that refuses custom refs ------------------------------------------------------


def test_a_remote_refusing_custom_refs_is_an_error_naming_the_ref(net: Net) -> None:
    a = net.clone("a")
    start_task(a)
    net.hook(
        "update",
        'case "$1" in refs/agy/*|refs/notes/agy/*) echo "custom refs are not allowed" >&2; '
        "exit 1;; esac\nexit 0\n",
    )
    before = a.ref()
    proc = a.run("sync")
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert ON_REMOTE in errors[0] or "refs/notes/agy/decisions" in errors[0]
    assert "hint:" in proc.stderr
    assert a.ref() == before
    assert net.remote_ref() is None
    assert a.view.read_text() == a.tip_text()


# ---- 9. a dirty view during sync --------------------------------------------------------------


def dirty_view_setup(net: Net) -> tuple[Machine, Machine, str]:
    """A saved one change and has an unsaved hand edit; B's change is on the remote."""
    a, b = two_machines(net)
    b.ok("patch", "--add", "key_data=- from B")
    b.sync()
    a.ok("patch", "--add", "failed_attempts=saved on A")
    written_from = a.ref()
    assert written_from is not None
    text = a.view.read_text().replace(
        "- the timeout is hard-coded", "- the timeout is hard-coded\n- unsaved on A"
    )
    a.view.write_text(text)
    return a, b, written_from


def test_a_dirty_view_is_left_alone_and_a_later_save_merges_three_ways(net: Net) -> None:
    a, _b, written_from = dirty_view_setup(net)
    before = a.view.read_bytes()
    proc = a.run("sync", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["view"] == "kept"
    assert report["chains"][0]["action"] == "merged"
    assert a.view.read_bytes() == before
    human = a.run("sync")
    assert human.returncode == 0
    assert "warning:" in human.stderr and "STATE.md" in human.stderr
    assert a.view.read_bytes() == before
    tip = a.ref()
    assert tip is not None and written_from in a.parents(tip)
    assert "- from B" in a.tip_text() and "- saved on A" in a.tip_text()
    assert "unsaved on A" not in a.tip_text()
    # save merges the edits three ways against the snapshot the view was written from.
    saved = json.loads(a.ok("save", "--json"))
    assert saved.get("merged") is True
    text = a.tip_text()
    for line in ("- from B", "- saved on A", "- unsaved on A", "- the timeout is hard-coded"):
        assert content_lines(text).count(line) == 1, text
    assert a.view.read_text() == text
    assert a.git("rev-list", "--count", f"{tip}..refs/agy/state").strip() == "1"


def test_sync_force_replaces_a_dirty_view_and_keeps_the_old_text(net: Net) -> None:
    a, _b, _ = dirty_view_setup(net)
    before = a.view.read_text()
    proc = a.run("sync", "--force")
    assert proc.returncode == 0, proc.stderr
    assert a.view.read_text() == a.tip_text()
    assert "- from B" in a.view.read_text()
    kept = re.search(r"kept in (\S+)", proc.stdout + proc.stderr)
    assert kept, proc.stdout + proc.stderr
    assert Path(kept.group(1)).read_text() == before


# ---- 10. a teammate on the same remote --------------------------------------------------------


def test_a_teammates_chain_lands_under_their_name_and_merges_only_on_request(net: Net) -> None:
    a = net.clone("a")
    start_task(a)
    a.sync()
    mate = net.clone("mate", MATE_EMAIL)
    report = mate.sync()
    assert report["user"] == MATE
    # Nothing of their own yet: A's chain is not theirs to adopt.
    assert mate.ref() is None
    mate.ok("patch", "--set", "goal=Mate's own task", "--todo", "review the pool")
    assert MATE not in USER
    pushed = mate.sync()
    assert f"refs/agy/users/{MATE}/state" in pushed["pushed"]
    assert net.remote_ref(f"refs/agy/users/{MATE}/state") == mate.ref()
    assert net.remote_ref() == a.ref()
    # A plain sync leaves A's chain alone (the teammate's is only fetched).
    a_tip = a.tip()
    plain = a.sync()
    assert [c["ref"] for c in plain["chains"]] == ["refs/agy/state"]
    assert a.ref() == a_tip and net.remote_ref() == a_tip
    assert a.ref(f"refs/agy-remotes/origin/users/{MATE}/state") == mate.ref()
    assert "Mate's own task" not in a.tip_text()
    # --from merges on request (by the name on the remote, or by their email).
    merged = a.sync("--from", MATE_EMAIL)
    assert [c["action"] for c in merged["chains"]][-1] == "merged"
    tip = a.ref()
    assert tip is not None and sorted(a.parents(tip)) == sorted([a_tip, mate.tip()])
    assert net.remote_ref() == tip
    assert net.remote_ref(f"refs/agy/users/{MATE}/state") == mate.ref()  # theirs untouched
    # An empty chain adopts it.
    fresh = net.clone("fresh")
    fresh.git("config", "agy.user", "dev-laptop-2")
    adopted = fresh.sync("--from", MATE)
    assert adopted["chains"][-1]["action"] == "adopted"
    assert fresh.ref() == mate.ref()
    assert fresh.view.read_text() == mate.tip_text()
    # Nobody by that name: not found.
    nobody = a.run("sync", "--from", "nobody")
    assert nobody.returncode == 3, nobody.stderr
    assert nobody.stderr.startswith("error:")


# ---- 11. archive on one side meets edits on the other -----------------------------------------


def test_archive_meets_edits_reopens_from_the_edited_side(net: Net) -> None:
    a, b = two_machines(net)
    a.ok("archive")
    archives = a.git("for-each-ref", "--format=%(refname)", "refs/agy/archive/").split()
    assert len(archives) == 1
    assert not a.view.exists()
    b.ok("patch", "--add", "key_data=- kept editing on B")
    converge(a, b)
    for machine in (a, b):
        assert machine.ref(archives[0]) is not None
        assert machine.ref(archives[0]) == a.ref(archives[0])
        issues = machine.section("open_issues")
        notes = [line for line in issues if line.startswith("- (sync)")]
        assert len(notes) == 1 and archives[0] in notes[0] and "archived" in notes[0], issues
        assert "- kept editing on B" in machine.section("key_data")
        assert machine.section("goal") == ["Make the pool retry"]
        assert machine.view.read_text() == machine.tip_text()  # A's view came back


def test_archive_on_one_side_and_no_edits_on_the_other_stays_closed(net: Net) -> None:
    a, b = two_machines(net)
    c = net.clone("c")
    assert c.sync()["view"] == "refreshed"
    c.ok("phase", "PLANNING")  # a new snapshot with the same document: no edits
    a.ok("archive")
    closing = a.ref()
    a.sync()
    report = b.sync()  # behind: fast-forward to the closing snapshot
    assert report["chains"][0]["action"] == "fast-forward"
    assert report["view"] == "removed"
    assert b.ref() == closing
    assert not b.view.exists()
    merged = c.sync()  # diverged, but without edits: still closed
    assert merged["chains"][0]["action"] == "merged"
    assert merged["view"] == "removed"
    assert not c.view.exists()
    assert c.git("ls-tree", "refs/agy/state").strip() == ""
    trailer = c.git(
        "log", "-1", "--format=%(trailers:key=Agy-Archived,valueonly)", "refs/agy/state"
    ).strip()
    assert trailer.startswith("refs/agy/archive/")
    assert c.ref(trailer) is not None


# ---- 12. linked worktree chains ---------------------------------------------------------------


def test_linked_worktree_chains_travel_under_the_user_and_merge(net: Net) -> None:
    a, b = two_machines(net)
    wt_a = Machine(net.root / "trees-a" / "feature")
    wt_b = Machine(net.root / "trees-b" / "feature")
    a.git("worktree", "add", "-q", "-b", "feature", str(wt_a.path))
    b.git("worktree", "add", "-q", "-b", "feature", str(wt_b.path))
    wt_a.ok("patch", "--set", "goal=Feature work", "--todo", "sketch the API")
    remote_wt = f"refs/agy/users/{USER}/wt/feature/state"
    report = wt_a.sync()
    assert {c["ref"] for c in report["chains"]} == {"refs/agy/state", "refs/agy/wt/feature/state"}
    assert net.remote_ref(remote_wt) == a.ref("refs/agy/wt/feature/state")
    # B's linked worktree of the same name takes it, then both go on and diverge.
    got = wt_b.sync()
    assert {c["ref"]: c["action"] for c in got["chains"]}["refs/agy/wt/feature/state"] == "adopted"
    assert wt_b.view.read_text() == wt_a.view.read_text()
    wt_a.ok("patch", "--add", "key_data=- from A's worktree")
    wt_b.ok("patch", "--add", "open_issues=from B's worktree")
    wt_a.sync()
    merged = wt_b.sync()
    actions = {c["ref"]: c["action"] for c in merged["chains"]}
    assert actions["refs/agy/wt/feature/state"] == "merged"
    wt_a.sync()
    tip = a.ref("refs/agy/wt/feature/state")
    assert tip == b.ref("refs/agy/wt/feature/state") == net.remote_ref(remote_wt)
    assert tip is not None and len(a.parents(tip)) == 2
    text = a.tip_text("refs/agy/wt/feature/state")
    assert "- from A's worktree" in text and "- from B's worktree" in text
    assert wt_a.view.read_text() == text
    # The main chains were not touched by the worktree's.
    assert a.ref() == b.ref() == net.remote_ref()
    assert "Feature work" not in a.tip_text()


# ---- 13. remote setup ---------------------------------------------------------------------------


def test_remote_setup_adds_fetch_refspecs_only_and_a_push_line_that_works(net: Net) -> None:
    a = net.clone("a")
    first = a.ok("remote", "setup")
    a.ok("remote", "setup")  # idempotent
    fetch = a.git("config", "--get-all", "remote.origin.fetch").splitlines()
    assert fetch == [
        "+refs/heads/*:refs/remotes/origin/*",
        "+refs/agy/*:refs/agy-remotes/origin/*",
        "+refs/notes/agy/*:refs/notes/agy-remotes/origin/*",
    ]
    assert a.git("config", "--get-all", "remote.origin.push", check=False) == ""
    assert a.git("config", "agy.user").strip() == USER
    # The printed push line works as printed.
    start_task(a)
    line = next(x for x in first.splitlines() if "git push" in x)
    command = line[line.index("git push") :]
    assert command == f"git push origin refs/agy/state:{ON_REMOTE}"
    a.git(*shlex.split(command)[1:])
    assert net.remote_ref() == a.ref()
    # A bare `git push` still sends the branch only.
    a.ok("decide", "--type", "Rule", "never force")
    a.git("commit", "-q", "--allow-empty", "-m", "code")
    a.git("push", "-q")
    assert net.remote_ref("refs/heads/main") == a.ref("HEAD")
    assert net.remote_ref("refs/notes/agy/decisions") is None
    # A plain `git fetch` in another clone brings the agy refs.
    b = net.clone("b")
    b.ok("remote", "setup")
    b.git("fetch", "-q")
    assert b.ref(f"refs/agy-remotes/origin/users/{USER}/state") == a.ref()


# ---- the transport is the user's git --------------------------------------------------------


def test_sync_goes_through_the_users_ssh_command(net: Net) -> None:
    """GIT_SSH_COMMAND (like GIT_ASKPASS, proxies…) reaches the git that sync runs."""
    a = net.clone("a")
    start_task(a)
    log = net.root / "ssh.log"
    fake_ssh = net.root / "fake-ssh"
    fake_ssh.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{log}"\n'
        'case "$1" in -G) exit 0;; esac\n'  # OpenSSH's probe
        'for last; do :; done\nexec sh -c "$last"\n'
    )
    fake_ssh.chmod(0o755)
    a.git("remote", "set-url", "origin", f"ssh://build-host{net.remote}")
    a.env["GIT_SSH_COMMAND"] = str(fake_ssh)
    a.git("fetch", "-q")  # git itself gets through
    proc = a.run("sync")
    assert proc.returncode == 0, proc.stderr
    assert "git-receive-pack" in log.read_text()
    assert net.remote_ref() == a.ref()


def test_archives_job_records_and_tags_are_shared_never_forced(net: Net) -> None:
    a, b = two_machines(net)
    tree = a.git("write-tree").strip()
    job = a.git("commit-tree", "-m", "job round 1", tree).strip()
    a.git("update-ref", "refs/agy/jobs/j-20260102-030405-abcd", job)
    # Checkpoints as `checkpoint` writes them (Agy-State: in the message): only those travel.
    a.git("tag", "-a", "-m", f"A's\n\nAgy-State: {a.tip()}", "checkpoint-20260102-030405")
    b.git("tag", "-a", "-m", f"B's\n\nAgy-State: {b.tip()}", "checkpoint-20260102-030405")
    pushed = a.sync()
    assert "refs/agy/jobs/j-20260102-030405-abcd" in pushed["pushed"]
    got = b.sync()
    assert "refs/agy/jobs/j-20260102-030405-abcd" in got["received"]
    assert got["clashes"] == ["refs/tags/checkpoint-20260102-030405"]
    assert b.git("tag", "-l", "-n1", "checkpoint-*").split()[1] == "B's"
    assert net.remote_ref("refs/tags/checkpoint-20260102-030405") == a.ref(
        "refs/tags/checkpoint-20260102-030405"
    )
    human = b.run("sync")
    assert human.returncode == 0 and "checkpoint-20260102-030405" in human.stderr
    # A job record that moved on fast-forwards.
    job2 = a.git("commit-tree", "-p", job, "-m", "job round 2", tree).strip()
    a.git("update-ref", "refs/agy/jobs/j-20260102-030405-abcd", job2)
    a.sync()
    assert "refs/agy/jobs/j-20260102-030405-abcd" in b.sync()["received"]
    assert b.ref("refs/agy/jobs/j-20260102-030405-abcd") == job2
    # Job branches are never sent: nothing under refs/heads/ but what the seed pushed.
    a.git("branch", "agy/j-20260102-030405-abcd")
    a.sync()
    assert net.remote_ref("refs/heads/agy/j-20260102-030405-abcd") is None


# ---- 14. identity, remote, two syncs at once ---------------------------------------------------


def test_sync_without_a_name_or_a_remote(net: Net, tmp_path: Path) -> None:
    anon = net.clone("anon", email=None)
    start_task(anon)
    proc = anon.run("sync")
    assert proc.returncode == 1
    assert proc.stderr.startswith("error:") and "hint:" in proc.stderr
    assert net.remote_ref() is None
    lonely = Machine(tmp_path / "lonely")
    run_git(tmp_path, "init", "-q", "-b", "main", str(lonely.path))
    lonely.git("config", "user.email", EMAIL)
    proc = lonely.run("sync")
    assert proc.returncode == 64, proc.stderr
    assert proc.stderr.startswith("error:")


def test_two_syncs_at_once_in_one_repository_serialise(net: Net) -> None:
    a, b = two_machines(net)
    b.ok("patch", "--add", "key_data=- from B")
    b.sync()
    a.ok("patch", "--add", "failed_attempts=from A")
    env = {**os.environ, **a.env}
    argv = [sys.executable, "-m", "gitstate", "sync", "--json"]
    procs = [
        subprocess.Popen(argv, cwd=a.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=60) for p in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode()
    actions = sorted(json.loads(out)["chains"][0]["action"] for out, _ in outputs)
    assert actions in (["ahead", "merged"], ["merged", "up-to-date"]), actions
    tip = a.ref()
    assert net.remote_ref() == tip
    assert tip is not None and len(a.parents(tip)) == 2
    merges = a.git("rev-list", "--merges", "refs/agy/state").split()
    assert merges == [tip]  # one merge, not one per sync
    assert "- from B" in a.tip_text() and "- from A" in a.tip_text()
    assert a.view.read_text() == a.tip_text()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_sync_waits_for_the_lock_held_by_another(net: Net) -> None:
    import fcntl

    a = net.clone("a")
    start_task(a)
    lock = a.path / ".git" / "agy" / "sync.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen(
            [sys.executable, "-m", "gitstate", "sync"],
            cwd=a.path,
            env=os.environ,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

        def waiting_on_the_lock() -> bool:
            fds = Path(f"/proc/{proc.pid}/fd")
            try:
                return any(os.readlink(fd) == str(lock) for fd in fds.iterdir())
            except OSError:
                return False

        wait_until(waiting_on_the_lock)
        assert proc.poll() is None
        assert net.remote_ref() is None  # nothing fetched or pushed while we hold it
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert net.remote_ref() == a.ref()
