"""Values that git or an agent CLI could read as options: a memory remote beginning with `-`
(`--upload-pack=CMD` runs CMD) is refused before anything is saved, also when read back from the
brain's config; a job plan beginning with `-` reaches the agent as its prompt."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, submit
from memory_support import brain_git, ok

from gitstate.memory.storage.layout import brain_path

__all__ = ["agents", "jobs_repo"]  # fixtures


def _marker_command(marker: Path) -> str:
    return f"--upload-pack=touch {marker}"


class TestMemoryRemote:
    @pytest.mark.parametrize("shape", ["--upload-pack=touch {m}", "-u touch {m}"])
    def test_an_option_as_remote_is_refused_and_not_saved(
        self, cli: Any, tmp_path: Path, shape: str
    ) -> None:
        ok(cli("memory", "init"))
        marker = tmp_path / "pwned"
        result = cli("memory", "sync", "--", shape.format(m=marker))
        assert result.exit_code == 64, result.stdout + result.stderr
        assert result.stderr.startswith("error: refusing the memory remote")
        assert "hint: " in result.stderr
        assert not marker.exists()
        saved = brain_git("config", "--get", "agy.memoryRemote", check=False)
        assert saved == ""

    def test_a_saved_option_is_refused_when_read_back(self, cli: Any, tmp_path: Path) -> None:
        ok(cli("memory", "init"))
        marker = tmp_path / "pwned"
        brain_git("config", "agy.memoryRemote", _marker_command(marker))  # an older version
        for _ in range(2):
            result = cli("memory", "sync")
            assert result.exit_code == 64, result.stdout + result.stderr
            assert "agy.memoryRemote" in result.stderr
        assert not marker.exists()

    def test_a_url_with_a_token_is_used_but_never_written(self, cli: Any) -> None:
        ok(cli("memory", "init"))
        url = "http://user:SECRET-TOKEN@127.0.0.1:9/brain.git"  # nothing listens on port 9
        result = cli("memory", "sync", url)
        assert result.exit_code == 1
        assert "SECRET-TOKEN" not in result.stdout + result.stderr
        assert "http://127.0.0.1:9/brain.git" in result.stderr
        assert brain_git("config", "--get", "agy.memoryRemote", check=False) == ""
        assert "SECRET-TOKEN" not in brain_git("for-each-ref")

    def test_the_git_calls_pass_dashdash(self, cli: Any, tmp_path: Path) -> None:
        """A path that begins with `-` is still a remote when written as ./-name."""
        ok(cli("memory", "init"))
        subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "-remote.git")], check=True)
        result = cli("memory", "sync", "--json", str(tmp_path / "-remote.git"))
        ok(result)
        pushed = brain_git("rev-parse", "refs/agy/memory", brain=tmp_path / "-remote.git")
        assert (
            pushed.strip() == brain_git("rev-parse", "refs/agy/memory", brain=brain_path()).strip()
        )
        assert pushed.strip()


class TestJobPlan:
    """`job run --text '--…'`: the plan reaches the agent as its prompt, for either agent CLI."""

    @pytest.mark.parametrize("agent", ["agy", "claude"])
    @pytest.mark.parametrize("plan", ["--dangerously-do-x", "--model=evil", "-p"])
    def test_a_plan_beginning_with_a_dash_is_the_prompt(
        self, jobs_repo: Repo, agents: Agents, cli: Any, agent: str, plan: str
    ) -> None:
        jobs_repo.git("config", "agy.agent", agent)
        job = submit(cli, plan)["job_id"]
        [row] = finish(cli, job)
        assert row["state"] == "done", row
        [start] = agents.starts()
        assert start["prompt"].lstrip("\n").startswith(plan + "\n")
        assert not [e for e in agents.entries() if e["event"] == "refused"]
