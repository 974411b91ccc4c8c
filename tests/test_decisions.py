"""Decisions and known errors as git notes on refs/notes/agy/decisions (docs/decisions.md).

Real repositories, real git for everything the user would do with plain git: amend, rebase,
`git notes merge`, `git log --notes`, concurrent writers in separate processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from support import run_tool

from gitstate.hooks.frame import END, MORE_CONTEXT
from gitstate.storage import notes
from gitstate.usecases.decisions import records as uc
from gitstate.usecases.workspace import Workspace

NOTES = "refs/notes/agy/decisions"
TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
ROW_KEYS = {"id", "type", "text", "at", "by", "commit", "active", "supersedes"}


def decide(cli: Any, *args: str) -> str:
    """Run `decide --json ARGS…`; the new record's id."""
    result = cli("decide", "--json", *args)
    assert result.exit_code == 0, result.output + result.stderr
    return str(json.loads(result.stdout)["id"])


def listed(cli: Any, *args: str) -> list[dict[str, Any]]:
    result = cli("decisions", "--json", *args)
    assert result.exit_code == 0, result.stderr
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def note_lines(repo: Repo, rev: str = "HEAD") -> list[str]:
    return repo.git("notes", "--ref", "agy/decisions", "show", rev).splitlines()


# ---- records, pure -------------------------------------------------------------------------


class TestRecords:
    def test_the_line_is_canonical_and_reads_back(self) -> None:
        record = uc.make_record("Rule", "no force push", "2026-01-02T03:04:05+01:00", "a@b")
        line = record.line()
        assert line.startswith('{"v":1,"id":"d-')
        assert '"supersedes":[]' in line and " " not in line.replace("no force push", "")
        assert uc.parse_line(line) == record

    def test_ids_are_short_stable_and_content_derived(self) -> None:
        a = uc.make_record("Lib", "click", "2026-01-02T03:04:05+00:00", "a@b")
        again = uc.make_record("Lib", "click", "2026-01-02T03:04:05+00:00", "a@b")
        other = uc.make_record("Lib", "typer", "2026-01-02T03:04:05+00:00", "a@b")
        issue = uc.make_record(uc.KNOWN_ISSUE, "x", "2026-01-02T03:04:05+00:00", "a@b")
        assert a.id == again.id != other.id
        assert len(a.id) == 10 and a.id.startswith("d-") and issue.id.startswith("k-")
        longer = uc.record_id(a, {a.id})
        assert longer.startswith(a.id) and len(longer) == 12

    @pytest.mark.parametrize(
        "line",
        [
            "plain text from git notes append",
            "[1,2]",
            '{"v":2,"id":"d-1","type":"Rule"}',
            '{"v":1}',
        ],
    )
    def test_lines_that_are_no_record_of_this_version_are_skipped(self, line: str) -> None:
        assert uc.parse_line(line) is None
        records, _carriers, skipped = uc.build_ledger([("c" * 40, (line + "\n").encode())])
        assert (records, skipped) == ({}, 1)

    def test_sorting_reads_the_offset(self) -> None:
        early = uc.make_record("Rule", "b", "2026-01-02T10:00:00+09:00", "x")  # 01:00 UTC
        late = uc.make_record("Rule", "a", "2026-01-02T02:00:00+00:00", "x")
        assert sorted([late, early], key=uc.sort_key) == [early, late]

    def test_supersession_is_computed_not_written(self) -> None:
        old = uc.make_record("Lib", "click", "2026-01-02T03:04:05+00:00", "x")
        new = uc.make_record("Lib", "typer", "2026-01-03T03:04:05+00:00", "x", [old.id])
        assert uc.supersessions([old, new]) == {old.id: (new.id,)}

    def test_pitfalls_are_capped_newest_first(self) -> None:
        rows = [
            uc.Listed(
                uc.make_record(
                    uc.KNOWN_ISSUE,
                    f"E{i}",
                    f"2026-01-{i + 1:02d}T00:00:00+00:00",
                    "x",
                    issue=[("error_type", f"E{i}"), ("cause", "c"), ("fix", "f"), ("scope", "s")],
                ),
                "c" * 40,
                (),
            )
            for i in range(uc.PITFALLS_MAX + 3)
        ]
        text = uc.pitfalls_text(rows)
        assert text is not None
        lines = text.splitlines()
        assert lines[:2] == [uc.PITFALLS_HEADER, uc.PITFALLS_NOTE]
        assert lines[2] == f"- E{uc.PITFALLS_MAX + 2}: c → f (scope: s; by x)"  # names its author
        assert len(lines) == 2 + uc.PITFALLS_MAX + 1
        assert lines[-1] == "… and 3 older: git agy-state decisions"
        assert uc.pitfalls_text([rows[0]._replace(superseded_by=("d-x",))]) is None


