"""`memory sync`: two brains through a bare remote, both ways; shared roots and unrelated
histories; the merge by session block and by section; size never refuses a merge; races."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from memory_support import as_json, brain_file, brain_git, ok, tip

from gitstate.memory.document import files
from gitstate.memory.document.sessions import parse_log
from gitstate.memory.usecases import write as memory_write

ROOT = "904ee2ece6ba66623eb6031c329c02bb1e4b8a27"
JAN2 = 1767312000.0  # 2026-01-02T00:00:00Z (the tests run in UTC)


class Brains:
    """Two machines' brains and the bare remote between them."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, cli: Any) -> None:
        self.a, self.b = root / "a.git", root / "b.git"
        self.remote = root / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(self.remote)], check=True)
        self.monkeypatch = monkeypatch
        self.cli = cli

    def on(self, brain: Path) -> Brains:
        self.monkeypatch.setenv("AGY_BRAIN", str(brain))
        return self

    def run(self, brain: Path, *args: str, input: str | None = None) -> Any:
        self.on(brain)
        return self.cli("memory", *args, input=input)

    def sync(self, brain: Path, *args: str) -> Any:
        return as_json(self.run(brain, "sync", "--json", *args))

    def remote_tip(self) -> str:
        return brain_git("rev-parse", "refs/agy/memory", brain=self.remote).strip()


@pytest.fixture
def brains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any) -> Brains:
    return Brains(tmp_path, monkeypatch, cli)


