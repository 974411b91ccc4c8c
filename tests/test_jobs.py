"""Background jobs end to end: real supervisors, real worktrees, a fake agent CLI (docs/jobs.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pygit2
from conftest import Repo
from jobs_support import Agents, agents, finish, jobs_repo, meta, run_json, submit
from support import wait_until

from gitstate.jobs.usecases import lifecycle
from gitstate.storage.layout import discover

__all__ = ["agents", "jobs_repo"]  # fixtures


class TestLifecycle:
    def test_run_watch_result_harvest(
        self, jobs_repo: Repo, agents: Agents, cli: Any, tmp_path: Path
    ) -> None:
        repo = jobs_repo
        plan = tmp_path / "plan.md"
        plan.write_text(
            "---\nscope: [notes/, README]\nacceptance:\n  - pytest -q\nconstraints: no new deps\n"
            "---\n# Write the notes\n\nAdd a notes file.\n"
        )
        body = run_json(cli, "job", "run", "--plan", str(plan))
        job = body["job_id"]
        assert set(body) >= {"job_id", "state", "round", "queue_position", "worktree", "branch"}
        assert body["state"] == "queued" and body["round"] == 1 and body["queue_position"] is None
        worktree = Path(body["worktree"])
        assert worktree == repo.path / ".agy" / "worktrees" / job and worktree.is_absolute()
        assert body["branch"] == f"agy/{job}"
        assert Path(body["events_log"]).is_absolute()
        assert ".agy/" in (repo.path / ".git" / "info" / "exclude").read_text().split()

        [row] = finish(cli, job)
        assert row["state"] == "done" and row["contract_ok"] is True and row["tests_passed"]
        assert row["tokens"] == 120 and row["worktree"] == str(worktree)
        assert set(row) == {
            "job_id", "state", "round", "agy_status", "summary", "contract_ok", "tests_passed",
            "elapsed_seconds", "tokens", "diff_stat", "result_path", "events_path", "worktree",
            "branch",
        }  # fmt: skip

        [start] = agents.starts()
        argv = start["argv"][2:]
        assert argv[:2] == ["-p", argv[1]] and "# Write the notes" in argv[1]
        assert "Execution contract" in argv[1] and "notes/; README" in argv[1]
        assert argv[argv.index("--output-format") + 1] == "stream-json"
        assert argv[argv.index("--print-timeout") + 1] == "30m"
        assert argv[argv.index("--json-schema") + 1].endswith(f"{job}/schema.json")
        assert "--dangerously-skip-permissions" in argv
        assert "--model" not in argv and "--effort" not in argv and "--conversation" not in argv
        assert Path(start["cwd"]) == worktree

        assert run_json(cli, "job", "pending") == [
            {"job_id": job, "state": "done", "round": 1, "branch": f"agy/{job}",
             "finished_at": meta(repo, job)["finished_at"]}
        ]  # fmt: skip
        result = run_json(cli, "job", "result", job)
        changed = repo.git("diff", "--name-only", f"{result['base_sha']}..agy/{job}").split()
        assert result["files_changed_git"] == changed and len(changed) == 1
        assert result["structured_output"]["files_changed"] == changed
        assert "1 file changed" in result["diff_stat"]
        assert result["state"] == "done" and result["agy_status"] == "SUCCESS"
        assert "Write the notes" in result["final_state"]["text"]
        assert result["final_state"]["ref"] == f"refs/agy/wt/{job}/state"
        assert meta(repo, job)["harvested_at"] is not None
        assert run_json(cli, "job", "pending") == []

        record = f"refs/agy/jobs/{job}"
        files = repo.git("ls-tree", "--name-only", record).split()
        assert files == ["diffstat.txt", "plan.md", "prompt.txt", "result.json"]
        assert "Agy-Job-Round: 1" in repo.git("log", "-1", "--format=%B", record)
        seeded = repo.git("show", f"refs/agy/wt/{job}/state:STATE.md")
        assert "- [ ] meet: pytest -q" in seeded

        human = cli("job", "result", job)
        assert human.exit_code == 0 and f"git merge agy/{job}" in human.stdout

    def test_flags_reach_the_agent_and_unset_ones_stay_out(
        self, jobs_repo: Repo, agents: Agents, cli: Any
    ) -> None:
        jobs_repo.git("config", "agy.skipPermissions", "false")
        jobs_repo.git("config", "agy.model", "m-default")
        job = submit(cli, "x", "--effort", "high", "--timeout", "5m")["job_id"]
        finish(cli, job)
        argv = agents.starts()[0]["argv"]
        assert argv[argv.index("--model") + 1] == "m-default"
        assert argv[argv.index("--effort") + 1] == "high"
        assert argv[argv.index("--print-timeout") + 1] == "5m"
        assert "--dangerously-skip-permissions" not in argv
        job2 = submit(cli, "y", "--model", "m-flag")["job_id"]
        finish(cli, job2)
        argv = agents.starts()[1]["argv"]
        assert argv[argv.index("--model") + 1] == "m-flag" and "--effort" not in argv

    def test_run_wait_exits_like_watch_strict(self, jobs_repo: Repo, cli: Any) -> None:
        body = run_json(cli, "job", "run", "--text", "ok", "--wait")
        assert body["state"] == "done"
        failed = cli("job", "run", "--text", "@fake exit 3", "--wait", "--json")
        assert failed.exit_code == 1 and json.loads(failed.stdout)["state"] == "error"

    def test_warns_about_uncommitted_tracked_changes(self, jobs_repo: Repo, cli: Any) -> None:
        (jobs_repo.path / "README").write_text("changed\n")
        body = submit(cli)
        assert "uncommitted changes" in body["warnings"][0]
        finish(cli, body["job_id"])

    def test_from_a_linked_worktree_the_job_goes_under_the_main_tree(
        self, jobs_repo: Repo, cli: Any, monkeypatch: Any, tmp_path: Path
    ) -> None:
        other = tmp_path / "linked"
        jobs_repo.git("worktree", "add", "-q", "-b", "side", str(other))
        monkeypatch.chdir(other)
        body = submit(cli)
        assert Path(body["worktree"]).parent == jobs_repo.path / ".agy" / "worktrees"
        finish(cli, body["job_id"])

    def test_no_worktree_runs_in_this_tree(self, jobs_repo: Repo, agents: Agents, cli: Any) -> None:
        body = submit(cli, "x", "--no-worktree")
        assert body["branch"] is None and Path(body["worktree"]) == jobs_repo.path
        finish(cli, body["job_id"])
        assert Path(agents.starts()[0]["cwd"]) == jobs_repo.path
        result = run_json(cli, "job", "result", body["job_id"])
        assert len(result["files_changed_git"]) == 1 and result["final_state"] is None


class TestOutcomes:
    def test_agent_failures_are_errors(self, jobs_repo: Repo, agents: Agents, cli: Any) -> None:
        jobs_repo.git("config", "agy.maxConcurrent", "5")
        crash = "no-result\n@fake exit 1"
        ids = {
            what: submit(cli, f"@fake {what}")["job_id"]
            for what in ("exit 3", "status ERROR", "no-result", crash, "envelope")
        }
        rows = {row["job_id"]: row for row in finish(cli, *ids.values())}
        assert rows[ids["exit 3"]]["state"] == "error"
        assert rows[ids["status ERROR"]]["state"] == "error"
        assert rows[ids["no-result"]]["state"] == "error"
        assert meta(jobs_repo, ids["no-result"])["attempts"] == 1  # it ended cleanly: no retry
        assert "no result event" in meta(jobs_repo, ids["no-result"])["error"]
        assert meta(jobs_repo, ids[crash])["attempts"] == 2  # a crash: retried (agy.maxRetries)
        assert rows[ids["envelope"]]["state"] == "done"
        assert rows[ids["envelope"]]["summary"] == "fake turn 1 done"
        strict = cli("job", "watch", *ids.values(), "--strict", "--interval", "0.5")
        assert strict.exit_code == 1

    def test_timeout_kills_and_retries(self, jobs_repo: Repo, agents: Agents, cli: Any) -> None:
        jobs_repo.git("config", "agy.timeoutGrace", "1s")
        job = submit(cli, "@fake sleep 30", "--timeout", "1s")["job_id"]
        [row] = finish(cli, job)
        assert row["state"] == "error" and "timed out after 1s (2 attempts)" in row["summary"]
        assert len(agents.starts()) == 2
        for start in agents.starts():
            assert not lifecycle.group_alive(start["pid"])

    def test_credentials_are_redacted_in_the_record(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli, "@fake secret")["job_id"]
        finish(cli, job)
        result = run_json(cli, "job", "result", job)
        assert "AKIAIOSFODNN7EXAMPLF" in result["response_text"]  # the local runtime file
        assert {"file": "result.json", "kind": "AWS access key id"} in [
            {k: hit[k] for k in ("file", "kind")} for hit in result["record_redacted"]
        ]
        committed = jobs_repo.git("show", f"refs/agy/jobs/{job}:result.json")
        assert "AKIAIOSFODNN7EXAMPLF" not in committed and "[REDACTED]" in committed

    def test_claude_adapter(self, jobs_repo: Repo, agents: Agents, cli: Any) -> None:
        jobs_repo.git("config", "agy.agent", "claude")
        job = submit(cli, "do it", "--effort", "low")["job_id"]
        [row] = finish(cli, job)
        assert row["state"] == "done" and row["contract_ok"] is True
        argv = agents.starts()[0]["argv"]
        assert argv[1] == "claude" and "--verbose" in argv and "--print-timeout" not in argv
        schema = json.loads(argv[argv.index("--json-schema") + 1])  # JSON text, not a path
        assert schema["required"] == ["summary", "files_changed", "tests_passed"]
        conversation = meta(jobs_repo, job)["conversation_id"]
        assert conversation.startswith("conv-")
        run_json(cli, "job", "feedback", job, "again")
        finish(cli, job)
        argv = agents.starts()[1]["argv"]
        assert argv[argv.index("--resume") + 1] == conversation

    def test_queue_timeout_is_an_error(self, jobs_repo: Repo, cli: Any) -> None:
        jobs_repo.git("config", "agy.maxConcurrent", "1")
        jobs_repo.git("config", "agy.queueTimeout", "1s")
        first = submit(cli, "@fake sleep 30")["job_id"]
        second = submit(cli, "y")
        assert second["queue_position"] == 1
        [row] = finish(cli, second["job_id"])
        assert row["state"] == "error" and "queue slot" in row["summary"]
        run_json(cli, "job", "cancel", first)


class TestFeedback:
    def test_rounds_continue_the_conversation(
        self, jobs_repo: Repo, agents: Agents, cli: Any
    ) -> None:
        job = submit(cli, "first")["job_id"]
        finish(cli, job)
        run_json(cli, "job", "result", job)
        conversation = meta(jobs_repo, job)["conversation_id"]
        body = run_json(cli, "job", "feedback", job, "also handle the empty case")
        assert body["round"] == 2 and body["job_id"] == job
        [row] = finish(cli, job)
        assert row["round"] == 2 and row["state"] == "done" and row["summary"] == "fake turn 2 done"
        argv = agents.starts()[1]["argv"]
        assert argv[argv.index("--conversation") + 1] == conversation
        assert "Feedback on the previous round: also handle the empty case" in argv[3]
        assert "fake turn 1 done" in argv[3]  # the previous summary
        assert [p["job_id"] for p in run_json(cli, "job", "pending")] == [job]  # harvest again
        result = run_json(cli, "job", "result", job)
        assert result["round"] == 2 and len(result["files_changed_git"]) == 2
        rounds = jobs_repo.git("log", "--format=%(trailers:key=Agy-Job-Round,valueonly)",
                               f"refs/agy/jobs/{job}").split()  # fmt: skip
        assert rounds == ["2", "1"]
        events = jobs_repo.path / ".git" / "agy" / "jobs" / job / "events.ndjson"
        separators = [json.loads(x) for x in events.read_text().splitlines() if '"round"' in x]
        assert [s["n"] for s in separators if s.get("type") == "round"] == [1, 2]

    def test_schema_dropped_on_round_two(self, jobs_repo: Repo, agents: Agents, cli: Any) -> None:
        job = submit(cli)["job_id"]
        finish(cli, job)
        run_json(cli, "job", "feedback", job, "more\n@fake reject-schema-on-resume")
        [row] = finish(cli, job)
        assert row["state"] == "done" and row["contract_ok"] is False
        result = run_json(cli, "job", "result", job)
        assert result["contract_note"] == "schema dropped on round>=2"
        last = agents.starts()[-1]["argv"]
        assert "--json-schema" not in last and "--conversation" in last

    def test_refused_while_unfinished(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli, "@fake sleep 30")["job_id"]
        assert cli("job", "feedback", job, "x").exit_code == 4
        assert cli("job", "result", job).exit_code == 4
        run_json(cli, "job", "cancel", job)
        assert cli("job", "feedback", job, "x").exit_code == 4  # cancelled: not done/error

    def test_after_cleanup_the_worktree_comes_back(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli)
        finish(cli, job["job_id"])
        run_json(cli, "job", "cleanup", job["job_id"])
        assert not Path(job["worktree"]).exists()
        body = run_json(cli, "job", "feedback", job["job_id"], "one more")
        assert "re-created the worktree" in body["warnings"][0]
        assert Path(job["worktree"]).is_dir()
        [row] = finish(cli, job["job_id"])
        assert row["state"] == "done"


class TestCancelAndFaults:
    def test_cancel_ends_the_agents_process_group(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli, "@fake sleep 30\n@fake child")["job_id"]
        pgid = wait_until(lambda: meta(jobs_repo, job).get("pid_agent"), what="the agent")
        wait_until(lambda: _group_size(pgid) >= 2, what="the agent's child")
        body = run_json(cli, "job", "cancel", job)
        assert body["state"] == "cancelled" and body["was"] == "running" and body["agent_ended"]
        assert not lifecycle.group_alive(pgid)
        [row] = finish(cli, job)
        assert row["state"] == "cancelled"
        wait_until(lambda: not _supervisor_alive(jobs_repo, job), what="the supervisor to exit")
        assert meta(jobs_repo, job)["state"] == "cancelled"  # the ending round did not overwrite it
        result = cli("job", "result", job, "--json")
        assert result.exit_code == 0 and json.loads(result.stdout)["state"] == "cancelled"
        assert meta(jobs_repo, job)["harvested_at"] is not None
        again = cli("job", "cancel", job)
        assert again.exit_code == 0 and "already cancelled" in again.stdout

    def test_cancel_while_queued(self, jobs_repo: Repo, agents: Agents, cli: Any) -> None:
        jobs_repo.git("config", "agy.maxConcurrent", "1")
        first = submit(cli, "@fake sleep 30")["job_id"]
        second = submit(cli, "never runs")["job_id"]
        assert run_json(cli, "job", "cancel", second)["was"] == "queued"
        run_json(cli, "job", "cancel", first)
        assert {r["state"] for r in finish(cli, first, second)} == {"cancelled"}
        wait_until(lambda: not _supervisor_alive(jobs_repo, second), what="the waiting supervisor")
        assert all("never runs" not in s["argv"][3] for s in agents.starts())

    def test_end_group_escalates_to_sigkill(self) -> None:
        proc = subprocess.Popen(
            [sys.executable, "-c", "import signal,time; signal.signal(signal.SIGTERM, "
             "signal.SIG_IGN); print(1, flush=True); time.sleep(60)"],
            start_new_session=True, stdout=subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stdout.readline()
        lifecycle.end_group(proc.pid, grace=0.3)
        assert proc.wait(timeout=5) == -signal.SIGKILL

    def test_killed_supervisor_reads_as_interrupted(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli, "@fake sleep 30")["job_id"]
        pgid = wait_until(lambda: meta(jobs_repo, job).get("pid_agent"), what="the agent")
        os.kill(meta(jobs_repo, job)["pid_supervisor"], signal.SIGKILL)
        wait_until(lambda: not _supervisor_alive(jobs_repo, job), what="the lock to be free")
        assert meta(jobs_repo, job)["state"] == "running"  # nobody has looked yet
        assert _stop_guard(jobs_repo).returncode == 2  # the hook already sees it as finished
        status = run_json(cli, "job", "status", job)
        assert status["state"] == "interrupted" and "supervisor is gone" in status["error"]
        assert not lifecycle.group_alive(pgid)  # its agent was ended with it
        assert [p["state"] for p in run_json(cli, "job", "pending")] == ["interrupted"]
        result = cli("job", "result", job, "--json")
        assert result.exit_code == 0 and json.loads(result.stdout)["state"] == "interrupted"

    def test_a_result_written_before_the_supervisor_died_is_adopted(
        self, jobs_repo: Repo, cli: Any
    ) -> None:
        job = submit(cli)["job_id"]
        finish(cli, job)
        wait_until(lambda: not _supervisor_alive(jobs_repo, job), what="the supervisor to exit")
        path = jobs_repo.path / ".git" / "agy" / "jobs" / job / "meta.json"
        crashed = {**meta(jobs_repo, job), "state": "running", "finished_at": None}
        path.write_text(json.dumps(crashed))  # as if killed between result.json and meta.json
        assert run_json(cli, "job", "status", job)["state"] == "done"


class TestCleanup:
    def test_refusals_and_removal(self, jobs_repo: Repo, cli: Any) -> None:
        running = submit(cli, "@fake sleep 30")["job_id"]
        assert cli("job", "cleanup", running).exit_code == 1
        run_json(cli, "job", "cancel", running)
        job = submit(cli)
        job_id, worktree = job["job_id"], Path(job["worktree"])
        finish(cli, job_id)
        refused = cli("job", "cleanup", job_id, "--delete-branch")
        assert refused.exit_code == 5 and "not merged" in refused.stderr
        assert worktree.is_dir()  # a refusal changes nothing
        jobs_repo.git("merge", "-q", "--ff-only", f"agy/{job_id}")
        body = run_json(cli, "job", "cleanup", job_id, "--delete-branch")
        assert body == {"job_id": job_id, "worktree_removed": True, "branch_deleted": True,
                        "purged": False}  # fmt: skip
        assert not worktree.exists()
        assert job_id not in pygit2.Repository(str(jobs_repo.path)).list_worktrees()
        assert jobs_repo.ref(f"refs/heads/agy/{job_id}") is None
        again = run_json(cli, "job", "cleanup", job_id)
        assert again["worktree_removed"] is False  # already removed: still a success
        run_json(cli, "job", "cleanup", job_id, "--purge")
        assert cli("job", "status", job_id).exit_code == 3
        assert jobs_repo.ref(f"refs/agy/jobs/{job_id}") is not None  # history survives

    def test_force_deletes_an_unmerged_branch(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli)["job_id"]
        finish(cli, job)
        run_json(cli, "job", "cleanup", job, "--delete-branch", "--force")
        assert jobs_repo.ref(f"refs/heads/agy/{job}") is None

    def test_uncommitted_work_in_the_worktree_is_kept(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli, "@fake no-commit")
        finish(cli, job["job_id"])
        (Path(job["worktree"]) / "draft.txt").write_text("unsaved\n")
        assert cli("job", "cleanup", job["job_id"]).exit_code == 5
        run_json(cli, "job", "cleanup", job["job_id"], "--force")
        assert not Path(job["worktree"]).exists()


class TestRefusals:
    def test_missing_agent_cli(self, jobs_repo: Repo, cli: Any) -> None:
        jobs_repo.git("config", "agy.agent", "no-such-agent-cli --flag")
        result = cli("job", "run", "--text", "x")
        assert result.exit_code == 127 and "no-such-agent-cli" in result.stderr
        assert not (jobs_repo.path / ".git" / "agy" / "jobs").exists()
        assert cli("job", "doctor").exit_code == 127

    def test_bad_ids_are_usage_errors(self, jobs_repo: Repo, cli: Any) -> None:
        for bad in ("../../etc", "j-20260101-000000-../x", "j-1", "", "j-20260101-000000-ABCD"):
            for args in (("status", bad), ("result", bad), ("cancel", bad), ("watch", bad)):
                result = cli("job", *args)
                assert result.exit_code == 64, (args, result.stderr)
        for args in (("status",), ("result",), ("watch",), ("cleanup",), ("feedback",)):
            result = cli("job", *args, "j-20260101-000000-abcd", *(["x"] * (args[0] == "feedback")))
            assert result.exit_code == 3, args

    def test_usage_errors(self, jobs_repo: Repo, cli: Any, tmp_path: Path) -> None:
        assert cli("job", "run").exit_code == 64
        assert cli("job", "run", "--plan", str(tmp_path / "missing.md")).exit_code == 64
        (tmp_path / "bin.md").write_bytes(b"\x00\x01")
        assert cli("job", "run", "--plan", str(tmp_path / "bin.md")).exit_code == 64
        assert cli("job", "run", "--text", "x", "--timeout", "soon").exit_code == 64
        assert cli("job", "run", "--text", "x", "--effort", "max").exit_code == 64
        job = submit(cli)["job_id"]
        for interval in ("0.1", "61"):
            assert cli("job", "watch", job, "--interval", interval).exit_code == 64
        finish(cli, job)
        assert cli("job", "list", "--state", "nope").exit_code == 64
        jobs_repo.git("config", "agy.maxConcurrent", "lots")
        assert cli("job", "run", "--text", "x").exit_code == 64

    def test_a_plan_over_200_kb_leaves_nothing_behind(self, jobs_repo: Repo, cli: Any) -> None:
        result = cli("job", "run", "--text", "x" * (200 * 1024))
        assert result.exit_code == 64 and "KB" in result.stderr
        assert list((jobs_repo.path / ".git" / "agy" / "jobs").iterdir()) == []
        assert "agy/" not in jobs_repo.git("branch", "--list")

    def test_watch_times_out(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli, "@fake sleep 30")["job_id"]
        result = cli("job", "watch", job, "--timeout", "1s", "--interval", "0.5", "--json")
        assert result.exit_code == 124 and json.loads(result.stdout)[0]["state"] == "running"


class TestStopGuardAndTools:
    def test_stop_guard_blocks_on_an_unharvested_job(self, jobs_repo: Repo, cli: Any) -> None:
        job = submit(cli)["job_id"]
        finish(cli, job)
        blocked = _stop_guard(jobs_repo)
        assert blocked.returncode == 2 and f"{job} (done)" in blocked.stderr
        payload = {"session_id": "s", "cwd": str(jobs_repo.path), "hook_event_name": "Stop"}
        claude = _stop_guard(jobs_repo, "--agent", "claude", payload=payload)
        assert json.loads(claude.stdout)["decision"] == "block"
        run_json(cli, "job", "result", job)
        assert _stop_guard(jobs_repo).returncode == 0

    def test_doctor_and_quota(self, jobs_repo: Repo, cli: Any) -> None:
        body = run_json(cli, "job", "doctor")
        assert body["ok"] is True and body["agent_version"] == "fake-agy 1.2.3"
        assert body["warnings"] and "login folder" in body["warnings"][0]
        quota = run_json(cli, "job", "quota")
        assert quota["windows"][0] == {"name": "5h", "used": 12, "limit": 100, "remaining": None,
                                       "percent": None, "resets_at": "2026-01-02T08:00:00Z"}  # fmt: skip
        jobs_repo.git("config", "agy.agent", "claude")
        assert cli("job", "quota").exit_code == 1

    def test_list_and_status(self, jobs_repo: Repo, cli: Any) -> None:
        a = submit(cli)["job_id"]
        finish(cli, a)
        rows = run_json(cli, "job", "list")
        assert [r["id"] for r in rows] == [a] and rows[0]["state"] == "done"
        assert run_json(cli, "job", "list", "--state", "running") == []
        status = run_json(cli, "job", "status", a)
        assert status["round"] == 1 and status["queue_position"] is None
        for key in ("created_at", "queued_at", "started_at", "finished_at", "base_sha", "attempts"):
            assert status[key] is not None, key
        human = cli("job", "list")
        assert human.exit_code == 0 and "(not harvested)" in human.stdout


def _group_size(pgid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[-1].split()
            except OSError:
                continue
            count += stat[2] == str(pgid).encode() and stat[0] != b"Z"
    return count


def _supervisor_alive(repo: Repo, job_id: str) -> bool:
    from gitstate.jobs.storage import files as jobfiles

    layout = discover(repo.path)
    assert layout is not None
    return jobfiles.supervisor_alive(jobfiles.files(layout, job_id))


def _stop_guard(repo: Repo, *args: str, payload: Any = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gitstate", "hook", "stop-guard", *args],
        cwd=repo.path,
        input=json.dumps(payload) if payload is not None else None,
        stdin=subprocess.DEVNULL if payload is None else None,
        capture_output=True,
        text=True,
        check=False,
    )
