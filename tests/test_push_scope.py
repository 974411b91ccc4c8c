"""What is pushed where (docs/sync.md): only this person's refs, only to the agy remote, only
after the user's push really happened — for the pre-push hook and for sync.

Real bare remotes in tmp: `origin` (the agy remote), `public` (any other remote), and a second
team remote where nothing was ever received from, to show teammates' refs are never relayed.
Each clone runs the tool as a subprocess with its own identity (a teammate writes as another
person: GIT_COMMITTER_EMAIL too, as git would), and git with the hooks installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import wait_until

EMAIL = "dev@example.com"
USER = "dev-example.com"
MATE_EMAIL = "mate@example.org"
MATE = "mate-example.org"
MINE = f"refs/agy/users/{USER}/state"


def run_git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd} failed: {proc.stderr}")
    return proc.stdout


def refs_of(bare: Path, prefix: str = "refs/") -> dict[str, str]:
    out = run_git(bare, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    return dict(line.split(" ", 1) for line in out.splitlines())


def agy_refs(bare: Path) -> set[str]:
    return {r for r in refs_of(bare) if not r.startswith("refs/heads/")}


@dataclass
class Clone:
    path: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gitstate", *args],
            cwd=self.path,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    def ok(self, *args: str) -> str:
        proc = self.run(*args)
        assert proc.returncode == 0, f"{args}: {proc.returncode} {proc.stderr}"
        return proc.stdout

    def git(self, *args: str, check: bool = True) -> str:
        return run_git(self.path, *args, env=self.env, check=check)

    def push(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`git push ARGS…`, then wait until the hook's background step logged its decision."""
        before = self.decisions()
        proc = subprocess.run(
            ["git", "push", *args],
            cwd=self.path,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        wait_until(lambda: len(self.decisions()) > len(before))
        return proc

    def decisions(self) -> list[str]:
        """push.log's entries (each starts `… push to <remote>: `), newest last."""
        log = self.path / ".git" / "agy" / "push.log"
        text = log.read_text() if log.exists() else ""
        entries: list[str] = []
        for line in text.splitlines():
            if " push to " in line.split(": ", 1)[0]:
                entries.append(line)
            elif entries:
                entries[-1] += "\n" + line
        return entries

    def last(self) -> str:
        return self.decisions()[-1]

    def tip(self, ref: str = "refs/agy/state") -> str:
        return self.git("rev-parse", "--verify", ref).strip()

    def start(self, goal: str = "Make the pool retry") -> None:
        self.ok("patch", "--set", f"goal={goal}", "--todo", "write the retry test")


@dataclass
class Net:
    root: Path
    origin: Path
    public: Path

    def bare(self, name: str) -> Path:
        path = self.root / f"{name}.git"
        run_git(self.root, "init", "-q", "--bare", "-b", "main", str(path))
        return path

    def clone(self, name: str, email: str = EMAIL, *, teammate: bool = False) -> Clone:
        run_git(self.root, "clone", "-q", str(self.origin), name)
        env = {"GIT_COMMITTER_EMAIL": email, "GIT_AUTHOR_EMAIL": email} if teammate else {}
        clone = Clone(self.root / name, env)
        clone.git("config", "user.email", email)
        clone.git("remote", "add", "public", str(self.public))
        return clone


@pytest.fixture
def net(tmp_path: Path, hermetic: Path) -> Net:
    made = Net(tmp_path, tmp_path / "origin.git", tmp_path / "public.git")
    made.bare("origin")
    made.bare("public")
    seed = tmp_path / "seed"
    run_git(tmp_path, "init", "-q", "-b", "main", str(seed))
    run_git(seed, "commit", "-q", "--allow-empty", "-m", "initial")
    run_git(seed, "push", "-q", str(made.origin), "main")
    return made


@pytest.fixture
def dev(net: Net) -> Clone:
    """A clone with origin as its agy remote and the git hooks installed; a task started."""
    dev = net.clone("dev")
    dev.ok("remote", "setup", "origin")
    dev.ok("install", "--git")
    dev.start()
    return dev


def checkpoint(clone: Clone, message: str = "here") -> str:
    name: str = json.loads(clone.ok("checkpoint", "-m", message, "--json"))["name"]
    return name


# ---- pre-push: only to the agy remote, only after a real push ---------------------------------


def test_remote_setup_records_the_agy_remote(net: Net) -> None:
    dev = net.clone("dev")
    out = dev.ok("remote", "setup", "origin")
    assert dev.git("config", "agy.remote").strip() == "origin"
    assert "set agy.remote=origin" in out
    assert "agy.remote" not in dev.ok("remote", "setup")  # idempotent, agy.remote is the default
    dev.ok("remote", "setup", "public")
    assert dev.git("config", "agy.remote").strip() == "public"


def test_nothing_reaches_another_remote_a_dry_run_or_a_rejected_push(net: Net, dev: Clone) -> None:
    tag = checkpoint(dev)
    dev.ok("decide", "--type", "Rule", "never force")
    dev.git("commit", "-q", "--allow-empty", "-m", "work")

    assert dev.push("public", "main").returncode == 0
    assert "push to public: nothing carried: not the agy remote (origin)" in dev.last()
    assert set(refs_of(net.public)) == {"refs/heads/main"}

    assert dev.push("--dry-run", "origin", "main").returncode == 0
    assert "push to origin: nothing carried: origin does not show the push" in dev.last()

    hook = net.origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n")
    hook.chmod(0o755)
    assert dev.push("origin", "main").returncode != 0
    assert "push to origin: nothing carried: origin does not show the push" in dev.last()
    hook.unlink()

    # Someone else moved main: a non-fast-forward, rejected before or after the hook ran.
    other = net.clone("other")
    other.git("commit", "-q", "--allow-empty", "-m", "theirs")
    other.git("push", "-q", "origin", "main")
    assert dev.push("origin", "main").returncode != 0
    assert "nothing carried: origin does not show the push" in dev.last()
    dev.git("fetch", "-q", "origin")
    assert dev.push("origin", "main").returncode != 0
    assert "nothing carried: the push sent no ref" in dev.last()
    assert agy_refs(net.origin) == set()

    # The user's push that happens carries this person's refs, to origin only.
    dev.git("pull", "-q", "--rebase", "origin", "main")
    assert dev.push("origin", "main").returncode == 0
    assert "push to origin: exit 0" in dev.last()
    assert agy_refs(net.origin) == {MINE, f"refs/tags/{tag}", "refs/notes/agy/decisions"}
    assert set(refs_of(net.public)) == {"refs/heads/main"}
    assert "push to public" not in "".join(dev.decisions()[1:])


def test_a_push_to_the_agy_remotes_url_carries(net: Net, dev: Clone) -> None:
    dev.git("commit", "-q", "--allow-empty", "-m", "work")
    assert dev.push(str(net.origin), "main").returncode == 0
    assert "exit 0" in dev.last()
    assert refs_of(net.origin)[MINE] == dev.tip()
    # The URL of another remote does not.
    dev.git("commit", "-q", "--allow-empty", "-m", "more")
    assert dev.push(str(net.public), "main").returncode == 0
    assert "nothing carried: not the agy remote (origin)" in dev.last()
    assert agy_refs(net.public) == set()


def test_without_an_agy_remote_nothing_is_carried_and_doctor_says_how(net: Net) -> None:
    dev = net.clone("dev")
    dev.ok("install", "--git")
    dev.start()
    dev.git("commit", "-q", "--allow-empty", "-m", "work")
    assert dev.push("origin", "main").returncode == 0
    assert "nothing carried: no agy remote (git agy-state remote setup)" in dev.last()
    assert agy_refs(net.origin) == set()
    proc = dev.run("doctor", "--json")
    assert proc.returncode == 0  # advice, not a problem
    remote = next(c for c in json.loads(proc.stdout)["checks"] if c["name"] == "remote")
    assert remote["status"] == "warn"
    assert remote["hint"] == "to carry them on every push: git agy-state remote setup origin"
    human = dev.run("doctor")
    assert "hint: to carry them on every push: git agy-state remote setup origin" in human.stdout


# ---- only this person's refs --------------------------------------------------------------------


def teammate_shares(net: Net) -> dict[str, str]:
    """A teammate puts an archive, a job record, a checkpoint and a decision on origin."""
    mate = net.clone("mate", MATE_EMAIL, teammate=True)
    mate.ok("remote", "setup", "origin")
    mate.start("Mate's task")
    mate.ok("archive")
    archive = mate.git("for-each-ref", "--format=%(refname)", "refs/agy/archive/").split()[0]
    mate.start("Mate's next task")
    tree = mate.git("write-tree").strip()
    job = mate.git("commit-tree", "-m", "job round 1", tree).strip()
    mate.git("update-ref", "refs/agy/jobs/j-20260102-030405-mate", job)
    tag = checkpoint(mate, "mate's checkpoint")
    mate.ok("decide", "--type", "Rule", "mate's rule")
    mate.ok("sync")
    return {"archive": archive, "job": "refs/agy/jobs/j-20260102-030405-mate", "tag": tag}


def test_refs_received_from_teammates_are_never_relayed(net: Net, dev: Clone) -> None:
    theirs = teammate_shares(net)
    got = json.loads(dev.ok("sync", "--json"))
    assert {theirs["archive"], theirs["job"], f"refs/tags/{theirs['tag']}"} <= set(got["received"])
    dev.ok("archive")
    mine = set(dev.git("for-each-ref", "--format=%(refname)", "refs/agy/archive/").split())
    mine.discard(theirs["archive"])
    dev.start("Next task")
    own_tag = checkpoint(dev)
    # A second team remote: everything that arrives there came from this person.
    team = net.bare("team")
    dev.git("remote", "add", "team", str(team))
    dev.ok("remote", "setup", "team")
    assert dev.push("team", "main").returncode == 0
    assert "push to team: exit 0" in dev.last()
    wanted = {MINE, *mine, f"refs/tags/{own_tag}", "refs/notes/agy/decisions"}
    assert agy_refs(team) == wanted
    log = dev.last()
    assert f"kept back: {theirs['archive']} (committed by {MATE_EMAIL}, not you)" in log
    assert f"kept back: {theirs['job']} (committed by {MATE_EMAIL}, not you)" in log
    assert f"kept back: refs/tags/{theirs['tag']} (tagged by {MATE_EMAIL}, not you)" in log
    # sync, to the agy remote by default, pushes by the same rules.
    report = json.loads(dev.ok("sync", "--json"))
    assert report["remote"] == "team"
    assert agy_refs(team) == wanted
    assert not {theirs["archive"], theirs["job"], f"refs/tags/{theirs['tag']}"} & set(
        report["pushed"]
    )
    assert f"refs/agy/users/{MATE}/state" not in refs_of(team)


def test_checkpoint_like_tags_that_are_not_ours_stay_home(net: Net, dev: Clone) -> None:
    head = dev.git("rev-parse", "HEAD").strip()
    dev.git("tag", "checkpoint-20260101-000000")  # lightweight: no message at all
    dev.git("tag", "-a", "-m", "no state", "checkpoint-20260101-000001")
    run_git(
        dev.path,
        "-c",
        f"user.email={MATE_EMAIL}",
        "tag",
        "-a",
        "-m",
        f"theirs\n\nAgy-State: {dev.tip()}",
        "checkpoint-20260101-000002",
        env={"GIT_COMMITTER_EMAIL": MATE_EMAIL},
    )
    own = checkpoint(dev)
    dev.git("commit", "-q", "--allow-empty", "-m", "work")
    assert dev.push("origin", "main").returncode == 0
    tags = {r for r in agy_refs(net.origin) if r.startswith("refs/tags/")}
    assert tags == {f"refs/tags/{own}"}
    assert refs_of(net.origin)["refs/heads/main"] != head  # the push took the tagged commit


def test_a_checkpoint_on_an_unpushed_branch_waits_until_its_commit_is_pushed(
    net: Net, dev: Clone
) -> None:
    dev.git("switch", "-q", "-c", "private")
    dev.git("commit", "-q", "--allow-empty", "-m", "secret work")
    private = dev.git("rev-parse", "HEAD").strip()
    tag = checkpoint(dev, "on the private branch")
    dev.git("switch", "-q", "main")
    dev.git("commit", "-q", "--allow-empty", "-m", "public work")
    assert dev.push("origin", "main").returncode == 0
    assert f"kept back: refs/tags/{tag} (its commit {private[:7]} is not on the remote)" in (
        dev.last()
    )
    assert MINE in refs_of(net.origin)
    assert f"refs/tags/{tag}" not in refs_of(net.origin)
    missing = subprocess.run(["git", "-C", str(net.origin), "cat-file", "-e", private], check=False)
    assert missing.returncode != 0  # the private commit never left
    # sync holds it back too.
    report = json.loads(dev.ok("sync", "--json"))
    assert f"refs/tags/{tag}" not in report["pushed"]
    assert f"refs/tags/{tag}" not in refs_of(net.origin)
    # Pushing the branch takes the commit there: now the checkpoint goes along.
    assert dev.push("origin", "private").returncode == 0
    assert refs_of(net.origin)[f"refs/tags/{tag}"] == dev.git("rev-parse", tag).strip()


def test_sync_defaults_to_the_agy_remote_not_the_branchs(net: Net, dev: Clone) -> None:
    dev.git("config", "branch.main.remote", "public")
    dev.git("config", "branch.main.merge", "refs/heads/main")
    report = json.loads(dev.ok("sync", "--json"))
    assert report["remote"] == "origin"
    assert MINE in report["pushed"]
    assert agy_refs(net.public) == set()


# ---- remotes that look like options -------------------------------------------------------------


def test_remote_arguments_beginning_with_a_dash_are_refused(net: Net, tmp_path: Path) -> None:
    dev = net.clone("dev")
    dev.start()
    marker = tmp_path / "X"
    for args in (
        ("sync", "--", f"--upload-pack=touch {marker}"),
        ("sync", "--", f"--receive-pack=touch {marker}"),
        ("remote", "setup", "--", f"--upload-pack=touch {marker}"),
    ):
        proc = dev.run(*args)
        assert not marker.exists(), args  # git never took it for an option
        assert proc.returncode == 64, (args, proc.stderr)
        assert proc.stderr.startswith("error: ") and "begins with '-'" in proc.stderr
    assert not marker.exists()
    assert dev.git("config", "--get", "agy.remote", check=False) == ""
    # An agy.remote set by hand to such a value is never used.
    dev.git("config", "agy.remote", f"--upload-pack=touch {marker}")
    doctor = json.loads(dev.run("doctor", "--json").stdout)
    remote = next(c for c in doctor["checks"] if c["name"] == "remote")
    assert remote["status"] == "fail"
    dev.run("sync")
    assert not marker.exists()


def test_doctor_fails_hooks_of_an_older_version_that_the_work_tree_can_take_over(
    net: Net, dev: Clone
) -> None:
    hook = dev.path / ".git" / "hooks" / "post-commit"
    hook.write_text(hook.read_text().replace(" -I -m gitstate ", " -m gitstate "))
    proc = dev.run("doctor", "--json")
    assert proc.returncode == 1
    found = next(c for c in json.loads(proc.stdout)["checks"] if c["name"] == "git hooks")
    assert found["status"] == "fail" and "post-commit" in found["detail"]
    dev.ok("install", "--git")
    assert dev.run("doctor").returncode == 0


# ---- the confirmation, as plain values --------------------------------------------------------

A, B, Z = "a" * 40, "b" * 40, "0" * 40


def test_push_lines_keeps_only_well_formed_lines() -> None:
    from gitstate.usecases.sync.carry import PushLine, push_lines

    text = f"refs/heads/main {A} refs/heads/main {B}\n\ngarbage\nrefs/x {A} refs/x nothex\n"
    assert push_lines(text) == [PushLine("refs/heads/main", A, "refs/heads/main", B)]


@pytest.mark.parametrize(
    ("line", "remote", "happened"),
    [
        ((A, "refs/heads/main", B), {"refs/heads/main": A}, True),  # updated
        ((A, "refs/heads/main", B), {"refs/heads/main": B}, False),  # dry run or rejected
        ((A, "refs/heads/new", Z), {}, False),  # a new branch that never arrived
        ((Z, "refs/heads/old", B), {}, True),  # deleted, and gone
        ((Z, "refs/heads/old", B), {"refs/heads/old": B}, False),  # delete not done
        ((Z, "refs/heads/none", Z), {}, False),  # deleting nothing proves nothing
    ],
)
def test_push_happened(line: tuple[str, str, str], remote: dict[str, str], happened: bool) -> None:
    from gitstate.usecases.sync.carry import PushLine, push_happened

    local, ref, old = line
    assert push_happened([PushLine("refs/heads/x", local, ref, old)], remote) is happened