class TestRemote:
    def test_no_remote_known_is_a_usage_error(self, cli: Any) -> None:
        result = cli("memory", "sync")
        assert result.exit_code == 64
        assert "hint: git agy-state memory sync URL" in result.stderr

    def test_a_name_that_is_no_remote(self, cli: Any) -> None:
        result = cli("memory", "sync", "origin")
        assert result.exit_code == 64 and "neither a remote of the brain" in result.stderr

    def test_the_remote_is_remembered_in_the_brain(
        self, brains: Brains, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(brains.remote.parent)
        first = brains.sync(brains.a, "remote.git")  # relative: remembered absolute
        assert first["remote"] == str(brains.remote) and first["pushed"] is True
        config = brain_git("config", "agy.memoryRemote", brain=brains.a).strip()
        assert config == str(brains.remote)
        monkeypatch.chdir("/")
        assert brains.sync(brains.a)["action"] == "up-to-date"

    def test_a_remote_of_the_brain_by_name(self, brains: Brains) -> None:
        ok(brains.run(brains.a, "init"))
        brain_git("remote", "add", "backup", str(brains.remote), brain=brains.a)
        assert brains.sync(brains.a, "backup")["pushed"] is True
        assert brains.remote_tip() == tip(brains.a)

    @pytest.mark.parametrize("url", ["{tmp}/missing.git", "file://{tmp}/missing.git"])
    def test_an_unreachable_remote_fails_cleanly(
        self, brains: Brains, tmp_path: Path, url: str
    ) -> None:
        result = brains.run(brains.a, "sync", url.format(tmp=tmp_path))
        assert result.exit_code == 1 and result.stderr.startswith("error: git fetch")

    def test_a_remote_that_refuses_the_push_fails_cleanly(self, brains: Brains) -> None:
        ok(brains.run(brains.a, "add", "--layer", "knowledge", "kept at home"))
        hook = brains.remote / "hooks" / "pre-receive"
        hook.write_text("#!/bin/sh\necho 'no brains here' >&2\nexit 1\n")
        hook.chmod(0o755)
        mine = tip(brains.a)
        result = brains.run(brains.a, "sync", str(brains.remote))
        assert result.exit_code == 1
        assert result.stderr.startswith(f"error: {brains.remote} refused refs/agy/memory")
        assert tip(brains.a) == mine  # nothing lost at home
        assert brain_git("for-each-ref", brain=brains.remote) == ""


class TestBothWays:
    def test_two_brains_diverge_and_sync_through_a_bare_remote(self, brains: Brains) -> None:
        a, b = brains.a, brains.b
        ok(brains.run(a, "add", "--layer", "knowledge", "fact from A"))
        memory_write.session("A worked on 連線池", "demo", now=JAN2 + 9 * 3600)
        assert brains.sync(a, str(brains.remote))["pushed"] is True

        ok(brains.run(b, "init"))  # the second machine starts before its first sync
        assert tip(b) == ROOT
        ok(brains.run(b, "add", "--layer", "knowledge", "fact from B"))
        ok(brains.run(b, "add", "--layer", "identity", "B likes tea"))
        memory_write.session("B fixed the tests", "demo", now=JAN2 + 8 * 3600)
        done = brains.sync(b, str(brains.remote))
        assert (done["action"], done["pushed"]) == ("merged", True)
        # USER.md changed on B only: B's side, so not listed; the rest changed on both sides.
        assert {m["path"]: m["how"] for m in done["merged"]} == {
            "MEMORY.md": "sections",
            "projects/demo.md": "sections",
            "sessions/2026-01-02.md": "sessions",
        }
        merge = tip(b)
        assert len(brain_git("rev-list", "--parents", "-n1", merge, brain=b).split()) == 3
        assert brain_git("merge-base", merge + "^1", merge + "^2", brain=b).strip() == ROOT

        memory = brain_file("MEMORY.md", brain=b)
        assert "- fact from B\n- fact from A\n" in memory
        assert memory.count("## Technical Knowledge") == 1
        assert "B likes tea" in brain_file("USER.md", brain=b)
        _, blocks = parse_log(brain_file("sessions/2026-01-02.md", brain=b))
        assert [x.clock for x in blocks] == ["08:00:00", "09:00:00"]  # by time
        timeline = brain_file("projects/demo.md", brain=b)
        assert "session-080000" in timeline and "session-090000" in timeline
        found = as_json(brains.run(b, "search", "--json", "連線池"))
        assert sorted(h["path"] for h in found) == ["projects/demo.md", "sessions/2026-01-02.md"]

        back = brains.sync(a)  # the other way: A takes the merge
        assert back["action"] == "fast-forward"
        assert tip(a) == tip(b) == brains.remote_tip()
        assert brain_file("USER.md", brain=a) == brain_file("USER.md", brain=b)
        hits = as_json(brains.run(a, "search", "--json", "tea"))
        assert [h["path"] for h in hits] == ["USER.md"]  # the index caught up with the merge
        cache = a / "agy" / "cache" / "USER.md"
        assert "B likes tea" in cache.read_text()  # so did the hook's cache

    def test_unrelated_histories_merge_against_an_empty_base(self, brains: Brains) -> None:
        a, b = brains.a, brains.b
        ok(brains.run(a, "add", "--layer", "knowledge", "from A"))
        brains.sync(a, str(brains.remote))
        # B's brain began elsewhere: another root (an older tool, a hand-made repository).
        subprocess.run(["git", "init", "-q", "--bare", str(b)], check=True)
        blob = _git(
            b, "hash-object", "-w", "--stdin", input="# Mine\n\n## Technical Knowledge\n- from B\n"
        )
        tree = _git(b, "mktree", input=f"100644 blob {blob}\tMEMORY.md\n")
        root = _git(b, "commit-tree", tree, "-m", "another root")
        _git(b, "update-ref", "refs/agy/memory", root)
        done = brains.sync(b, str(brains.remote))
        assert done["action"] == "merged"
        assert brain_git("merge-base", tip(b) + "^1", tip(b) + "^2", brain=b, check=False) == ""
        memory = brain_file("MEMORY.md", brain=b)
        assert "- from B" in memory and "- from A" in memory
        assert memory.count("## Technical Knowledge") == 1
        assert brain_file("USER.md", brain=b) == files.USER_TEMPLATE
        assert brains.remote_tip() == tip(b)

    def test_a_deletion_on_one_side_stays_deleted(self, brains: Brains) -> None:
        a, b = brains.a, brains.b
        ok(brains.run(a, "add", "--layer", "knowledge", "keep"))
        ok(brains.run(a, "add", "--layer", "knowledge", "wrong"))
        brains.sync(a, str(brains.remote))
        brains.sync(b, str(brains.remote))
        ok(brains.run(a, "forget", "--layer", "knowledge", "wrong"))
        ok(brains.run(b, "add", "--layer", "knowledge", "new from B"))
        ok(brains.run(b, "add", "--layer", "identity", "B only"))
        brains.sync(a)
        assert brains.sync(b)["action"] == "merged"
        memory = brain_file("MEMORY.md", brain=b)
        assert "wrong" not in memory and "- keep\n- new from B\n" in memory

    def test_identical_blocks_once(self, brains: Brains) -> None:
        a, b = brains.a, brains.b
        brains.on(a)
        memory_write.session("shared", "demo", now=JAN2 + 3600)
        brains.sync(a, str(brains.remote))
        brains.sync(b, str(brains.remote))
        brains.on(a)
        memory_write.session("later on A", "demo", now=JAN2 + 3 * 3600)
        brains.on(b)
        memory_write.session("between, on B", "demo", now=JAN2 + 2 * 3600)
        brains.sync(a)
        brains.sync(b)
        _, blocks = parse_log(brain_file("sessions/2026-01-02.md", brain=b))
        summaries = [x.text.split("### Summary\n")[1] for x in blocks]
        assert summaries == ["shared", "between, on B", "later on A"]


class TestSize:
    def test_a_merge_is_never_refused_for_size(self, brains: Brains) -> None:
        a, b = brains.a, brains.b
        ok(brains.run(a, "init"))
        brains.sync(a, str(brains.remote))
        brains.sync(b, str(brains.remote))
        for brain, tag in ((a, "A"), (b, "B")):
            text = files.MEMORY_TEMPLATE + "".join(f"- {tag} fact {n}\n" for n in range(300))
            ok(brains.run(brain, "edit", "MEMORY.md", input=text))
        brains.sync(a)
        result = brains.run(b, "sync")
        ok(result)
        assert "warning: MEMORY.md 61" in result.stderr and "after the merge" in result.stderr
        lines = files.count_lines(brain_file("MEMORY.md", brain=b))
        assert lines > 600
        status = as_json(brains.run(b, "status", "--json"))
        assert status["over_limit"] is True and status["memory_lines"] == lines
        assert brains.run(b, "add", "--layer", "knowledge", "one more").exit_code == 1
        ok(brains.run(b, "forget", "--layer", "knowledge", "A fact"))
        assert files.count_lines(brain_file("MEMORY.md", brain=b)) < 400


class TestRace:
    def test_a_push_that_loses_a_race_fetches_and_merges_again(self, brains: Brains) -> None:
        a, b = brains.a, brains.b
        ok(brains.run(a, "add", "--layer", "knowledge", "base"))
        brains.sync(a, str(brains.remote))
        brains.sync(b, str(brains.remote))
        ok(brains.run(b, "add", "--layer", "knowledge", "B pushed meanwhile"))
        ok(brains.run(a, "add", "--layer", "knowledge", "A's own"))
        # B's push lands between A's fetch and A's push: the remote, as A's brain reaches it,
        # serves A's fetch, then (once) takes B's push before that fetch ends.
        marker = brains.remote.parent / "b-pushed"
        serve = brains.remote.parent / "upload-pack-then-b-pushes"
        push = f"git --git-dir={shlex.quote(str(b))} push -q {shlex.quote(str(brains.remote))}"
        serve.write_text(
            "#!/bin/sh\n"
            'git upload-pack "$@" || exit\n'
            f"[ -e {shlex.quote(str(marker))} ] && exit 0\n"
            f": > {shlex.quote(str(marker))}\n"
            f"unset GIT_DIR GIT_PROTOCOL; {push} refs/agy/memory >&2\n"
        )
        serve.chmod(0o755)
        brain_git("remote", "add", "shared", str(brains.remote), brain=a)
        brain_git("config", "remote.shared.uploadpack", str(serve), brain=a)
        done = brains.sync(a, "shared")
        assert done["rounds"] == 2 and done["pushed"] is True
        memory = brain_file("MEMORY.md", brain=a)
        assert "B pushed meanwhile" in memory and "A's own" in memory
        assert brains.remote_tip() == tip(a)


def test_the_projects_own_sync_never_carries_the_brain(
    repo: Repo, cli: Any, tmp_path: Path
) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    repo.git("remote", "add", "origin", str(origin))
    repo.git("config", "user.email", "me@example.com")
    ok(cli("patch", "--set", "goal=g", "--todo", "t"))
    ok(cli("memory", "add", "--layer", "knowledge", "private to the brain"))
    ok(cli("sync"))
    refs = subprocess.run(
        ["git", "--git-dir", str(origin), "for-each-ref", "--format=%(refname)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "refs/agy/users/" in refs and "memory" not in refs
    assert repo.ref("refs/agy/memory") is None


def _git(brain: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(brain), *args],
        input=input,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
