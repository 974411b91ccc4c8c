"""The git hooks on real repositories, driven by real `git` commands so the installed hooks fire.

install/uninstall and chaining with the user's own hooks; pre-push carrying the agy refs to a
bare remote after the push, in the background, never failing it; post-commit deriving
changed_files from git; post-checkout warning about a view saved on another branch.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from support import wait_until

from gitstate.storage.githooks import HOOKS, MARKER, PREV_SUFFIX, by_hand, script
from gitstate.usecases.sync.carry import agy_user, user_slug
from gitstate.usecases.workspace import Workspace

ZERO = "0" * 40
EMAIL = "Dev.Person@Example.COM"
USER = "dev.person-example.com"  # user_slug(EMAIL); GIT_AUTHOR_EMAIL (author@…) must not win
STATE_ON_REMOTE = f"refs/agy/users/{USER}/state"


# ---- driving git ----------------------------------------------------------------------------


def git(
    cwd: Path, *args: str, check: bool = True, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """git with its output captured, as an IDE or a script runs it (`timeout`: a hang guard)."""
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=os.environ,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def commit_all(cwd: Path, message: str = "work") -> subprocess.CompletedProcess[str]:
    git(cwd, "add", "-A", ".")
    return git(cwd, "commit", "-q", "-m", message)


def refs_of(path: Path) -> dict[str, str]:
    out = git(path, "for-each-ref", "--format=%(refname) %(objectname)").stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


def push_log(repo: Repo) -> str:
    log = repo.path / ".git" / "agy" / "push.log"
    return log.read_text() if log.exists() else ""


def push_entries(repo: Repo) -> int:
    return push_log(repo).count("push to origin: exit ")


def start_task(cli: Any, *todo: str) -> None:
    args = ["patch", "--set", "goal=Make the pool retry"]
    for text in todo or ("write the test",):
        args += ["--todo", text]
    result = cli(*args)
    assert result.exit_code == 0, result.stderr


def changed_files(cli: Any) -> list[str]:
    result = cli("show", "--section", "changed_files")
    assert result.exit_code == 0, result.stderr
    return result.stdout.splitlines()


def install(cli: Any) -> None:
    result = cli("install", "--git")
    assert result.exit_code == 0, result.output


def user_hook(
    path: Path, log: Path, exit_code: int = 0, mode: int = 0o755, extra: str = ""
) -> bytes:
    """A user's own hook: appends its name, argv (and a pre-push's stdin) to `log`."""
    text = (
        "#!/bin/sh\n"
        f'printf "%s %s\\n" "$(basename "$0")" "$*" >> "{log}"\n'
        f'case "$(basename "$0")" in pre-push*) cat >> "{log}";; esac\n'
        + (extra + "\n" if extra else "")
        + f"exit {exit_code}\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path.read_bytes()


def snapshot_dir(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
        for p in sorted(folder.iterdir())
        if not p.name.endswith(".sample")
    }


@pytest.fixture
def remote(repo: Repo, tmp_path: Path) -> Path:
    """A bare repository in tmp, the repo's `origin` and its agy remote (pre-push carries to
    it only); user.email set for the user slug."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    repo.git("remote", "add", "origin", str(bare))
    repo.git("config", "user.email", EMAIL)
    repo.git("config", "agy.remote", "origin")
    return bare


# ---- install / uninstall ------------------------------------------------------------------


