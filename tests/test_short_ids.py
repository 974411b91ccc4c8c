"""Ids in messages are git's abbreviation (`core.abbrev`, longer where ambiguous), not a fixed
12 digits (issue 14): restore's snapshot subject, doctor's findings, a job's warning and seed."""

from __future__ import annotations

from typing import Any

from conftest import Repo
from jobs_support import agents, finish, jobs_repo, submit
from test_broken_refs import doctor, failed, two_snapshots

__all__ = ["agents", "jobs_repo"]  # fixtures


def test_restore_names_its_snapshot_as_git_abbreviates_it(repo: Repo, cli: Any) -> None:
    two_snapshots(cli)
    older = repo.git("rev-parse", "refs/agy/state~1").strip()
    assert cli("restore", older).exit_code == 0
    assert repo.git("log", "-1", "--format=%s", "refs/agy/state").strip() == f"restore {older[:7]}"
    repo.git("config", "core.abbrev", "10")
    back = repo.git("rev-parse", "refs/agy/state~1").strip()  # the second snapshot
    assert cli("restore", back).exit_code == 0
    assert repo.git("log", "-1", "--format=%s", "refs/agy/state").strip() == f"restore {back[:10]}"


def test_doctor_names_objects_as_git_abbreviates_them(repo: Repo, cli: Any) -> None:
    two_snapshots(cli)
    tip = repo.git("rev-parse", "refs/agy/state").strip()
    tree = repo.git("rev-parse", "refs/agy/state^{tree}").strip()
    bare = repo.git("commit-tree", tree, "-p", tip, "-m", "no trailer").strip()
    repo.git("update-ref", "refs/agy/state", bare, tip)
    blob = repo.git("hash-object", "-w", "--stdin", input="not a tag\n").strip()
    tag = "refs/tags/checkpoint-20260101-000000"
    repo.git("update-ref", tag, blob)
    code, report, text = doctor(cli)
    assert code == 1
    broken = failed(report)
    assert f"points at blob {blob[:7]}, not a commit" in broken[tag]["detail"]
    chain = next(c for name, c in broken.items() if "state" in name)
    assert f"{bare[:7]} has no Agy-Format trailer" in chain["detail"]
    assert bare[:12] not in text and blob[:12] not in text


def test_a_job_names_its_base_as_git_abbreviates_it(jobs_repo: Repo, cli: Any) -> None:
    head = jobs_repo.git("rev-parse", "HEAD").strip()
    (jobs_repo.path / "README").write_text("changed\n")
    body = submit(cli)
    assert f"the job starts from HEAD ({head[:7]}) without them" in body["warnings"][0]
    seeded = jobs_repo.git("show", f"refs/agy/wt/{body['job_id']}/state:STATE.md")
    assert f"from {head[:7]}; plan:" in seeded and head[:12] not in seeded
    finish(cli, body["job_id"])