# ---- decide, list, supersede ---------------------------------------------------------------


class TestDecide:
    def test_decide_and_list(self, repo: Repo, cli: Any) -> None:
        result = cli("decide", "--type", "Architecture", "use", "pygit2 for all git access")
        assert result.exit_code == 0, result.stderr
        head = repo.git("rev-parse", "HEAD").strip()
        assert result.stdout.startswith("recorded d-")
        assert f"(Architecture) on {head[:7]}" in result.stdout
        (row,) = listed(cli)
        assert row["text"] == "use pygit2 for all git access"
        assert (row["type"], row["commit"], row["active"]) == ("Architecture", head, True)
        assert row["by"] == "author@example.com"
        assert row["at"] == "2026-01-02T03:04:05+00:00"
        human = cli("decisions").stdout
        assert human == f"{row['id']}  Architecture  2026-01-02  use pygit2 for all git access\n"

    def test_json_keys_are_exactly_the_promised_ones(self, repo: Repo, cli: Any) -> None:
        ids = {
            decide(cli, "--type", "Rule", "no force push"),
            decide(cli, "--type", "Lib", "click"),
        }
        rows = listed(cli)
        assert [set(r) for r in rows] == [ROW_KEYS, ROW_KEYS]
        assert {r["id"] for r in rows} == ids

    def test_type_is_matched_without_case_and_stored_canonical(self, repo: Repo, cli: Any) -> None:
        decide(cli, "--type", "lib", "click for the CLI")
        assert listed(cli)[0]["type"] == "Lib"

    def test_supersede_keeps_the_old_record_and_marks_it(self, repo: Repo, cli: Any) -> None:
        old = decide(cli, "--type", "Lib", "click for the CLI")
        (repo.path / "f").write_text("x")
        head = repo.commit("f", "x\n", "second")
        new = decide(cli, "--type", "Lib", "--supersedes", old, "typer for the CLI")
        assert [r["id"] for r in listed(cli)] == [new]
        rows = {r["id"]: r for r in listed(cli, "--all")}
        assert rows[old]["active"] is False and rows[new]["active"] is True
        assert rows[new]["supersedes"] == [old]
        assert rows[new]["commit"] == head != rows[old]["commit"]
        # The old line is untouched in its note: superseding never edits a record.
        assert json.loads(note_lines(repo, "HEAD~1")[0])["supersedes"] == []
        # (The date is pinned, so both have one time and sort by id.)
        human = {line.split()[0]: line for line in cli("decisions", "--all").stdout.splitlines()}
        assert human[old].endswith(f"click for the CLI  [superseded by {new}]")
        assert rows[old]["commit"][:7] in human[old]
        assert "superseded" not in human[new] and head[:7] in human[new]

    def test_unknown_type_is_a_usage_error(self, repo: Repo, cli: Any) -> None:
        result = cli("decide", "--type", "Opinion", "tabs")
        assert result.exit_code == 64
        assert "unknown decision type 'Opinion'" in result.stderr
        assert "Architecture, Lib or Rule" in result.stderr
        assert cli("decide", "tabs").exit_code == 64  # --type is required
        assert cli("decide", "--type", "Rule", " ").exit_code == 64  # empty text
        known = cli("decide", "--type", "KnownIssue", "x")
        assert known.exit_code == 64 and "git agy-state error" in known.stderr
        assert repo.ref(NOTES) is None

    def test_unknown_supersedes_id_is_not_found(self, repo: Repo, cli: Any) -> None:
        decide(cli, "--type", "Rule", "no force push")
        result = cli("decide", "--type", "Rule", "--supersedes", "d-00000000", "x")
        assert result.exit_code == 3
        assert "no decision 'd-00000000'" in result.stderr
        assert len(listed(cli)) == 1
        as_json = cli("decide", "--json", "--type", "Rule", "--supersedes", "nope", "x")
        assert json.loads(as_json.stdout)["code"] == 3

    def test_two_decisions_on_one_commit_are_one_note_two_lines(self, repo: Repo, cli: Any) -> None:
        first = decide(cli, "--type", "Rule", "no force push")
        second = decide(cli, "--type", "Lib", "click")
        lines = note_lines(repo)
        assert [json.loads(line)["id"] for line in lines] == [first, second]
        assert len(repo.git("ls-tree", "-r", NOTES).splitlines()) == 1
        assert repo.git("rev-list", "--count", NOTES).strip() == "2"

    def test_the_same_record_twice_is_recorded_once(self, repo: Repo, cli: Any) -> None:
        # The date is pinned, so this is the very same record (same id): nothing is written.
        first = cli("decide", "--type", "Rule", "no force push")
        again = cli("decide", "--type", "Rule", "no force push")
        assert again.exit_code == 0 and again.stdout.startswith("already recorded d-")
        assert first.stdout.split()[1] == again.stdout.split()[2]
        assert len(note_lines(repo)) == 1

    def test_notes_commits_and_reflog_read_well(self, repo: Repo, cli: Any) -> None:
        rid = decide(cli, "--type", "Rule", "no force push")
        assert (
            repo.git("log", "-1", "--format=%s", NOTES).strip()
            == f"decide {rid} Rule: no force push"
        )
        reflog = repo.git("reflog", "show", "--format=%gs", NOTES)
        assert reflog.strip() == f"agy-state: decide {rid} Rule: no force push"

    def test_decide_sets_rewrite_ref_adding_to_other_values(self, repo: Repo, cli: Any) -> None:
        repo.git("config", "notes.rewriteRef", "refs/notes/commits")
        decide(cli, "--type", "Rule", "no force push")
        decide(cli, "--type", "Rule", "no rebase of main")
        values = repo.git("config", "--get-all", "notes.rewriteRef").split()
        assert values == ["refs/notes/commits", NOTES]

    def test_outside_a_repository(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any
    ) -> None:
        monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
        monkeypatch.chdir(tmp_path)
        for args in (
            ["decide", "--type", "Rule", "x"],
            ["error", "--type", "T", "--cause", "c", "--fix", "f", "--scope", "s"],
            ["decisions"],
        ):
            result = cli(*args)
            assert result.exit_code == 6, args
            assert result.stderr.startswith("error: not a git repository")

    def test_lines_written_by_others_are_skipped_with_a_note(self, repo: Repo, cli: Any) -> None:
        rid = decide(cli, "--type", "Rule", "no force push")
        repo.git("notes", "--ref", "agy/decisions", "append", "-m", "free text by hand")
        result = cli("decisions")
        assert result.exit_code == 0 and result.stdout.startswith(rid)
        assert "skipped 1 line of" in result.stderr
        # And a later decide still appends after them (git's blank separator line included).
        decide(cli, "--type", "Lib", "click")
        assert len(listed(cli)) == 2