class TestInstall:
    def test_install_writes_three_executable_marked_hooks(self, repo: Repo, cli: Any) -> None:
        install(cli)
        folder = repo.path / ".git" / "hooks"
        for name in ("pre-push", "post-commit", "post-checkout"):
            hook = folder / name
            assert hook.is_file()
            assert os.access(hook, os.X_OK)
            assert MARKER in hook.read_text()
            assert not (folder / (name + PREV_SUFFIX)).exists()
        assert sorted(p.name for p in folder.iterdir() if is_marked(p)) == sorted(HOOKS)

    def test_install_twice_changes_nothing(self, repo: Repo, cli: Any, tmp_path: Path) -> None:
        folder = repo.path / ".git" / "hooks"
        user_hook(folder / "post-commit", tmp_path / "log")
        install(cli)
        first = snapshot_dir(folder)
        install(cli)
        assert snapshot_dir(folder) == first
        assert sorted(p for p in first if p.endswith(PREV_SUFFIX)) == ["post-commit.agy-prev"]

    @pytest.mark.parametrize("where", ["relative, in the git dir", "absolute"])
    def test_core_hooks_path_is_respected(
        self, repo: Repo, cli: Any, tmp_path: Path, where: str
    ) -> None:
        relative = where.startswith("relative")
        custom = repo.path / ".git" / "my-hooks" if relative else tmp_path / "hooks"
        repo.git("config", "core.hooksPath", ".git/my-hooks" if relative else str(custom))
        install(cli)
        assert sorted(p.name for p in custom.iterdir()) == sorted(HOOKS)
        assert not any(is_marked(p) for p in (repo.path / ".git" / "hooks").iterdir())
        start_task(cli)
        (repo.path / "new.txt").write_text("new\n")
        git(repo.path, "add", "new.txt")
        git(repo.path, "commit", "-q", "-m", "new")
        assert changed_files(cli) == ["- A new.txt"]  # the hook fired from the custom dir
        assert cli("uninstall", "--git").exit_code == 0
        assert list(custom.iterdir()) == []

    def test_linked_worktree_shares_the_hooks(
        self, repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        repo.git("worktree", "add", "-q", str(repo.path / "wt"), "-b", "side")
        worktree = repo.path / "wt"
        monkeypatch.chdir(worktree)
        install(cli)  # from the linked worktree: into the common dir, once
        common = repo.path / ".git"
        assert all(is_marked(common / "hooks" / name) for name in HOOKS)
        assert not (common / "worktrees" / "wt" / "hooks").exists()
        start_task(cli)
        (worktree / "src").mkdir()
        (worktree / "src" / "a.py").write_text("a = 1\n")
        git(worktree / "src", "add", "a.py")
        # GIT_DIR and GIT_INDEX_FILE are set by git inside the hook; the hook still finds the
        # linked worktree's own chain.
        git(worktree / "src", "commit", "-q", "-m", "in the worktree")
        assert changed_files(cli) == ["- A src/a.py"]
        subject = repo.git("log", "-1", "--format=%s", "refs/agy/wt/wt/state").strip()
        assert subject == "post-commit: changed_files from git"
        assert repo.ref("refs/agy/state") is None

    def test_uninstall_restores_user_hooks_byte_for_byte_with_mode(
        self, repo: Repo, cli: Any, tmp_path: Path
    ) -> None:
        folder = repo.path / ".git" / "hooks"
        user_hook(folder / "pre-push", tmp_path / "log", mode=0o750)
        (folder / "post-checkout").write_bytes(b"#!/bin/sh\r\n# no newline at the end\texit 0")
        (folder / "post-checkout").chmod(0o700)
        before = snapshot_dir(folder)
        install(cli)
        assert (folder / "pre-push.agy-prev").read_bytes() == before["pre-push"][0]
        assert is_marked(folder / "pre-push")
        result = cli("uninstall", "--git")
        assert result.exit_code == 0, result.output
        assert snapshot_dir(folder) == before

    def test_uninstall_leaves_a_hook_the_user_replaced(
        self, repo: Repo, cli: Any, tmp_path: Path
    ) -> None:
        folder = repo.path / ".git" / "hooks"
        install(cli)
        mine = user_hook(folder / "pre-push", tmp_path / "log")
        result = cli("uninstall", "--git")
        assert result.exit_code == 0
        assert "not ours; left alone" in result.stdout
        assert (folder / "pre-push").read_bytes() == mine
        assert not (folder / "post-commit").exists()
        assert not (folder / "post-checkout").exists()

    @pytest.mark.parametrize("name", HOOKS)
    def test_install_refuses_foreign_hook_beside_a_stale_prev(
        self, repo: Repo, cli: Any, tmp_path: Path, name: str
    ) -> None:
        folder = repo.path / ".git" / "hooks"
        user_hook(folder / name, tmp_path / "log")
        user_hook(folder / (name + PREV_SUFFIX), tmp_path / "old-log")
        before = snapshot_dir(folder)
        result = cli("install", "--git")
        assert result.exit_code == 1
        assert "refusing" in result.stderr
        assert snapshot_dir(folder) == before  # not even the other hooks were written


class TestHooksPathInTheWorkTree:
    """core.hooksPath pointing at a tracked folder (husky's `.husky`): refused, with the lines
    that chain ours by hand; those lines work."""

    @pytest.fixture
    def husky(self, repo: Repo, tmp_path: Path) -> Path:
        folder = repo.path / ".husky"
        user_hook(folder / "pre-push", tmp_path / "husky.log")
        commit_all(repo.path, "husky hooks")
        return folder

    @pytest.mark.parametrize("setting", [".husky", "./src/../.husky", "absolute"])
    def test_install_refuses_and_says_how_to_chain(
        self, repo: Repo, cli: Any, husky: Path, setting: str
    ) -> None:
        repo.git("config", "core.hooksPath", str(husky) if setting == "absolute" else setting)
        before = snapshot_dir(husky)
        result = cli("install", "--git")
        assert result.exit_code == 1
        lines = result.stderr.splitlines()
        assert lines[0].startswith("error: core.hooksPath is ") and "work tree" in lines[0]
        assert lines[1].startswith("hint: chain by hand")
        for name in HOOKS:
            assert by_hand(name, sys.executable) in lines[1]
        assert snapshot_dir(husky) == before
        assert repo.git("status", "--porcelain") == ""  # no tracked file rewritten
        assert not any(is_marked(p) for p in (repo.path / ".git" / "hooks").iterdir())

    def test_the_hand_chained_lines_work_behind_a_wrapper(
        self, repo: Repo, cli: Any, remote: Path, husky: Path, tmp_path: Path
    ) -> None:
        # husky runs `.husky/<name>` from a wrapper shell: the push process is further up.
        repo.git("config", "core.hooksPath", ".husky/_")
        for name in ("pre-push", "post-commit"):
            inner = husky / name
            inner.write_text(f"#!/bin/sh\n{by_hand(name, sys.executable)}\n")
            wrapper = husky / "_" / name
            wrapper.parent.mkdir(exist_ok=True)
            wrapper.write_text(f'#!/bin/sh\nsh "$(dirname "$0")/../{name}" "$@"\n')
            wrapper.chmod(0o755)
        start_task(cli)
        repo.commit("x.txt", "x\n", "x")
        assert changed_files(cli) == ["- A x.txt"]
        assert git(repo.path, "push", "-q", "origin", "main").returncode == 0
        wait_until(lambda: STATE_ON_REMOTE in refs_of(remote))
        assert refs_of(remote)[STATE_ON_REMOTE] == repo.ref()
        # The ref lands on the remote before the detached push writes its log line.
        wait_until(lambda: push_entries(repo))
        assert "push to origin: exit 0" in push_log(repo)


class TestNoWorkTreeCode:
    """The hooks run the tool by absolute path in isolated mode: a `gitstate` package in the
    work tree or on PYTHONPATH never runs in its place."""

    def test_checkout_commit_and_push_never_run_a_planted_gitstate(
        self, repo: Repo, cli: Any, remote: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        marker = tmp_path / "marker"
        planted = f"open({str(marker)!r}, 'a').write(__file__ + '\\n')\n"
        repo.git("switch", "-q", "-c", "evil")
        for folder in (repo.path / "gitstate", tmp_path / "pythonpath" / "gitstate"):
            folder.mkdir(parents=True)
            for name in ("__init__.py", "__main__.py"):
                (folder / name).write_text(planted)
        commit_all(repo.path, "a gitstate package in the tree")
        repo.git("switch", "-q", "main")
        install(cli)
        start_task(cli)
        monkeypatch.setenv("PYTHONPATH", str(tmp_path / "pythonpath"))
        switched = git(repo.path, "switch", "evil")  # the planted package is in the tree now
        assert (repo.path / "gitstate" / "__main__.py").exists()
        assert "warning: STATE.md was saved on branch main; you are now on evil" in (
            switched.stderr
        )
        repo.commit("x.txt", "x\n", "x")
        assert repo.git("log", "-1", "--format=%s", "refs/agy/state").strip() == (
            "post-commit: changed_files from git"
        )
        assert git(repo.path, "push", "-q", "origin", "evil").returncode == 0
        wait_until(lambda: STATE_ON_REMOTE in refs_of(remote))
        wait_until(lambda: push_entries(repo))
        assert not marker.exists(), marker.read_text()

    def test_install_refuses_an_interpreter_that_finds_the_tool_only_on_pythonpath(
        self, repo: Repo, tmp_path: Path
    ) -> None:
        import sysconfig

        import gitstate

        base = getattr(sys, "_base_executable", sys.executable)
        isolated = subprocess.run(
            [base, "-I", "-c", "import gitstate"], capture_output=True, cwd=tmp_path, check=False
        )
        if isolated.returncode == 0:  # (the venv's python is a link to it: not the same)
            pytest.skip("no interpreter here that lacks the tool")
        source = Path(gitstate.__file__).parent.parent
        path = os.pathsep.join([str(source), sysconfig.get_paths()["purelib"]])
        proc = subprocess.run(
            [base, "-m", "gitstate", "install", "--git"],
            cwd=repo.path,
            env={**os.environ, "PYTHONPATH": path},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("error: ") and "-I cannot import gitstate" in proc.stderr
        assert "hint: install git-agy-state into a virtual environment" in proc.stderr
        assert not any(is_marked(p) for p in (repo.path / ".git" / "hooks").iterdir())

    def test_a_hook_whose_interpreter_is_gone_does_nothing_and_never_falls_back(
        self, repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # A `git-agy-state` on PATH (here: in a folder of the work tree) is never a fallback.
        marker = tmp_path / "marker"
        bin_dir = repo.path / "bin"
        bin_dir.mkdir()
        (bin_dir / "git-agy-state").write_text(f'#!/bin/sh\necho ran >> "{marker}"\n')
        (bin_dir / "git-agy-state").chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        hooks = repo.path / ".git" / "hooks"
        hooks.mkdir(exist_ok=True)
        for name in HOOKS:
            (hooks / name).write_text(script(name, str(tmp_path / "gone" / "python3")))
            (hooks / name).chmod(0o755)
        proc = git(repo.path, "commit", "-q", "--allow-empty", "-m", "x")
        assert "is gone; run git agy-state install --git again" in proc.stderr
        assert not marker.exists()


def is_marked(path: Path) -> bool:
    return path.is_file() and MARKER in path.read_text(errors="replace")


# ---- chaining with the user's hooks during real git commands ------------------------------


class TestChaining:
    def test_user_pre_push_runs_first_with_git_arguments_and_stdin(
        self, repo: Repo, cli: Any, remote: Path, tmp_path: Path
    ) -> None:
        log = tmp_path / "user-hook.log"
        hooks = repo.path / ".git" / "hooks"
        # It also records how many agy refs the remote holds when it runs: ours are sent only
        # after the push, so it must see none.
        count = f'git --git-dir="{remote}" for-each-ref refs/agy | wc -l | tr -d " "'
        user_hook(hooks / "pre-push", log, extra=f'echo "agy refs: $({count})" >> "{log}"')
        install(cli)
        start_task(cli)
        head = repo.git("rev-parse", "HEAD").strip()
        repo.git("tag", "v1.0")
        proc = git(repo.path, "push", "-q", "origin", "main", "v1.0")
        assert proc.returncode == 0
        wait_until(lambda: STATE_ON_REMOTE in refs_of(remote))
        wait_until(lambda: push_entries(repo))
        assert log.read_text().splitlines() == [
            f"pre-push.agy-prev origin {remote}",
            f"refs/heads/main {head} refs/heads/main {ZERO}",
            f"refs/tags/v1.0 {head} refs/tags/v1.0 {ZERO}",
            "agy refs: 0",  # exactly once: the background send runs no hook
        ]

    def test_background_send_never_recurses(
        self, repo: Repo, cli: Any, remote: Path, tmp_path: Path
    ) -> None:
        log = tmp_path / "user-hook.log"
        user_hook(repo.path / ".git" / "hooks" / "pre-push", log)
        install(cli)
        start_task(cli)
        for round_ in (1, 2):
            repo.commit("file.txt", f"round {round_}\n", f"round {round_}")
            assert git(repo.path, "push", "-q", "origin", "main").returncode == 0
            wait_until(lambda round_=round_: push_entries(repo) == round_)
            cli("patch", "--todo", f"after push {round_}")
        runs = [line for line in log.read_text().splitlines() if line.startswith("pre-push")]
        assert runs == [f"pre-push.agy-prev origin {remote}"] * 2
        assert "exit 0" in push_log(repo)

    def test_failing_user_pre_push_fails_the_push_and_sends_nothing(
        self, repo: Repo, cli: Any, remote: Path, tmp_path: Path
    ) -> None:
        log = tmp_path / "user-hook.log"
        hooks = repo.path / ".git" / "hooks"
        user_hook(hooks / "pre-push", log, exit_code=1)
        install(cli)
        start_task(cli)
        proc = git(repo.path, "push", "origin", "main", check=False)
        assert proc.returncode != 0
        assert "pre-push.agy-prev origin" in log.read_text()
        assert refs_of(remote) == {}
        # Let the user's hook pass and push again: exactly one send is logged, this one's (a
        # send started by the failed push would have been logged first).
        user_hook(hooks / "pre-push.agy-prev", log, exit_code=0)
        assert git(repo.path, "push", "-q", "origin", "main").returncode == 0
        wait_until(lambda: push_entries(repo))
        wait_until(lambda: STATE_ON_REMOTE in refs_of(remote))
        assert push_entries(repo) == 1

    def test_user_post_commit_and_post_checkout_hooks_still_run(
        self, repo: Repo, cli: Any, tmp_path: Path
    ) -> None:
        log = tmp_path / "user-hook.log"
        hooks = repo.path / ".git" / "hooks"
        user_hook(hooks / "post-commit", log)
        user_hook(hooks / "post-checkout", log)
        install(cli)
        start_task(cli)
        after = repo.commit("x.txt", "x\n", "x")
        git(repo.path, "switch", "-q", "-c", "other")
        assert log.read_text().splitlines() == [
            "post-commit.agy-prev ",
            f"post-checkout.agy-prev {after} {after} 1",
        ]
        assert changed_files(cli) == ["- A x.txt"]


# ---- pre-push: carrying the agy refs ------------------------------------------------------


class TestPrePush:
    def test_agy_user_is_the_slug_of_user_email(self, repo: Repo, remote: Path) -> None:
        assert os.environ["GIT_AUTHOR_EMAIL"] == "author@example.com"
        assert agy_user(Workspace.open()) == USER
        repo.git("config", "agy.user", "Team Lead")
        assert agy_user(Workspace.open()) == "team-lead"

    def test_plain_push_carries_state_archives_tags_and_notes(
        self, repo: Repo, cli: Any, remote: Path
    ) -> None:
        install(cli)
        start_task(cli)
        first = repo.ref()
        assert first is not None
        cli("patch", "--todo", "second step")
        repo.git("update-ref", "refs/agy/archive/20260102-030405-x", first)
        repo.git("update-ref", "refs/agy/jobs/job-1", first)
        repo.git(
            "tag", "-a", "-m", f"checkpoint\n\nAgy-State: {first}", "checkpoint-20260102-030405"
        )
        repo.git("notes", "--ref=refs/notes/agy/decisions", "add", "-m", '{"v":1,"id":"d1"}')
        repo.git("tag", "v1.0")  # the user's own tag: not ours to push
        repo.git("branch", "unpushed")  # nor is any branch the user did not push
        local = refs_of(repo.path)
        proc = git(repo.path, "push", "-q", "origin", "main")
        assert proc.returncode == 0, proc.stderr
        travelling = {
            STATE_ON_REMOTE: local["refs/agy/state"],
            "refs/agy/archive/20260102-030405-x": first,
            "refs/agy/jobs/job-1": first,
            "refs/tags/checkpoint-20260102-030405": local["refs/tags/checkpoint-20260102-030405"],
            "refs/notes/agy/decisions": local["refs/notes/agy/decisions"],
        }

        def arrived() -> dict[str, str] | None:
            found = refs_of(remote)
            return found if all(name in found for name in travelling) else None

        found = wait_until(arrived)
        wait_until(lambda: push_entries(repo))
        assert found == {"refs/heads/main": local["refs/heads/main"], **travelling}
        assert "exit 0" in push_log(repo)

    def test_the_users_push_returns_while_ours_is_still_on_its_way(
        self, repo: Repo, cli: Any, remote: Path, tmp_path: Path
    ) -> None:
        # The remote holds our send in its pre-receive hook until the gate opens, so our part is
        # provably unfinished when the user's push returns. A background job that kept git's
        # stdout or stderr open would hold a caller reading them (subprocess, `$(git push)`, an
        # IDE) until the send ended: the push below would hit its hang guard.
        gate = tmp_path / "gate"
        receive = remote / "hooks" / "pre-receive"
        receive.write_text(
            "#!/bin/sh\n"
            "while read old new ref; do\n"
            '  case "$ref" in refs/agy/*)\n'
            f'    i=0; while [ ! -e "{gate}" ] && [ $i -lt 600 ]; do\n'
            "      sleep 0.05; i=$((i + 1))\n"
            "    done;;\n"
            "  esac\n"
            "done\n"
        )
        receive.chmod(0o755)
        install(cli)
        start_task(cli)
        proc = git(repo.path, "push", "origin", "main", timeout=20)
        assert proc.returncode == 0, proc.stderr
        assert set(refs_of(remote)) == {"refs/heads/main"}
        assert push_entries(repo) == 0
        gate.touch()
        wait_until(lambda: STATE_ON_REMOTE in refs_of(remote))
        wait_until(lambda: push_entries(repo))
        assert "push to origin: exit 0" in push_log(repo)

    def test_agy_user_overrides_the_email(self, repo: Repo, cli: Any, remote: Path) -> None:
        repo.git("config", "agy.user", "Team.Lead")
        install(cli)
        start_task(cli)
        assert git(repo.path, "push", "-q", "origin", "main").returncode == 0
        found = wait_until(lambda: {n for n in refs_of(remote) if n.startswith("refs/agy/")})
        assert found == {"refs/agy/users/team.lead/state"}

    def test_linked_worktree_chain_travels_under_the_user(
        self, repo: Repo, cli: Any, remote: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        install(cli)
        start_task(cli)
        repo.git("worktree", "add", "-q", str(repo.path / "wt"), "-b", "side")
        monkeypatch.chdir(repo.path / "wt")
        start_task(cli, "in the worktree")
        assert git(repo.path / "wt", "push", "-q", "origin", "side").returncode == 0
        wanted = {STATE_ON_REMOTE, f"refs/agy/users/{USER}/wt/wt/state"}
        found = wait_until(lambda: wanted <= set(refs_of(remote)) and refs_of(remote))
        assert found[f"refs/agy/users/{USER}/wt/wt/state"] == repo.ref("refs/agy/wt/wt/state")
        assert {n for n in found if n.startswith("refs/heads/")} == {"refs/heads/side"}

    def test_rejected_diverged_chain_never_fails_the_users_push(
        self, repo: Repo, cli: Any, remote: Path
    ) -> None:
        install(cli)
        start_task(cli)
        base = repo.git("rev-parse", "HEAD").strip()
        assert git(repo.path, "push", "-q", "--no-verify", "origin", "main").returncode == 0
        git(remote, "update-ref", STATE_ON_REMOTE, base)  # someone else's, diverged chain
        new = repo.commit("file.txt", "more\n", "more")
        proc = git(repo.path, "push", "origin", "main", check=False)
        assert proc.returncode == 0, proc.stderr
        assert refs_of(remote)["refs/heads/main"] == new
        wait_until(lambda: push_entries(repo))
        log = push_log(repo)
        assert "push to origin: exit 1" in log
        assert f"{STATE_ON_REMOTE}\t[rejected] (non-fast-forward)" in log
        assert refs_of(remote)[STATE_ON_REMOTE] == base  # never forced

    def test_remote_refusing_agy_refs_never_fails_the_users_push(
        self, repo: Repo, cli: Any, remote: Path
    ) -> None:
        receive = remote / "hooks" / "pre-receive"
        receive.write_text(
            "#!/bin/sh\n"
            "while read old new ref; do\n"
            '  case "$ref" in refs/agy/*) echo "no agy refs here" >&2; exit 1;; esac\n'
            "done\n"
            "exit 0\n"
        )
        receive.chmod(0o755)
        install(cli)
        start_task(cli)
        proc = git(repo.path, "push", "origin", "main", check=False)
        assert proc.returncode == 0, proc.stderr
        assert set(refs_of(remote)) == {"refs/heads/main"}
        wait_until(lambda: push_entries(repo))
        log = push_log(repo)
        assert "push to origin: exit 1" in log
        assert f"{STATE_ON_REMOTE}\t[remote rejected] (pre-receive hook declined)" in log
        assert "no agy refs here" in log
        assert set(refs_of(remote)) == {"refs/heads/main"}


SLUGS = [
    ("Dev.Person@Example.COM", "dev.person-example.com"),
    ("a..b@x", "a.b-x"),
    ("a....b", "a.b"),
    (".hidden@x", "hidden-x"),
    ("..x", "x"),
    ("me@host.lock", "me-host"),
    ("me.lock.lock", "me"),
    ("x.lock.", "x"),
    ("x.", "x"),
    ("José Díaz <j@x>", "jos--d-az--j-x-"),
    ("名前@例え.jp", "-----.jp"),
    ("  padded@x  ", "padded-x"),
    ("a/b\\c:d?e*f[g~h^i@{j}", "a-b-c-d-e-f-g-h-i--j-"),
    ("under_score-ok.1", "under_score-ok.1"),
    ("...", None),
    ("", None),
]


@pytest.mark.parametrize(("given", "expected"), SLUGS)
def test_user_slug(given: str, expected: str | None, hermetic: Path) -> None:
    slug = user_slug(given)
    assert slug == expected
    if slug is not None:
        proc = git(hermetic, "check-ref-format", f"refs/agy/users/{slug}/state", check=False)
        assert proc.returncode == 0, slug


# ---- post-commit: changed_files from git --------------------------------------------------


class TestPostCommit:
    @pytest.fixture(autouse=True)
    def installed(self, repo: Repo, cli: Any) -> None:
        """`init` (STATE.md excluded from git, as for a user) and the git hooks."""
        assert cli("init").exit_code == 0
        install(cli)

    @pytest.fixture
    def base(self, repo: Repo) -> Repo:
        """Files to modify, delete and rename, committed before the task begins."""
        for name in ("keep.txt", "gone.txt", "old_name.txt"):
            (repo.path / name).write_text(f"{name}\n" + "the same content line\n" * 10)
        commit_all(repo.path, "base")
        return repo

    def test_changed_files_since_the_task_began(self, base: Repo, cli: Any) -> None:
        start_task(cli)
        started = base.git("rev-parse", "HEAD").strip()
        # A commit of the task, then another: the diff runs from where the task began.
        (base.path / "added.txt").write_text("new\n")
        commit_all(base.path, "one")
        with open(base.path / "keep.txt", "a") as handle:
            handle.write("changed\n")
        (base.path / "gone.txt").unlink()
        git(base.path, "mv", "old_name.txt", "new_name.txt")
        commit_all(base.path, "two")
        assert changed_files(cli) == [
            "- A added.txt",
            "- D gone.txt",
            "- M keep.txt",
            "- R old_name.txt → new_name.txt",
        ]
        tip = base.ref()
        assert base.git("log", "-1", "--format=%s", tip).strip() == (
            "post-commit: changed_files from git"
        )
        first = base.git("rev-list", "--max-parents=0", "refs/agy/state").strip()
        assert f"Agy-Head: {started}" in base.git("log", "-1", "--format=%b", first)

    def test_more_than_five_files_are_summarised(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        for n in range(7):
            (repo.path / f"f{n}.txt").write_text(f"{n}\n")
        commit_all(repo.path, "seven")
        assert changed_files(cli) == [
            "- A f0.txt",
            "- A f1.txt",
            "- A f2.txt",
            "- A f3.txt",
            "- … and 3 more",
        ]

    def test_unsaved_view_edits_are_kept(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        text = repo.view.read_text()
        edited = text.replace("## Open issues\n", "## Open issues\n- unsaved thought\n")
        assert edited != text
        repo.view.write_text(edited)
        repo.commit("x.txt", "x\n", "x")
        view = repo.view.read_text()
        assert "- unsaved thought" in view
        assert "- A x.txt" in view
        saved = repo.git("show", "refs/agy/state:STATE.md")
        assert "- unsaved thought" in saved and "- A x.txt" in saved

    def test_invalid_view_makes_the_hook_do_nothing(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        tip = repo.ref()
        repo.view.write_text("just some words\n")
        proc = git(repo.path, "commit", "-q", "--allow-empty", "-m", "still commits")
        assert proc.returncode == 0
        assert repo.git("log", "-1", "--format=%s").strip() == "still commits"
        assert repo.ref() == tip
        assert repo.view.read_text() == "just some words\n"
        log = (repo.path / ".git" / "agy" / "hook.log").read_text().splitlines()
        assert len(log) == 1 and "post-commit: " in log[0]

    def test_no_snapshot_no_ref(self, repo: Repo, cli: Any) -> None:
        proc = git(repo.path, "commit", "-q", "--allow-empty", "-m", "plain")
        assert proc.returncode == 0
        assert proc.stderr == ""
        assert repo.ref() is None
        assert not repo.view.exists()

    def test_commit_from_a_subdirectory(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        sub = repo.path / "src" / "deep"
        sub.mkdir(parents=True)
        (sub / "mod.py").write_text("x = 1\n")
        git(sub, "add", "mod.py")
        git(sub, "commit", "-q", "-m", "from below")
        assert changed_files(cli) == ["- A src/deep/mod.py"]
        assert not (sub / "STATE.md").exists()


# ---- post-checkout: a view saved on another branch ------------------------------------------


class TestPostCheckout:
    WARNING = "warning: STATE.md was saved on branch main; you are now on other"

    def test_switching_branch_warns(self, repo: Repo, cli: Any) -> None:
        install(cli)
        start_task(cli)
        proc = git(repo.path, "switch", "-c", "other")
        assert proc.returncode == 0
        assert self.WARNING in proc.stderr
        back = git(repo.path, "checkout", "main")
        assert back.returncode == 0
        assert "warning: STATE.md" not in back.stderr
        again = git(repo.path, "checkout", "other")
        assert self.WARNING in again.stderr

    def test_file_checkout_says_nothing(self, repo: Repo, cli: Any) -> None:
        install(cli)
        start_task(cli)
        repo.git("switch", "-q", "-c", "other")
        (repo.path / "README").write_text("scribble\n")
        proc = git(repo.path, "checkout", "--", "README")
        assert proc.returncode == 0
        assert proc.stderr == ""
        assert (repo.path / "README").read_text() == "readme\n"

    def test_exit_status_of_checkout_is_unaffected(
        self, repo: Repo, cli: Any, tmp_path: Path
    ) -> None:
        start_task(cli)
        hooks = repo.path / ".git" / "hooks"
        # What git says with the user's failing hook alone (1, whatever the hook's code).
        user_hook(hooks / "post-checkout", tmp_path / "log", exit_code=3)
        alone = git(repo.path, "switch", "-c", "other", check=False).returncode
        git(repo.path, "switch", "main", check=False)
        hooks.joinpath("post-checkout").unlink()
        install(cli)
        proc = git(repo.path, "switch", "-c", "third", check=False)
        assert proc.returncode == 0  # our warning is no failure
        assert "warning: STATE.md was saved on branch main; you are now on third" in proc.stderr
        user_hook(hooks / "post-checkout.agy-prev", tmp_path / "log", exit_code=3)
        proc = git(repo.path, "switch", "other", check=False)
        assert proc.returncode == alone != 0  # the user's hook still decides, as without us
        assert "you are now on other" in proc.stderr

    def test_our_failure_does_not_fail_the_checkout(self, repo: Repo, cli: Any) -> None:
        start_task(cli)
        install(cli)
        # The chain points at a blob and the view has no record: our part fails inside.
        blob = repo.git("hash-object", "-w", "--stdin", input="not a snapshot\n").strip()
        repo.git("update-ref", "refs/agy/state", blob)
        (repo.path / ".git" / "agy" / "view").unlink()
        proc = git(repo.path, "switch", "-c", "other", check=False)
        assert "Traceback" not in proc.stderr  # it did fail (a BrokenRef, said by doctor)…
        assert proc.returncode == 0  # …and git's status is untouched
        assert repo.git("branch", "--show-current").strip() == "other"
