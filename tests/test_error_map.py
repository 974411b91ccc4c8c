"""The one error map (gitstate/error_map.py, docs/exit-codes.md): every typed error has its
documented code, as text and as JSON, and every edge says it the map's way — a click command,
an agent hook, a git hook and the job supervisor, each as the real process where the edge is one.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import click
import pytest
from click.testing import CliRunner
from conftest import Repo
from jobs_support import agents, jobs_repo, meta, submit
from support import run_tool, wait_until

from gitstate import error_map, errors
from gitstate.cli import AgyGroup
from gitstate.errors import AgyError

__all__ = ["agents", "jobs_repo"]  # fixtures

ROOT = Path(__file__).resolve().parent.parent
TABLE_ROW = re.compile(r"^\| (\d+) \|", re.M)


def documented_codes() -> set[int]:
    text = (ROOT / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    head = text.split("\n## ", 1)[0]  # the one table, before the sections on damaged refs
    return {int(code) for code in TABLE_ROW.findall(head)}


def all_subclasses(cls: type[AgyError]) -> Iterator[type[AgyError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from all_subclasses(sub)


class Problem(NamedTuple):
    line: int | None
    message: str

    def as_json(self) -> dict[str, object]:
        return {"line": self.line, "message": self.message}


class Hit(NamedTuple):
    line: int
    kind: str
    excerpt: str


# One instance of each typed error, as the core raises it; the test below fails when a new
# subclass appears without a line here, so none escapes the map.
SAMPLES: dict[str, AgyError] = {
    "AgyError": AgyError("it went wrong", hint="try again"),
    "Failure": errors.Failure("a check failed"),
    "InvalidDocument": errors.InvalidDocument(
        "STATE.md is invalid", [Problem(3, "bad bullet"), Problem(None, "no goal")], hint="fix it"
    ),
    "PatchError": errors.PatchError("no step 9", hint="git agy-state show"),
    "SecretFound": errors.SecretFound("a credential", [Hit(2, "aws", "AKIA…")], hint="remove it"),
    "NotFound": errors.NotFound("no such snapshot: abc"),
    "WorkAtRisk": errors.WorkAtRisk("STATE.md has unsaved edits", hint="save first"),
    "NotARepository": errors.NotARepository("not a git repository"),
    "UsageError": errors.UsageError("no such option: --x", hint="git agy-state --help"),
    "NotFinished": errors.NotFinished("job j1 is still running"),
    "BrokenRef": errors.BrokenRef("refs/agy/state", "refs/agy/state is a symbolic ref"),
    "CannotWrite": errors.CannotWrite("cannot write /r/.git/agy/lock: read-only file system"),
    "TimedOut": errors.TimedOut("not every job ended within 1s"),
    "AgentMissing": errors.AgentMissing("agy is not installed"),
    "Interrupted": errors.Interrupted("interrupted"),
}


def test_every_typed_error_has_a_sample() -> None:
    names = {
        cls.__name__ for cls in all_subclasses(AgyError) if cls.__module__ == "gitstate.errors"
    }
    assert names | {"AgyError"} <= set(SAMPLES), "add the new error to SAMPLES"


def test_the_code_table_is_the_documented_table() -> None:
    constants = {
        value for name, value in vars(errors).items() if name.startswith("EXIT_") and value
    }  # EXIT_OK (0) is the table's first row too
    assert constants | {errors.EXIT_OK} == documented_codes()


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_error_as_text_and_json(name: str) -> None:
    exc = SAMPLES[name]
    assert exc.exit_code in documented_codes()
    code, lines = error_map.text(exc)
    assert code == exc.exit_code
    assert lines[0] == f"error: {exc.message}"
    assert (lines[-1] == f"hint: {exc.hint}") == bool(exc.hint)
    code, body = error_map.as_json(exc)
    assert code == exc.exit_code and body["code"] == exc.exit_code
    assert body["error"] == exc.message and body.get("hint") == exc.hint
    assert json.loads(json.dumps(body)) == body  # a plain JSON value


def test_an_invalid_documents_problems_are_listed() -> None:
    exc = errors.InvalidDocument("STATE.md is invalid", [Problem(i, f"p{i}") for i in range(1, 23)])
    _, lines = error_map.text(exc)
    assert lines[1] == "  - line 1: p1" and lines[20] == "  - line 20: p20"
    assert lines[21] == "  … and 2 more" and len(lines) == 22
    _, body = error_map.as_json(exc)
    assert body["errors"][0] == {"line": 1, "message": "p1"} and len(body["errors"]) == 22


def test_a_credential_hit_is_in_the_json_and_not_in_the_text() -> None:
    exc = SAMPLES["SecretFound"]
    _, body = error_map.as_json(exc)
    assert body["hits"] == [{"line": 2, "kind": "aws", "excerpt": "AKIA…"}]
    assert not any("AKIA" in line for line in error_map.text(exc)[1])


def test_control_characters_are_escaped_in_the_text() -> None:
    _, lines = error_map.text(errors.NotFound("no snapshot \x1b[31mred", hint="bell\x07"))
    assert lines == ["error: no snapshot \\x1b[31mred", "hint: bell\\x07"]


def test_other_exceptions_map_to_one_line() -> None:
    code, lines = error_map.text(OSError(errno.EROFS, "Read-only file system", "/r/.git/agy/lock"))
    assert code == errors.EXIT_FAILURE
    assert lines[0] == "error: cannot write /r/.git/agy/lock: read-only file system"
    code, lines = error_map.text(KeyboardInterrupt())
    assert (code, lines) == (errors.EXIT_INTERRUPTED, ["error: interrupted"])
    code, body = error_map.as_json(ZeroDivisionError("division by zero"))
    assert code == errors.EXIT_FAILURE
    assert body["error"] == "internal error: ZeroDivisionError: division by zero"
    assert error_map.is_internal(ZeroDivisionError()) and not error_map.is_internal(OSError(5, "x"))


def test_a_log_keeps_one_line_unless_it_asks_for_the_traceback() -> None:
    try:
        raise errors.NotFound("no such job: j1", hint="git agy-state job list")
    except errors.NotFound as exc:
        assert error_map.log_text(exc) == "error: no such job: j1"
        traced = error_map.log_text(exc, trace=True)
    first, rest = traced.split("\n", 1)
    assert first == "error: no such job: j1" and rest.startswith("Traceback")


def test_the_map_loads_neither_click_nor_pygit2_nor_typing() -> None:
    probe = (
        "import sys; import gitstate.error_map, gitstate.storage.logs; "
        "print(sorted({'click', 'pygit2', 'typing'} & set(sys.modules)))"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == "[]"


# ---- a click command -----------------------------------------------------------------------


def group_raising(exc: BaseException) -> click.Group:
    @click.group(cls=AgyGroup)
    def tool() -> None:
        pass

    @tool.command()
    @click.option("--json", "as_json", is_flag=True)
    def fail(as_json: bool) -> None:
        raise exc

    return tool


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_command_says_each_error_as_the_map(name: str) -> None:
    exc = SAMPLES[name]
    result = CliRunner().invoke(group_raising(exc), ["fail"], catch_exceptions=False)
    code, lines = error_map.text(exc)
    assert (result.exit_code, result.stderr, result.stdout) == (code, "\n".join(lines) + "\n", "")
    result = CliRunner().invoke(group_raising(exc), ["fail", "--json"], catch_exceptions=False)
    code, body = error_map.as_json(exc)
    assert (result.exit_code, json.loads(result.stdout), result.stderr) == (code, body, "")


def test_a_command_says_an_unexpected_exception_as_an_internal_error() -> None:
    result = CliRunner().invoke(group_raising(LookupError("k")), ["fail"], catch_exceptions=False)
    assert result.exit_code == errors.EXIT_FAILURE
    assert result.stderr == (
        f"error: internal error: LookupError: k\nhint: {error_map.INTERNAL_HINT}\n"
    )


def test_the_real_command_line(repo: Repo, tmp_path: Path) -> None:
    cases = [
        (["show", "nosuch"], repo.path, errors.EXIT_NOT_FOUND),
        (["status"], tmp_path, errors.EXIT_NOT_A_REPOSITORY),
        (["status", "--frobnicate"], repo.path, errors.EXIT_USAGE),
    ]
    for args, cwd, code in cases:
        text = run_tool(*args, cwd=cwd)
        assert text.returncode == code, (args, text.stderr)
        assert text.stderr.startswith("error: ") and "Traceback" not in text.stderr, args
        as_json = run_tool(*args, "--json", cwd=cwd)
        body = json.loads(as_json.stdout)
        assert (as_json.returncode, body["code"]) == (code, code), args
        assert text.stderr.splitlines()[0] == f"error: {body['error']}", args


# ---- an agent hook -------------------------------------------------------------------------


def agent_hook(repo: Repo, *args: str, payload: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gitstate", "hook", *args],
        cwd=repo.path,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_agent_hook_usage_error_is_the_maps(repo: Repo) -> None:
    proc = agent_hook(repo, "inject", "--agent", "nobody", payload={})
    assert proc.returncode == errors.EXIT_USAGE
    first, hint = proc.stderr.splitlines()
    assert first.startswith("error: --agent takes ") and hint.startswith("hint: ")


def test_an_agent_hook_fails_open_and_logs_the_maps_line(repo: Repo, cli: Any) -> None:
    assert cli("patch", "--set", "goal=ship", "--todo", "later").exit_code == 0
    repo.view.write_text(repo.view.read_text().replace("## Open issues\n", "## Open issues\n- z\n"))
    (repo.path / ".git" / "refs" / "agy" / "state").write_text("1" * 40 + "\n")
    payload = {"conversationId": "c1", "workspacePaths": [str(repo.path)], "executionNum": 1}
    proc = agent_hook(repo, "stop-guard", payload=payload)
    assert (proc.returncode, json.loads(proc.stdout)) == (errors.EXIT_OK, {"decision": "allow"})
    log = (repo.path / ".git" / "agy" / "hook.log").read_text()
    said = "error: refs/agy/state points at 111111111111, which is missing from this repository"
    assert "stop-guard agent=agy failed open: " + said in log, log


# ---- a git hook ----------------------------------------------------------------------------


def git(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=repo.path, capture_output=True, text=True, timeout=60, check=False
    )


def installed(repo: Repo, cli: Any) -> None:
    assert cli("install", "--git").exit_code == 0
    assert cli("patch", "--set", "goal=ship", "--todo", "later").exit_code == 0


def hook_log(repo: Repo) -> list[str]:
    return (repo.path / ".git" / "agy" / "hook.log").read_text().splitlines()


def test_post_commit_logs_the_maps_line(repo: Repo, cli: Any) -> None:
    installed(repo, cli)
    repo.view.write_text("just some words\n")
    assert git(repo, "commit", "-q", "--allow-empty", "-m", "still commits").returncode == 0
    (entry,) = hook_log(repo)
    assert entry.split(" ", 1)[1] == "post-commit: error: STATE.md is invalid"


def test_post_checkout_logs_a_damaged_ref_and_the_checkout_goes_on(repo: Repo, cli: Any) -> None:
    installed(repo, cli)
    (repo.path / ".git" / "agy" / "view").unlink()  # so the hook reads the tip itself
    (repo.path / ".git" / "refs" / "agy" / "state").write_text("1" * 40 + "\n")
    proc = git(repo, "switch", "-c", "other")
    assert proc.returncode == 0 and "error" not in proc.stderr, proc.stderr
    assert repo.git("branch", "--show-current").strip() == "other"
    (entry,) = hook_log(repo)
    assert entry.split(" ", 1)[1] == (
        "post-checkout: error: refs/agy/state points at 111111111111, which is missing from "
        "this repository"
    )


# ---- the job supervisor --------------------------------------------------------------------


def supervisor(repo_dir: Path, job: str, fd: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *(sys.executable, "-I", "-m", "gitstate.jobs.usecases.supervise"),
            *("--repo", str(repo_dir), "--job", job, "--round", "1", "--lock-fd", str(fd)),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=(fd,),
    )


def test_a_supervisor_failure_is_the_maps_lines(tmp_path: Path) -> None:
    from gitstate.jobs.usecases.supervise import Supervisor
    from gitstate.storage.layout import Layout

    nowhere = tmp_path / "not-a-repository"
    nowhere.mkdir()
    with pytest.raises(Exception) as raised:  # what the same run raises in this process
        Supervisor(Layout(None, nowhere, nowhere, None), "j1", 1).run()
    code, lines = error_map.text(raised.value)
    fd = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        proc = supervisor(nowhere, "j1", fd)
        _, stderr = proc.communicate(timeout=60)
    finally:
        os.close(fd)
    assert proc.returncode == code
    assert stderr.splitlines() == [f"supervisor: {line}" for line in lines]


def test_a_terminated_supervisor_exits_143(jobs_repo: Repo, cli: Any) -> None:
    from gitstate.jobs.storage import files as jobfiles
    from gitstate.storage.layout import discover

    jobs_repo.git("config", "agy.maxConcurrent", "1")
    first = submit(cli, "@fake sleep 30")["job_id"]
    layout = discover(jobs_repo.path)
    assert layout is not None
    wait_until(lambda: meta(jobs_repo, first).get("pid_agent"), what="the first job's agent")
    second = submit(cli, "waits for a slot")["job_id"]
    files = jobfiles.files(layout, second)
    waiting = wait_until(lambda: meta(jobs_repo, second).get("pid_supervisor"), what="its pid")
    assert isinstance(waiting, int)
    os.kill(waiting, signal.SIGKILL)  # a supervisor of ours, our child, takes its place below
    wait_until(lambda: not jobfiles.supervisor_alive(files), what="its lock to be free")
    assert meta(jobs_repo, second)["state"] == "queued"
    fd = jobfiles.take_supervisor_lock(files)
    try:
        proc = supervisor(layout.commondir, second, fd)
    finally:
        os.close(fd)
    wait_until(
        lambda: meta(jobs_repo, second).get("pid_supervisor") == proc.pid, what="it", proc=proc
    )
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == errors.EXIT_TERMINATED == 143, stderr