class TestKnownErrors:
    def test_error_records_its_fields(self, repo: Repo, cli: Any) -> None:
        result = cli(
            "error", "--json",
            "--type", "ImportError",
            "--cause", "pygit2 is missing in the venv",
            "--fix", "pip install -e .",
            "--scope", "tests",
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        made = json.loads(result.stdout)
        assert made["id"].startswith("k-") and made["created"] is True
        (row,) = listed(cli)
        assert set(row) == ROW_KEYS | {"error_type", "cause", "fix", "scope"}
        assert row["type"] == "KnownIssue"
        assert row["text"] == "ImportError: pygit2 is missing in the venv → pip install -e ."
        assert (row["error_type"], row["cause"], row["fix"], row["scope"]) == (
            "ImportError",
            "pygit2 is missing in the venv",
            "pip install -e .",
            "tests",
        )
        line = json.loads(note_lines(repo)[0])
        assert list(line)[:7] == ["v", "id", "type", "text", "at", "by", "supersedes"]
        assert cli("decisions").stdout.rstrip().endswith("(scope: tests)")

    def test_missing_or_empty_fields_are_usage_errors(self, repo: Repo, cli: Any) -> None:
        assert cli("error", "--type", "T", "--cause", "c", "--fix", "f").exit_code == 64
        empty = cli("error", "--type", "T", "--cause", "", "--fix", "f", "--scope", "s")
        assert empty.exit_code == 64 and "--cause is empty" in empty.stderr

    def test_a_decision_can_supersede_a_known_error(self, repo: Repo, cli: Any) -> None:
        result = cli("error", "--json", "--type", "T", "--cause", "c", "--fix", "f", "--scope", "s")
        kid = json.loads(result.stdout)["id"]
        layout = Workspace.open().layout
        assert notes.cache_path(layout).exists()
        decide(cli, "--type", "Rule", "--supersedes", kid, "the cause is gone")
        assert [r["type"] for r in listed(cli)] == ["Rule"]
        assert not notes.cache_path(layout).exists()  # no active pitfall: no cache


class TestSecrets:
    def test_a_credential_is_refused_unless_allowed(self, repo: Repo, cli: Any) -> None:
        result = cli("decide", "--type", "Rule", f"deploy with {TOKEN}")
        assert result.exit_code == 1
        assert "refusing to record: TEXT looks like a GitHub token" in result.stderr
        assert TOKEN not in result.stderr and "--allow-secret" in result.stderr
        assert repo.ref(NOTES) is None
        assert cli("decide", "--allow-secret", "--type", "Rule", f"use {TOKEN}").exit_code == 0

    def test_error_names_the_field(self, repo: Repo, cli: Any) -> None:
        result = cli(
            "error", "--json", "--type", "auth", "--cause", "expired",
            "--fix", f"export GITHUB_TOKEN={TOKEN}", "--scope", "ci",
        )  # fmt: skip
        assert result.exit_code == 1
        body = json.loads(result.stdout)
        assert body["code"] == 1 and body["error"].startswith("refusing to record: --fix looks")
        assert TOKEN not in result.stdout


# ---- where records hang, and what git does to them -----------------------------------------


class TestBeforeTheFirstCommit:
    def test_a_decision_hangs_on_the_state_tip(self, empty_repo: Repo, cli: Any) -> None:
        assert cli("patch", "--set", "goal=start the project").exit_code == 0
        tip = empty_repo.ref()
        assert tip is not None
        decide(cli, "--type", "Architecture", "a monorepo")
        (row,) = listed(cli)
        assert row["commit"] == tip
        assert json.loads(note_lines(empty_repo, "refs/agy/state")[0])["id"] == row["id"]
        # After the first commit the record stays where it was, and is still read.
        empty_repo.commit("README", "r\n", "initial")
        assert listed(cli)[0]["commit"] == tip

    def test_with_neither_head_nor_state_it_refuses_with_a_hint(
        self, empty_repo: Repo, cli: Any
    ) -> None:
        result = cli("decide", "--type", "Rule", "x")
        assert result.exit_code == 1
        assert "no commit and no state snapshot yet" in result.stderr
        assert "hint: make the first commit" in result.stderr
        assert empty_repo.ref(NOTES) is None


class TestRewrites:
    def test_amend_keeps_the_record_readable_once(self, repo: Repo, cli: Any) -> None:
        rid = decide(cli, "--type", "Rule", "no force push")
        old = repo.git("rev-parse", "HEAD").strip()
        repo.git("commit", "-q", "--amend", "-m", "initial, amended")
        new = repo.git("rev-parse", "HEAD").strip()
        assert new != old
        assert json.loads(note_lines(repo)[0])["id"] == rid  # git copied the note
        (row,) = listed(cli, "--all")
        assert (row["id"], row["commit"]) == (rid, new)

    def test_rebase_keeps_the_records_readable_once(self, repo: Repo, cli: Any) -> None:
        repo.git("switch", "-q", "-c", "feature")
        repo.commit("feature.txt", "f\n", "feature work")
        first = decide(cli, "--type", "Lib", "click")
        repo.commit("feature2.txt", "g\n", "more feature work")
        second = decide(cli, "--type", "Rule", "no force push")
        repo.git("switch", "-q", "main")
        repo.commit("main.txt", "m\n", "main moves on")
        repo.git("switch", "-q", "feature")
        before = repo.git("rev-parse", "HEAD").strip()
        repo.git("rebase", "-q", "main")
        after = repo.git("rev-parse", "HEAD").strip()
        assert after != before
        rows = listed(cli, "--all")
        assert [r["id"] for r in rows] == sorted([first, second])
        commits = {r["id"]: r["commit"] for r in rows}
        assert commits[second] == after
        assert commits[first] == repo.git("rev-parse", "HEAD~1").strip()
        # The pre-rebase commits still carry their notes; the reader shows each record once.
        assert len(repo.git("notes", "--ref", "agy/decisions", "list").splitlines()) == 4


class TestGitReadsThem:
    def test_git_log_notes_shows_the_json_lines(self, repo: Repo, cli: Any) -> None:
        rid = decide(cli, "--type", "Rule", "no force push")
        log = repo.git("log", "-1", "--notes=agy/decisions")
        assert "Notes (agy/decisions):" in log
        assert f'    {{"v":1,"id":"{rid}","type":"Rule","text":"no force push"' in log

    def test_notes_merge_cat_sort_uniq_unions_two_machines(
        self, repo: Repo, cli: Any, tmp_path: Path
    ) -> None:
        shared = decide(cli, "--type", "Rule", "no force push")
        other = Repo(tmp_path / "laptop")
        subprocess.run(["git", "clone", "-q", str(repo.path), str(other.path)], check=True)
        other.git("fetch", "-q", "origin", f"{NOTES}:{NOTES}")
        there = run_tool("decide", "--json", "--type", "Lib", "click", cwd=other.path)
        assert there.returncode == 0, there.stderr
        theirs = json.loads(there.stdout)["id"]
        mine = decide(cli, "--type", "Architecture", "a monorepo")
        # Both machines annotated the same commit: the notes really conflict.
        remote_copy = "refs/notes/agy-remotes/x/decisions"
        repo.git("fetch", "-q", str(other.path), f"+{NOTES}:{remote_copy}")
        repo.git(
            "notes", "--ref", "agy/decisions", "merge", "-q", "-s", "cat_sort_uniq", remote_copy
        )
        ids = [r["id"] for r in listed(cli)]
        assert sorted(ids) == sorted([shared, theirs, mine])
        lines = note_lines(repo)
        assert len(lines) == 3 and len(set(lines)) == 3  # the shared line once
        assert len(repo.git("log", "--format=%p", "-1", NOTES).split()) == 2  # a merge commit
        # Appending after the merge keeps every line.
        decide(cli, "--type", "Rule", "squash merges")
        assert len(note_lines(repo)) == 4

    def test_a_fanned_out_notes_tree_written_by_git_is_read_and_extended(
        self, repo: Repo, cli: Any
    ) -> None:
        # git fast-import fans a notes tree out (ab/cdef…) once it holds a few hundred notes.
        count = 300
        stream = []
        for i in range(1, count + 1):
            stream += [
                "commit refs/heads/many",
                f"mark :{i}",
                f"committer C O Mitter <c@example.com> {1700000000 + i} +0000",
                f"data <<END\nc{i}\nEND",
            ]
            stream += [f"from :{i - 1}"] if i > 1 else ["from refs/heads/main"]
            stream.append("")
        stream += [
            f"commit {NOTES}",
            "committer C O Mitter <c@example.com> 1700000000 +0000",
            "data <<END\nimported\nEND",
        ]
        for i in range(1, count + 1):
            line = uc.make_record("Rule", f"rule {i}", "2025-01-01T00:00:00+00:00", "c").line()
            stream += [f"N inline :{i}", f"data <<END\n{line}\nEND"]
        subprocess.run(
            ["git", "fast-import", "--quiet"],
            cwd=repo.path,
            input="\n".join(stream) + "\n",
            text=True,
            check=True,
        )
        head = repo.git("rev-parse", "many").strip()
        fanned = repo.git("ls-tree", "-r", "--name-only", NOTES).splitlines()
        assert f"{head[:2]}/{head[2:]}" in fanned  # git wrote fanout
        assert len(listed(cli)) == count
        repo.git("switch", "-q", "many")
        decide(cli, "--type", "Lib", "click")
        assert [json.loads(x)["text"] for x in note_lines(repo)] == [f"rule {count}", "click"]
        after = repo.git("ls-tree", "-r", "--name-only", NOTES).splitlines()
        assert sorted(after) == sorted(fanned)  # extended in place, no second (flat) entry
        assert len(listed(cli)) == count + 1

    def test_a_new_note_in_a_fanned_out_tree_goes_into_its_folder(
        self, repo: Repo, cli: Any
    ) -> None:
        decide(cli, "--type", "Rule", "no force push")
        head = repo.git("rev-parse", "HEAD").strip()
        # Re-lay the notes tree out as ab/cdef… by hand, as `git notes merge` may leave it.
        blob = repo.git("rev-parse", f"{NOTES}:{head}").strip()
        sub = repo.git("mktree", input=f"100644 blob {blob}\t{head[2:]}\n").strip()
        tree = repo.git("mktree", input=f"040000 tree {sub}\t{head[:2]}\n").strip()
        parent = repo.ref(NOTES)
        assert parent is not None
        fanned = repo.git("commit-tree", tree, "-p", parent, "-m", "fanout").strip()
        repo.git("update-ref", NOTES, fanned)
        assert len(listed(cli)) == 1
        decide(cli, "--type", "Lib", "click")  # same commit: extends ab/cdef…
        new = repo.commit("g", "g\n", "next")
        decide(cli, "--type", "Lib", "pytest")  # new commit: a folder of its own
        paths = repo.git("ls-tree", "-r", "--name-only", NOTES).split()
        assert sorted(paths) == sorted([f"{head[:2]}/{head[2:]}", f"{new[:2]}/{new[2:]}"])
        assert len(note_lines(repo, head)) == 2 and len(note_lines(repo, new)) == 1
        assert len(listed(cli)) == 3


# ---- concurrency ---------------------------------------------------------------------------

APPEND_SCRIPT = """
import sys
from gitstate.storage import notes
from gitstate.usecases.workspace import Workspace
ws = Workspace.open()
head = ws.store.head_info()[0]
for i in range(int(sys.argv[2])):
    notes.append_line(ws.store, head, f"writer {sys.argv[1]} line {i}", "race")
"""


class TestConcurrency:
    def test_processes_deciding_at_once_lose_nothing(self, repo: Repo) -> None:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "gitstate", "decide", "--type", "Rule", f"rule {n}"],
                cwd=repo.path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for n in range(6)
        ]
        for proc in procs:
            _out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        texts = sorted(json.loads(x)["text"] for x in note_lines(repo))
        assert texts == [f"rule {n}" for n in range(6)]

    def test_compare_and_swap_without_our_lock_loses_nothing(self, repo: Repo) -> None:
        # Straight at the storage layer, as a foreign writer would race: only CAS protects.
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", APPEND_SCRIPT, str(n), "8"],
                cwd=repo.path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for n in range(4)
        ]
        for proc in procs:
            _out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        lines = note_lines(repo)
        assert sorted(lines) == sorted(f"writer {n} line {i}" for n in range(4) for i in range(8))
        assert repo.git("rev-list", "--count", NOTES).strip() == "32"


