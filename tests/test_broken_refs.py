"""Damaged agy refs and snapshots (issue 12, item 3): one line naming the ref, exit 1, a hint
with the repair in plain git, nothing moved; `doctor` reports every one of them and goes on.

Each state is built with git plumbing, as a crash, a hand edit or a hostile script would leave
it. Commands run in process (the `cli` fixture); the agent hooks run as the agent starts them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo

STATE = "refs/agy/state"
FAKE = "1234567890123456789012345678901234567890"  # an object no repository holds


def two_snapshots(cli: Any) -> None:
    for args in (("--set", "goal=ship it", "--todo", "write it"), ("--start", "1")):
        result = cli("patch", *args)
        assert result.exit_code == 0, result.stderr


def break_ref(repo: Repo, ref: str, kind: str) -> None:
    """Point `ref` at something that is not a commit, or make its file unreadable."""
    loose = repo.path / ".git" / ref
    if kind == "blob":
        repo.git("update-ref", ref, repo.git("rev-parse", "HEAD:README").strip())
    elif kind == "tree":
        repo.git("update-ref", ref, repo.git("rev-parse", "HEAD^{tree}").strip())
    elif kind == "tag":  # an annotated tag object, of a good commit
        repo.git("tag", "-a", "-m", "t", "wrapped", "HEAD")
        repo.git("update-ref", ref, repo.git("rev-parse", "wrapped").strip())
        repo.git("tag", "-d", "wrapped")
    elif kind == "missing":
        loose.parent.mkdir(parents=True, exist_ok=True)
        loose.write_text(FAKE + "\n")
    elif kind == "garbage":
        loose.parent.mkdir(parents=True, exist_ok=True)
        loose.write_text("garbage\n")
    elif kind == "symbolic":
        repo.git("symbolic-ref", ref, "refs/heads/main")
    else:
        raise AssertionError(kind)


def tip_with_state_entry(repo: Repo, kind: str) -> None:
    """A new tip whose tree holds STATE.md as something other than a UTF-8 file."""
    head = repo.git("rev-parse", "HEAD").strip()
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    if kind == "directory":
        entry = f"040000 tree {tree}\tSTATE.md\n"
    elif kind == "gitlink":
        entry = f"160000 commit {head}\tSTATE.md\n"
    elif kind == "symlink":
        link = repo.git("hash-object", "-w", "--stdin", input="/etc/passwd").strip()
        entry = f"120000 blob {link}\tSTATE.md\n"
    elif kind == "junk":
        junk = repo.path / ".junk"
        junk.write_bytes(b"\xff\xfe\x00junk\n")
        blob = repo.git("hash-object", "-w", str(junk)).strip()
        junk.unlink()
        entry = f"100644 blob {blob}\tSTATE.md\n"
    elif kind == "missing-blob":
        entry = f"100644 blob {FAKE}\tSTATE.md\n"
    else:
        raise AssertionError(kind)
    made = repo.git("mktree", "--missing", input=entry).strip()
    commit = repo.git(
        "commit-tree", made, "-p", STATE, "-m", "damaged\n\nAgy-Format: 1\nAgy-Phase: IDLE"
    ).strip()
    repo.git("update-ref", STATE, commit)


def ref_files(repo: Repo) -> dict[str, bytes]:
    """Every ref as stored (loose files byte for byte, packed-refs), and the view."""
    git = repo.path / ".git"
    found = {
        p.relative_to(git).as_posix(): p.read_bytes()
        for p in (git / "refs").rglob("*")
        if p.is_file() or p.is_symlink()
    }
    for name in ("packed-refs", "HEAD"):
        if (git / name).exists():
            found[name] = (git / name).read_bytes()
    if repo.view.exists():
        found["STATE.md"] = repo.view.read_bytes()
    return found


def assert_one_line(result: Any, names: str, args: tuple[str, ...]) -> None:
    """exit 1, `error: …` naming the ref (or snapshot), a `hint: …`, no internal error."""
    shown = (args, result.exit_code, result.stdout, result.stderr)
    assert result.exit_code == 1, shown
    lines = result.stderr.splitlines()
    assert lines and lines[0].startswith("error: "), shown
    assert names in lines[0], shown
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, shown
    assert any(line.startswith("hint: ") for line in lines[1:]), shown


TIP_READERS: list[tuple[str, ...]] = [
    ("status",),
    ("show",),
    ("log",),
    ("save", "-m", "x"),
    ("checkout", "--force"),
    ("diff",),
    ("phase",),
    ("phase", "PLANNING"),
    ("restore", "~1", "--force"),
    ("archive",),
    ("patch", "--todo", "another"),
    ("checkpoint", "-m", "c"),
]

REF_KINDS = ["blob", "tree", "tag", "missing", "garbage", "symbolic"]


@pytest.mark.parametrize("kind", REF_KINDS)
def test_a_broken_state_ref_is_one_line_and_moves_nothing(repo: Repo, cli: Any, kind: str) -> None:
    two_snapshots(cli)
    break_ref(repo, STATE, kind)
    repo.view.write_text(repo.view.read_text().replace("ship it", "ship it soon"))  # unsaved
    before = ref_files(repo)
    for args in TIP_READERS:
        result = cli(*args)
        assert_one_line(result, STATE, args)
        assert ref_files(repo) == before, args
    result = cli("status", "--json")
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["code"] == 1 and STATE in body["error"] and "git update-ref" in body["hint"]


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("blob", "points at a blob"),
        ("tree", "points at a tree"),
        ("tag", "points at a tag object"),
        ("missing", "which is missing from this repository"),
        ("garbage", "is not a readable ref"),
        ("symbolic", "is a symbolic ref (to refs/heads/main)"),
    ],
)
def test_the_message_says_what_is_wrong_and_how_to_repair(
    repo: Repo, cli: Any, kind: str, says: str
) -> None:
    two_snapshots(cli)
    break_ref(repo, STATE, kind)
    result = cli("save")
    first, hint = result.stderr.splitlines()[:2]
    assert first.startswith(f"error: {STATE} ") and says in first
    assert hint.startswith("hint: ")
    if kind == "garbage":  # git itself cannot update or delete it: the file goes first
        assert f"remove the file {repo.path / '.git' / STATE}" in hint
    else:  # --no-deref: never move or delete what a symbolic ref points at
        assert f"git update-ref --no-deref {STATE} <commit>" in hint
        assert f"git update-ref --no-deref -d {STATE}" in hint
    assert str(repo.path / ".git" / "logs" / STATE) in hint  # where the earlier tips are


def test_the_repair_the_hint_gives_works(repo: Repo, cli: Any) -> None:
    two_snapshots(cli)
    good = repo.ref()
    assert good is not None
    for kind in ("symbolic", "blob", "missing"):
        break_ref(repo, STATE, kind)
        assert cli("status").exit_code == 1
        repo.git("update-ref", "--no-deref", STATE, good)
        assert cli("status").exit_code == 0
    assert repo.git("rev-parse", "main").strip() != good  # the symbolic ref's target untouched


STATE_ENTRIES = ["directory", "gitlink", "symlink", "junk", "missing-blob"]
# Commands that must read the tip's STATE.md as a document.
DOCUMENT_READERS: list[tuple[str, ...]] = [
    ("save", "-m", "x"),
    ("patch", "--todo", "another"),
    ("restore", "~1", "--force"),
    ("archive",),
]


@pytest.mark.parametrize("kind", STATE_ENTRIES)
def test_a_snapshot_whose_state_is_no_text_file_is_one_line(
    repo: Repo, cli: Any, kind: str
) -> None:
    two_snapshots(cli)
    tip_with_state_entry(repo, kind)
    tip = repo.ref()
    assert tip is not None
    repo.view.write_text(repo.view.read_text().replace("ship it", "ship it soon"))
    before = ref_files(repo)
    for args in DOCUMENT_READERS:
        result = cli(*args)
        assert_one_line(result, f"snapshot {tip[:12]}", args)
        assert ref_files(repo) == before, args
    # The others either work (show prints bytes as they are) or say the same one line.
    for args in [*TIP_READERS, ("show", "--json"), ("show", "--section", "goal")]:
        now = ref_files(repo)
        result = cli(*args)
        said = result.stdout if "--json" in args else result.stderr
        assert "internal error" not in said and "Traceback" not in said, args
        if result.exit_code != 0:
            assert ref_files(repo) == now, args
            if "--json" in args:
                assert json.loads(result.stdout)["code"] == result.exit_code, args
            else:
                assert result.stderr.startswith("error: "), (args, result.stderr)


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("directory", "holds STATE.md as a directory, not a file"),
        ("gitlink", "holds STATE.md as a submodule (gitlink), not a file"),
        ("symlink", "holds STATE.md as a symbolic link, not a file"),
        ("junk", "holds a STATE.md that is not UTF-8 text (line 1)"),
        ("missing-blob", "holds a STATE.md that is missing from this repository"),
    ],
)
def test_the_snapshot_message_names_it(repo: Repo, cli: Any, kind: str, says: str) -> None:
    two_snapshots(cli)
    tip_with_state_entry(repo, kind)
    result = cli("patch", "--todo", "x")
    assert says in result.stderr.splitlines()[0], result.stderr


# ---- doctor ---------------------------------------------------------------------------------


def doctor(cli: Any) -> tuple[int, dict[str, Any], str]:
    text = cli("doctor")
    assert text.stderr == "", text.stderr  # reported among the checks, never an abort
    result = cli("doctor", "--json")
    assert result.exit_code == text.exit_code
    return result.exit_code, json.loads(result.stdout), text.stdout


def failed(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"] if c["status"] == "fail"}


@pytest.mark.parametrize("kind", REF_KINDS)
def test_doctor_reports_a_broken_state_ref_and_goes_on(repo: Repo, cli: Any, kind: str) -> None:
    two_snapshots(cli)
    break_ref(repo, STATE, kind)
    code, report, text = doctor(cli)
    assert code == 1 and report["ok"] is False
    assert report["code"] == 1 and STATE in report["error"]  # the error object, as elsewhere
    check = failed(report)[STATE]
    assert check["hint"] and "git update-ref" in check["hint"]
    names = [c["name"] for c in report["checks"]]
    assert {"STATE.md", "git hooks", "remote", "jobs"} <= set(names)  # the rest still ran
    assert f"FAIL  {STATE}: " in text


@pytest.mark.parametrize("kind", STATE_ENTRIES)
def test_doctor_reports_a_damaged_snapshot(repo: Repo, cli: Any, kind: str) -> None:
    two_snapshots(cli)
    tip_with_state_entry(repo, kind)
    code, report, _ = doctor(cli)
    assert code == 1
    assert "STATE.md" in failed(report)[STATE]["detail"]


def test_doctor_reports_a_missing_parent(repo: Repo, cli: Any) -> None:
    two_snapshots(cli)
    tip = repo.ref()
    tree = repo.git("rev-parse", f"{tip}^{{tree}}").strip()
    who = "A U Thor <author@example.com> 1767323045 +0000"
    text = f"tree {tree}\nparent {FAKE}\nauthor {who}\ncommitter {who}\n\nx\n\nAgy-Format: 1\n"
    commit = repo.git(  # git commit-tree refuses a missing parent; a crash or a shallow copy not
        "hash-object", "-t", "commit", "-w", "--literally", "--stdin", input=text
    ).strip()
    repo.git("update-ref", STATE, commit)
    code, report, _ = doctor(cli)
    assert code == 1
    assert f"snapshot {FAKE[:12]} is missing" in failed(report)[STATE]["detail"]
    result = cli("log")
    assert_one_line(result, f"snapshot {FAKE[:12]}", ("log",))


OTHER_REFS = [
    "refs/agy/archive/old-task",
    "refs/agy/jobs/j1",
    "refs/notes/agy/decisions",
    "refs/agy/wt/w1/state",
    "refs/tags/checkpoint-20260101-000000",
]


@pytest.mark.parametrize("kind", ["blob", "missing", "garbage", "symbolic"])
def test_doctor_names_every_broken_agy_ref(repo: Repo, cli: Any, kind: str) -> None:
    two_snapshots(cli)
    for ref in OTHER_REFS:
        break_ref(repo, ref, kind)
    before = ref_files(repo)
    code, report, _ = doctor(cli)
    assert code == 1
    broken = failed(report)
    for ref in OTHER_REFS:
        if ref.startswith("refs/tags/") and kind == "blob":
            assert ref in broken and "not a commit or a tag of one" in broken[ref]["detail"]
        else:
            assert ref in broken, (ref, report)
        assert broken[ref]["hint"]
    assert STATE not in broken  # the sound chain is still said to be sound
    assert ref_files(repo) == before


@pytest.mark.parametrize("kind", ["blob", "missing", "garbage", "symbolic"])
def test_commands_reading_other_agy_refs_say_which(repo: Repo, cli: Any, kind: str) -> None:
    two_snapshots(cli)
    assert cli("decide", "--type", "Rule", "keep it small").exit_code == 0
    for ref in ("refs/agy/archive/old-task", "refs/notes/agy/decisions"):
        break_ref(repo, ref, kind)
    before = ref_files(repo)
    for args, ref in (
        (("archives",), "refs/agy/archive/old-task"),
        (("show", "archive/old-task"), "refs/agy/archive/old-task"),
        (("log", "--archived"), "refs/agy/archive/old-task"),
        (("decisions",), "refs/notes/agy/decisions"),
        (("decide", "--type", "Rule", "another"), "refs/notes/agy/decisions"),
    ):
        result = cli(*args)
        if kind == "garbage" and args[0] in ("archives", "log"):
            # libgit2 does not list an unreadable ref: these commands do not see it.
            assert result.exit_code == 0 or ref in result.stderr, (args, result.stderr)
        else:
            assert_one_line(result, ref, args)
        assert ref_files(repo) == before, args


def test_doctor_reports_a_view_that_is_no_regular_file(repo: Repo, cli: Any) -> None:
    two_snapshots(cli)
    repo.view.unlink()
    repo.view.symlink_to(repo.path / "README")
    code, report, _ = doctor(cli)
    assert code == 1
    assert "is a symbolic link, not a regular file" in failed(report)["STATE.md"]["detail"]


# ---- the agent hooks fail open ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["garbage", "blob", "symbolic"])
def test_the_agent_hooks_fail_open_on_a_broken_ref(repo: Repo, cli: Any, kind: str) -> None:
    two_snapshots(cli)
    repo.view.write_text(repo.view.read_text().replace("ship it", "ship it soon"))  # dirty
    break_ref(repo, STATE, kind)
    before = ref_files(repo)
    payload = json.dumps({"session_id": "s1", "cwd": str(repo.path), "hook_event_name": "x"})
    for event in ("inject", "stop-guard", "pre-compact"):
        proc = subprocess.run(
            [sys.executable, "-m", "gitstate", "hook", event],
            cwd=repo.path,
            input=payload,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, (event, proc.stderr)
        assert "Traceback" not in proc.stderr, event
    assert ref_files(repo) == before
    log = Path(repo.path / ".git" / "agy" / "hook.log")
    assert "failed open" in log.read_text()  # pre-compact's save failed, and was logged


# ---- sync pushes no damaged ref ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["blob", "tree", "symbolic"])
def test_sync_stops_before_pushing_a_broken_chain(
    repo: Repo, cli: Any, tmp_path: Path, kind: str
) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("config", "user.email", "me@example.com")
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    two_snapshots(cli)
    break_ref(repo, STATE, kind)
    before = ref_files(repo)
    result = cli("sync")
    assert_one_line(result, STATE, ("sync",))
    pushed = subprocess.run(
        ["git", "--git-dir", str(remote), "for-each-ref", "refs/agy/"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert pushed.stdout == ""  # nothing of the damaged chain reached the remote
    assert {k: v for k, v in ref_files(repo).items() if "remotes" not in k} == {
        k: v for k, v in before.items() if "remotes" not in k
    }


@pytest.mark.parametrize("kind", ["blob", "tree", "tag", "symbolic"])
def test_pre_push_carries_no_damaged_ref(repo: Repo, cli: Any, kind: str) -> None:
    from gitstate.usecases.sync import carry
    from gitstate.usecases.workspace import Workspace

    two_snapshots(cli)
    assert cli("decide", "--type", "Rule", "keep it small").exit_code == 0
    break_ref(repo, STATE, kind)
    break_ref(repo, "refs/notes/agy/decisions", "blob" if kind == "symbolic" else kind)
    planned = carry.plan(Workspace.open(repo.path), "me", {}, lambda: [])
    assert planned.specs == []  # what the pre-push hook (and sync) would send
    assert any(w.startswith(f"{STATE} (") for w in planned.withheld), planned.withheld
    assert any(w.startswith("refs/notes/agy/decisions (") for w in planned.withheld)


def test_a_nul_in_the_tips_title_reaches_no_reflog_line(repo: Repo, cli: Any) -> None:
    """archive names its reflog line after the task: a NUL there made libgit2 refuse the move
    (an internal error); the line is one line of text instead."""
    from tests.support import EN_SAMPLE

    two_snapshots(cli)
    blob = repo.path / ".nul"
    blob.write_bytes(EN_SAMPLE.replace("with backoff\n", "with back\0off\n", 1).encode())
    oid = repo.git("hash-object", "-w", str(blob)).strip()
    blob.unlink()
    tree = repo.git("mktree", input=f"100644 blob {oid}\tSTATE.md\n").strip()
    tip = repo.git("commit-tree", tree, "-p", STATE, "-m", "x\n\nAgy-Format: 1").strip()
    repo.git("update-ref", STATE, tip)
    repo.view.unlink()
    result = cli("archive")
    assert "internal error" not in result.stderr, result.stderr
    assert result.exit_code == 0, result.stderr
    line = (repo.path / ".git" / "logs" / STATE).read_bytes().splitlines()[-1]
    assert b"\0" not in line and b"agy-state: " in line
