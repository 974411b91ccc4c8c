"""`view` and `report`: a task's history collected once, drawn as HTML and written as Markdown
(docs/report.md; issue 14, section 4). Real repositories; the browser tests are in
test_view_browser.py."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from jobs_support import agents, finish, jobs_repo, submit

from gitstate.usecases.report import collect, html, markdown
from gitstate.usecases.report.model import Report
from gitstate.usecases.workspace import Workspace

__all__ = ["agents", "jobs_repo"]  # fixtures

START = datetime(2026, 3, 4, 10, 0, 0, tzinfo=timezone.utc)


class Clock:
    """GIT_COMMITTER_DATE a minute later at every tick: snapshots and records get times apart
    (the hermetic fixture pins one date for all)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.now = START

    def tick(self) -> str:
        self.now += timedelta(minutes=1)
        stamp = self.now.isoformat()
        self.monkeypatch.setenv("GIT_COMMITTER_DATE", stamp)
        self.monkeypatch.setenv("GIT_AUTHOR_DATE", stamp)
        return stamp


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    return Clock(monkeypatch)


def ok(cli: Any, *args: str, input: str | None = None) -> str:
    result = cli(*args, input=input)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    out: str = result.stdout
    return out


def step(cli: Any, clock: Clock, *args: str) -> str:
    """One write at the next minute; returns the new tip."""
    clock.tick()
    ok(cli, *args)
    tip: str = Workspace.open().store.tip() or ""
    return tip


def report_of(name: str | None = None) -> Report:
    return collect.collect(Workspace.open(), name)