# ---- known pitfalls at injection -----------------------------------------------------------


def inject(repo: Repo, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-m", "gitstate", "hook", "inject"],
        cwd=repo.path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )


class TestPitfallsAtInjection:
    def record(self, cli: Any) -> None:
        assert cli("patch", "--set", "goal=ship it", "--todo", "write the test").exit_code == 0
        result = cli(
            "error", "--type", "ImportError", "--cause", "pygit2 missing",
            "--fix", "pip install -e .", "--scope", "tests",
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        decide(cli, "--type", "Rule", "no force push")  # decisions are not pitfalls

    def test_the_injected_text_carries_the_active_pitfalls(self, repo: Repo, cli: Any) -> None:
        self.record(cli)
        text = inject(repo).stdout
        state = repo.view.read_text()
        assert text.index(state) < text.index("=== Known pitfalls")
        assert (
            "- ImportError: pygit2 missing → pip install -e . (scope: tests; by author@example.com)\n"
            in text
        )  # a teammate's note reads as theirs
        assert "no force push" not in text
        assert MORE_CONTEXT not in text

    def test_a_tiny_budget_cuts_them_with_a_pointer(self, repo: Repo, cli: Any) -> None:
        self.record(cli)
        assert cli("patch", "--add", "key_data=" + "k" * 2000).exit_code == 0
        full = inject(repo).stdout
        pitfalls = full[full.index("\n=== Known pitfalls") : full.index(END)]
        budget = len(full.encode()) - len(pitfalls.encode()) + len(MORE_CONTEXT) + 10
        repo.git("config", "agy.injectBudget", str(budget))
        text = inject(repo).stdout
        assert repo.view.read_text() in text  # the state comes first
        assert "Known pitfalls" not in text
        assert text.endswith(MORE_CONTEXT + "\n" + END + "\n")
        assert len(text.encode()) <= budget

    def test_the_hook_reads_the_cache_without_pygit2(self, repo: Repo, cli: Any) -> None:
        self.record(cli)
        proc = inject(repo, "-X", "importtime")
        assert "Known pitfalls" in proc.stdout
        modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
        assert not {m for m in modules if m.split(".")[0] in ("click", "pygit2")}

    def test_the_cache_is_rebuilt_from_the_notes_ref(self, repo: Repo, cli: Any) -> None:
        self.record(cli)
        ws = Workspace.open()
        path = notes.cache_path(ws.layout)
        written = path.read_text()
        path.unlink()
        assert uc.refresh_pitfalls(ws) == path
        assert path.read_text() == written
        assert path == ws.layout.commondir / "agy" / "pitfalls.md"  # where the hook looks