class TestTimeline:
    def test_n_snapshots_make_n_entries_oldest_first_with_their_sections(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        tips = [
            step(cli, clock, "patch", "--set", "goal=Speed up the pool", "--todo", "measure"),
            step(cli, clock, "patch", "--add", "open_issues=timeouts are hard-coded"),
            step(cli, clock, "patch", "--start", "1"),
            step(cli, clock, "patch", "--add", "key_data=p95 120 ms"),
            step(cli, clock, "phase", "PLANNING"),
        ]
        found = report_of()
        assert [e.commit for e in found.entries] == tips
        assert [e.sections for e in found.entries[:4]] == [
            ("goal", "next_steps"),
            ("open_issues",),
            ("next_steps",),
            ("key_data",),
        ]
        assert found.entries[4].sections == () and found.entries[4].phase == "PLANNING"
        assert found.phase == "PLANNING" and found.tip == tips[-1]
        times = [e.time for e in found.entries]
        assert times == sorted(times) and len(set(times)) == 5
        assert "+- [ ] measure" in found.entries[0].diff
        assert "+- [>] measure" in found.entries[2].diff
        page = html.render(found)
        assert page.count('<li class="snapshot') == 5
        for tip in tips:
            assert f'data-commit="{tip}"' in page
        assert "5 snapshots" in markdown.render(found)

    def test_steps_move_from_next_steps_to_done_with_their_verification(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=Ship", "--todo", "write", "--todo", "push")
        step(cli, clock, "patch", "--start", "1")
        step(cli, clock, "patch", "--done", "1", "--verify", "pytest -q: 12 passed")
        step(cli, clock, "patch", "--block", "1", "--reason", "no network")
        step(cli, clock, "patch", "--add", "failed_attempts=retry in a loop: hid the error")
        entries = report_of().entries
        kinds = [[(s.kind, s.text, s.detail) for s in e.steps] for e in entries]
        assert kinds[0] == [("added", "write", ""), ("added", "push", "")]
        assert kinds[1] == [("started", "write", "")]
        assert kinds[2] == [("done", "write", "pytest -q: 12 passed")]
        assert kinds[3] == [("blocked", "push", "no network")]
        assert entries[4].failed == ("retry in a loop: hid the error",)
        text = markdown.render(report_of())
        assert "- [x] write — verified: pytest -q: 12 passed" in text
        assert "- [ ] push (blocked: no network)" in text
        assert "- retry in a loop: hid the error" in text

    def test_a_completion_restore_undid_and_done_again_is_one_step(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        step(
            cli, clock, "patch", "--set", "goal=G", "--todo", "write a failing test", "--todo", "b"
        )
        step(cli, clock, "patch", "--start", "1")
        step(cli, clock, "patch", "--done", "1", "--verify", "first run")
        step(cli, clock, "restore", "~1")  # takes the completion back; step 1 is in progress
        step(cli, clock, "patch", "--done", "1", "--verify", "second run")
        found = report_of()
        assert ("undone", "write a failing test") in [
            (s.kind, s.text) for s in found.entries[3].steps
        ]
        assert [(s.text, s.detail) for s in found.done_steps()] == [
            ("write a failing test", "second run")
        ]
        text = markdown.render(found)
        assert text.count("- [x] write a failing test") == 1
        assert "- [x] write a failing test — verified: second run" in text
        page = html.render(found)
        steps = page.split("<h2>Steps</h2>", 1)[1].split("</section>", 1)[0]
        assert steps.count("write a failing test") == 1 and "second run" in steps
        assert "first run" not in steps

    def test_a_completion_undone_and_not_redone_is_not_done(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=G", "--todo", "a", "--todo", "b", "--start", "1")
        step(cli, clock, "patch", "--done", "1", "--verify", "v")
        step(cli, clock, "restore", "~1")
        found = report_of()
        assert found.done_steps() == []
        assert "- [x] a" not in markdown.render(found)
        assert "- [ ] a (in progress)" in markdown.render(found)

    def test_a_dropped_step_is_not_done(self, repo: Repo, cli: Any, clock: Clock) -> None:
        step(cli, clock, "patch", "--set", "goal=G", "--todo", "a", "--todo", "b")
        step(cli, clock, "patch", "--remove", "next_steps=- [ ] b")
        assert [(s.kind, s.text) for s in report_of().entries[1].steps] == [("dropped", "b")]


class TestWhatHangsOnSnapshots:
    def test_decisions_and_known_errors_sit_on_the_commits_they_annotate(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        first_head = repo.git("rev-parse", "HEAD").strip()
        one = step(cli, clock, "patch", "--set", "goal=Cache", "--todo", "design")
        clock.tick()
        ok(cli, "decide", "--type", "Architecture", "an LRU, not a TTL")
        clock.tick()
        code = repo.commit("cache.py", "x = 1\n", "cache")
        two = step(cli, clock, "patch", "--start", "1")
        three = step(cli, clock, "patch", "--add", "key_data=hit rate 91%")
        clock.tick()
        ok(
            cli,
            *("error", "--type", "KeyError", "--cause", "stale key", "--fix", "evict first"),
            *("--scope", "cache.py"),
        )
        entries = {e.commit: e for e in report_of().entries}
        assert [a.text for a in entries[one].annotations] == ["an LRU, not a TTL"]
        assert entries[one].annotations[0].commit == first_head
        assert entries[two].annotations == ()
        errors = entries[three].annotations
        assert [(a.type, a.commit, a.known_error) for a in errors] == [("KnownIssue", code, True)]
        assert dict(errors[0].issue)["scope"] == "cache.py"
        md = markdown.render(report_of())
        assert "- **KeyError** stale key → evict first — scope: cache.py" in md  # said once
        assert "Known error" not in md.replace("### Known errors", "")
        page = html.render(report_of())
        assert '<span class="kind">known error · KeyError</span>stale key → evict first' in page

    def test_checkpoints_sit_on_the_snapshot_they_carry(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=Tag it", "--todo", "one")
        two = step(cli, clock, "patch", "--start", "1")
        clock.tick()
        ok(cli, "checkpoint", "-m", "before the refactor")
        step(cli, clock, "patch", "--add", "key_data=after")
        found = report_of()
        marks = {e.commit: e.checkpoints for e in found.entries if e.checkpoints}
        assert list(marks) == [two]
        assert marks[two][0].message == "before the refactor"
        assert marks[two][0].commit == repo.git("rev-parse", "HEAD").strip()
        assert marks[two][0].name in markdown.render(found)

    def test_a_sync_merge_is_an_entry_with_its_other_parent_and_conflicts(
        self, tmp_path: Path, hermetic: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        remote = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
        seed = tmp_path / "seed"
        git(tmp_path, "init", "-q", "-b", "main", str(seed))
        git(seed, "commit", "-q", "--allow-empty", "-m", "initial")
        git(seed, "push", "-q", str(remote), "main")
        a, b = tmp_path / "a", tmp_path / "b"
        for clone in (a, b):
            git(tmp_path, "clone", "-q", str(remote), clone.name)
            git(clone, "config", "user.email", "dev@example.com")
        clock = Clock(monkeypatch)
        tool(
            a, clock, "patch", "--set", "goal=Two machines", "--set", "key_data=base", "--todo", "x"
        )
        tool(a, clock, "sync")
        tool(b, clock, "sync")
        tool(a, clock, "patch", "--set", "key_data=from a")
        tool(b, clock, "patch", "--set", "key_data=from b")
        tool(a, clock, "sync")
        tool(b, clock, "sync")
        monkeypatch.chdir(b)
        found = report_of()
        merges = [e for e in found.entries if e.merge is not None]
        assert len(merges) == 1
        parents = git(b, "rev-list", "--parents", "-n", "1", merges[0].commit).split()[1:]
        assert merges[0].merge is not None and merges[0].merge.other == parents[1]
        assert merges[0].merge.conflicts == ("key_data",)
        page = html.render(found)
        assert 'class="snapshot IDLE merge"' in page and "conflicts in key_data" in page
        assert "sync merge with" in markdown.render(found)

    def test_jobs_of_the_task_with_their_state_and_result(
        self, jobs_repo: Repo, cli: Any, clock: Clock
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=Delegate", "--todo", "let a job do it")
        job = submit(cli, "Add a file")["job_id"]
        finish(cli, job)
        found = report_of()
        assert [(j.id, j.state) for j in found.jobs] == [(job, "done")]
        assert found.jobs[0].agent and found.jobs[0].branch
        assert f"<code>{job}</code>" in html.render(found)
        assert f"`{job}`" in markdown.render(found)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout


def tool(cwd: Path, clock: Clock, *args: str) -> str:
    """The tool as its own process in a clone, as on another machine (sync's locks and view)."""
    clock.tick()
    proc = subprocess.run(
        [sys.executable, "-m", "gitstate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


class TestArchives:
    def test_an_archived_task_by_name_and_only_its_own_records(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=Old task", "--todo", "finish it")
        clock.tick()
        ok(cli, "decide", "--type", "Rule", "old rule")
        step(cli, clock, "patch", "--done", "1", "--verify", "done by hand")  # archives it
        names = json.loads(ok(cli, "archives", "--json"))
        assert len(names) == 1
        clock.tick()
        repo.commit("new.txt", "n\n", "new work")
        step(cli, clock, "patch", "--set", "goal=New task", "--todo", "next")
        clock.tick()
        ok(cli, "decide", "--type", "Rule", "new rule")
        name = names[0]["ref"].removeprefix("refs/agy/archive/")
        old = report_of(name[:12])
        assert old.task == name and old.title == "Old task"
        assert len(old.entries) == 2
        assert [a.text for a in old.annotations()] == ["old rule"]
        current = report_of()
        assert current.title == "New task" and len(current.entries) == 1
        assert [a.text for a in current.annotations()] == ["new rule"]

    def test_no_current_task_after_an_archive_names_it(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=Short", "--todo", "x")
        step(cli, clock, "patch", "--done", "1", "--verify", "ok")
        result = cli("report")
        assert result.exit_code == 3
        assert result.stderr.startswith("error: there is no current task; the last one was")
        assert "hint: git agy-state view " in result.stderr

    def test_no_task_at_all_and_an_unknown_archive_are_not_found(
        self, repo: Repo, cli: Any
    ) -> None:
        for args in (("view",), ("report",), ("report", "nosuch"), ("view", "nosuch")):
            result = cli(*args)
            assert result.exit_code == 3, args
            assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr


HOSTILE = (
    "</script><img src=x onerror=alert(1)><script>alert(2)</script>&amp;\"'`*[x](javascript:1)"
)


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.scripts += tag == "script"
        self.handlers += [name for name, _ in attrs if name.startswith("on")]


class TestHostileTexts:
    def test_every_text_renders_as_text(self, repo: Repo, cli: Any, clock: Clock) -> None:
        step(cli, clock, "patch", "--set", f"goal={HOSTILE}", "--todo", HOSTILE)
        step(cli, clock, "patch", "--add", f"failed_attempts={HOSTILE}", "-m", HOSTILE)
        clock.tick()
        ok(cli, "decide", "--type", "Lib", HOSTILE)
        clock.tick()
        ok(cli, "error", "--type", HOSTILE, "--cause", HOSTILE, "--fix", "f", "--scope", HOSTILE)
        clock.tick()
        ok(cli, "checkpoint", "-m", HOSTILE)
        step(cli, clock, "patch", "--start", "1")
        found = report_of()
        page = html.render(found)
        parser = TagCollector()
        parser.feed(page)
        assert parser.scripts == 1 and parser.handlers == []
        assert "img" not in parser.tags
        assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
        assert page.count("<script>") == 1 and page.count("</script>") == 1
        csp = next(line for line in page.splitlines() if "Content-Security-Policy" in line)
        assert "default-src &#x27;none&#x27;" in csp and "unsafe-inline" not in csp
        assert "script-src &#x27;sha256-" in csp
        text = markdown.render(found)
        body = text.replace("<details><summary>Timeline</summary>", "").replace("</details>", "")
        assert "<" not in body and "](" not in body.replace("\\](", "")
        assert "&lt;/script&gt;" in text

    def test_a_phase_that_is_no_class_name_cannot_break_out(self) -> None:
        from gitstate.usecases.report.model import Entry

        entry = Entry("c" * 40, START.isoformat(), '"><img src=x>', "s", (), "")
        report = Report("current", "refs/agy/state", ("g",), '"><b>', "c" * 40, (entry,))
        page = html.render(report)
        parser = TagCollector()
        parser.feed(page)
        assert "img" not in parser.tags
        assert parser.tags.count("b") == page.count("<b>") == 1  # the snapshot count, no more
        assert 'class="snapshot IDLE"' in page  # the class falls back; the badge shows it escaped
        assert '<span class="badge &quot;&gt;&lt;img src=x&gt;">&quot;&gt;&lt;img src=x&gt;' in page

    def test_controls_are_shown_escaped_never_raw(self) -> None:
        from gitstate.usecases.report.model import Entry

        sneaky = "ok\u202e txt.exe\x1b[31m"
        entry = Entry("c" * 40, START.isoformat(), "IDLE", sneaky, (), "+" + sneaky + "\n")
        report = Report("current", "refs/agy/state", (sneaky,), "IDLE", "c" * 40, (entry,))
        page, text = html.render(report), markdown.render(report)
        for out in (page, text):
            assert "\u202e" not in out and "\x1b" not in out
        assert "ok\\u202e txt.exe\\x1b[31m" in page
        assert "ok\\\\u202e txt.exe\\\\x1b\\[31m" in text  # Markdown for the same text

    def test_a_crafted_snapshot_that_does_not_parse_is_still_on_the_timeline(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        tip = step(cli, clock, "patch", "--set", "goal=G", "--todo", "t")
        blob = repo.git("hash-object", "-w", "--stdin", input="not a state <b>\n").strip()
        tree = repo.git("mktree", input=f"100644 blob {blob}\tSTATE.md\n").strip()
        crafted = repo.git("commit-tree", tree, "-p", tip, "-m", "crafted").strip()
        repo.git("update-ref", "refs/agy/state", crafted, tip)
        found = report_of()
        assert [e.commit for e in found.entries] == [tip, crafted]
        assert "+not a state <b>" in found.entries[1].diff
        assert "+not a state &lt;b&gt;" in html.render(found)


class TestCommands:
    def test_view_writes_the_page_under_the_git_dir_and_prints_its_path(
        self, repo: Repo, cli: Any, clock: Clock
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=Page", "--todo", "see it")
        out = ok(cli, "view").strip()
        assert out == str(repo.path / ".git" / "agy" / "pages" / "current.html")
        page = Path(out).read_text()
        assert page.startswith("<!DOCTYPE html>") and page.count('<li class="snapshot') == 1
        assert stat.S_IMODE(Path(out).stat().st_mode) == 0o600
        assert repo.git("status", "--porcelain") == ""  # nothing for git status to offer
        body = json.loads(ok(cli, "view", "--json"))
        assert body == {"path": out, "task": "current", "snapshots": 1}

    def test_an_archived_task_gets_its_own_page(self, repo: Repo, cli: Any, clock: Clock) -> None:
        step(cli, clock, "patch", "--set", "goal=Finished work", "--todo", "x")
        step(cli, clock, "patch", "--done", "1", "--verify", "seen")
        name = json.loads(ok(cli, "archives", "--json"))[0]["ref"].removeprefix("refs/agy/archive/")
        out = Path(ok(cli, "view", name).strip())
        assert out == repo.path / ".git" / "agy" / "pages" / f"{name}.html"
        assert "<h1>Finished work</h1>" in out.read_text()
        assert ok(cli, "report", name).startswith("## Finished work\n")

    def test_view_out_file_and_stdout(
        self, repo: Repo, cli: Any, clock: Clock, tmp_path: Path
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=Page", "--todo", "see it")
        target = tmp_path / "task.html"
        assert ok(cli, "view", "--out", str(target)).strip() == str(target)
        assert ok(cli, "view", "--out", "-") == target.read_text()
        result = cli("view", "--out", "-", "--open")
        assert result.exit_code == 64 and result.stderr.startswith("error: --open needs a file")

    def test_open_uses_web_browser_else_xdg_open(
        self, repo: Repo, cli: Any, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        step(cli, clock, "patch", "--set", "goal=Open", "--todo", "look")
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        log = tmp_path / "opened.log"
        for name in ("xdg-open", "open", "mybrowser"):
            fake = bin_dir / name
            fake.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n')
            fake.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        page = ok(cli, "view", "--open").strip()
        launcher = "open" if sys.platform == "darwin" else "xdg-open"
        assert log.read_text().splitlines() == [f"{launcher} {page}"]
        repo.git("config", "web.browser", "mybrowser")
        ok(cli, "view", "--open")
        assert log.read_text().splitlines()[-1] == f"mybrowser {page}"
        repo.git("config", "browser.mybrowser.cmd", f"echo cmd >> {log}; echo")
        ok(cli, "view", "--open")
        assert log.read_text().splitlines()[-1] == "cmd"
        repo.git("config", "--unset", "browser.mybrowser.cmd")
        repo.git("config", "web.browser", "nosuchbrowser")
        result = cli("view", "--open")
        assert result.exit_code == 1
        assert result.stderr.startswith("error: cannot open the page: nosuchbrowser is not on PATH")

    def test_report_json_has_the_promised_keys(self, repo: Repo, cli: Any, clock: Clock) -> None:
        step(cli, clock, "patch", "--set", "goal=Keys", "--todo", "list them")
        step(cli, clock, "patch", "--start", "1")
        body = json.loads(ok(cli, "report", "--json"))
        assert set(body) == {
            "task", "ref", "title", "goal", "phase", "tip", "language", "snapshots", "jobs",
            "next_steps",
        }  # fmt: skip
        assert len(body["snapshots"]) == 2
        assert set(body["snapshots"][0]) == {
            "commit", "time", "phase", "subject", "sections", "diff", "steps",
            "failed_attempts", "annotations", "checkpoints", "merge", "closing",
        }  # fmt: skip
        assert body["snapshots"][1]["steps"] == [
            {"kind": "started", "text": "list them", "detail": ""}
        ]
        assert ok(cli, "report").startswith("## Keys\n")
