"""The hooks' own save (storage/loose.py) against pygit2's Store: the same commits byte for byte,
objects git accepts, the reflog line git writes, every condition that sends the save back to
pygit2, and a writer killed mid-save (docs/hooks.md, "The hooks' own save")."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from support import wait_until
from test_robustness import assert_fsck_clean, assert_linear, blob, chain, ref_moved, reflog

from gitstate.storage import loose
from gitstate.storage.layout import Layout, discover
from gitstate.storage.snapshots import Store
from gitstate.usecases.state import writer
from gitstate.usecases.workspace import Workspace

STATE_REF = "refs/agy/state"
MESSAGE = "save: goal\n\nAgy-Format: 1\nAgy-Sections: goal\nAgy-Phase: IDLE\n"


def layout_of(path: Path) -> Layout:
    found = discover(path)
    assert found is not None
    return found


def fresh(tmp_path: Path, name: str) -> Layout:
    path = tmp_path / name
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    return layout_of(path)


def lean(layout: Layout) -> loose.LooseStore:
    store = loose.open_for_hook(layout)
    assert store is not None, loose.refusal(layout)
    return store


def git_in(layout: Layout, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=layout.workdir, capture_output=True, text=True, check=True
    )
    return proc.stdout


def edit_view(path: Path, line: str) -> None:
    view = path / "STATE.md"
    view.write_text(view.read_text().replace("## Open issues\n", f"## Open issues\n- {line}\n"))


# ---- the same objects ------------------------------------------------------------------------

IDENTITIES = {
    "environment": {},
    "config only": {"GIT_AUTHOR_NAME": None, "GIT_COMMITTER_NAME": None},
    "no identity at all": {
        "GIT_AUTHOR_NAME": None,
        "GIT_AUTHOR_EMAIL": None,
        "GIT_COMMITTER_NAME": None,
        "GIT_COMMITTER_EMAIL": None,
    },
    "non-ASCII names, a negative zone": {
        "GIT_AUTHOR_NAME": "張三 Müller",
        "GIT_COMMITTER_NAME": "李四",
        "GIT_AUTHOR_DATE": "@1767323045 -0330",
        "GIT_COMMITTER_DATE": "1767323046 +0545",
    },
    "an ISO date": {"GIT_AUTHOR_DATE": "2026-01-02T03:04:05-07:00"},
}


@pytest.mark.parametrize("case", list(IDENTITIES))
def test_the_same_inputs_make_the_same_commit_as_pygit2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    for key, value in IDENTITIES[case].items():
        if value is None:
            monkeypatch.delenv(key)
        else:
            monkeypatch.setenv(key, value)
    ours, theirs = fresh(tmp_path, "ours"), fresh(tmp_path, "theirs")
    for layout in (ours, theirs):
        git_in(layout, "config", "user.name", "Config Name")
        git_in(layout, "config", "user.email", "config@example.com")
    data = "# 任務\n\n## Goal\n- ship it\n".encode()
    first = lean(ours).create_snapshot(data, [], MESSAGE)
    assert first == Store(theirs).create_snapshot(data, [], MESSAGE)
    second = lean(ours).create_snapshot(b"x\n", [first], "closing: 結束\n")
    assert second == Store(theirs).create_snapshot(b"x\n", [first], "closing: 結束\n")
    closing = lean(ours).create_snapshot(None, [second], MESSAGE)  # no STATE.md: empty tree
    assert closing == Store(theirs).create_snapshot(None, [second], MESSAGE)
    # Written by us alone (the other repository never shares objects): git takes them.
    assert git_in(ours, "cat-file", "-p", f"{second}:STATE.md") == "x\n"
    git_in(ours, "update-ref", STATE_REF, closing)
    assert_fsck_clean(Repo(ours.workdir))  # type: ignore[arg-type]
    assert not list((ours.commondir / "objects").glob("*/tmp_obj_*"))


def test_a_hook_save_writes_the_snapshot_pygit2_would(repo: Repo, cli: Any, tmp_path: Path) -> None:
    cli("patch", "--set", "goal=ship it", "--todo", "later")
    edit_view(repo.path, "found by hand")
    pristine = tmp_path / "pristine"
    shutil.copytree(repo.path, pristine, symlinks=True)
    for attempt in range(3):  # the `Updated` stamp is the minute: both saves inside one
        ours_path, other = tmp_path / f"ours-{attempt}", tmp_path / f"theirs-{attempt}"
        for path in (ours_path, other):
            shutil.copytree(pristine, path, symlinks=True)
        minute = time.strftime("%H:%M")
        theirs = writer.save(Workspace(layout_of(other)), session="s-1", origin="stop-guard")
        hook_ws = Workspace.for_hook(layout_of(ours_path))
        assert isinstance(hook_ws.store, loose.LooseStore)
        ours = writer.save(hook_ws, session="s-1", origin="stop-guard")
        if time.strftime("%H:%M") == minute:
            break
    assert ours.outcome == writer.Outcome.SAVED
    assert ours.snapshot == theirs.snapshot
    assert ours.sections == theirs.sections == ("open_issues",)
    assert (ours_path / ".git" / "agy" / "view").read_text() == (
        other / ".git" / "agy" / "view"
    ).read_text()
    ours_log = (ours_path / ".git" / "logs" / STATE_REF).read_text().splitlines()
    theirs_log = (other / ".git" / "logs" / STATE_REF).read_text().splitlines()
    assert ours_log[-1] == theirs_log[-1]
    assert_fsck_clean(Repo(ours_path))


def test_the_reflog_line_is_as_git_writes_it(repo: Repo, cli: Any) -> None:
    cli("patch", "--todo", "later")
    before = repo.ref()
    edit_view(repo.path, "x")
    written = writer.save(Workspace.for_hook(layout_of(repo.path)), origin="stop-guard")
    ours = (repo.path / ".git" / "logs" / STATE_REF).read_text().splitlines()[-1]
    repo.git("update-ref", "--create-reflog", "-m", "agy-state: save (stop-guard): open_issues",
             "refs/agy/probe", str(written.snapshot))  # fmt: skip
    git_line = (repo.path / ".git" / "logs" / "refs/agy/probe").read_text().splitlines()[-1]
    assert ours == f"{before} {written.snapshot} " + git_line.split(" ", 2)[2]


def test_a_packed_tip_is_read_through_git(repo: Repo, cli: Any, tmp_path: Path) -> None:
    cli("patch", "--set", "goal=ship it", "--todo", "later")
    repo.git("gc", "-q", "--prune=now")
    tip = repo.ref()
    assert tip is not None
    assert not (repo.path / ".git" / "objects" / tip[:2] / tip[2:]).exists()
    store = lean(layout_of(repo.path))
    assert store.tip() == tip
    assert store.state_bytes(tip) == blob(repo, tip)
    assert store.snapshot(tip) == Store(layout_of(repo.path)).snapshot(tip)
    assert store.head_info() == Store(layout_of(repo.path)).head_info()
    assert "_store" not in vars(store) or vars(store)["_store"] is None  # no pygit2 on the way
    edit_view(repo.path, "after gc")
    saved = writer.save(Workspace(layout_of(repo.path), store), origin="pre-compact")
    assert saved.outcome == writer.Outcome.SAVED
    assert repo.git("rev-parse", f"{saved.snapshot}^") == f"{tip}\n"
    assert_fsck_clean(repo)


def test_an_odd_tip_is_answered_by_pygit2_in_its_words(repo: Repo, cli: Any) -> None:
    cli("patch", "--todo", "later")
    repo.git("symbolic-ref", STATE_REF, "refs/heads/main")
    from gitstate.errors import BrokenRef

    with pytest.raises(BrokenRef) as ours:
        lean(layout_of(repo.path)).tip()
    with pytest.raises(BrokenRef) as theirs:
        Store(layout_of(repo.path)).tip()
    assert ours.value.message == theirs.value.message


def test_an_identity_libgit2_would_trim_is_left_to_pygit2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "  Padded Name ")
    ours, theirs = fresh(tmp_path, "ours"), fresh(tmp_path, "theirs")
    assert lean(ours).create_snapshot(b"x\n", [], MESSAGE) == Store(theirs).create_snapshot(
        b"x\n", [], MESSAGE
    )


# ---- when the save goes to pygit2 ------------------------------------------------------------

UNUSUAL_CONFIG = {
    "include": "[include]\n\tpath = other.conf\n",
    "includeIf": '[includeIf "gitdir:~/work/"]\n\tpath = work.conf\n',
    "commit signing": "[commit]\n\tgpgsign = true\n",
    "signing as a bare key": "[commit]\n\tgpgsign\n",
    "useConfigOnly": "[user]\n\tuseConfigOnly = true\n",
    "sha256": "[extensions]\n\tobjectFormat = sha256\n",
    "reftable": "[extensions]\n\trefStorage = reftable\n",
    "worktree config": "[extensions]\n\tworktreeConfig = true\n",
    "shared repository": "[core]\n\tsharedRepository = group\n",
    "fsync": "[core]\n\tfsync = loose-object\n",
    "fsyncObjectFiles": "[core]\n\tfsyncObjectFiles = true\n",
    "a continuation line": "[user]\n\tname = A \\\n  U Thor\n",
    "an unknown escape": '[user]\n\tname = "A \\q"\n',
    "an unterminated quote": '[user]\n\tname = "A U Thor\n',
    "a tab inside a value": "[user]\n\tname = A\tU\n",
    "not UTF-8": "[user]\n\tname = \xff\n",
    "a name with no value": "[user]\n\tname\n",
    "a future repository format": "[core]\n\trepositoryformatversion = 2\n",
}


# Config that git and libgit2 refuse themselves: the hook fails open as it always did.
REFUSED_BY_GIT = (
    "sha256",
    "reftable",
    "a future repository format",
    "an unknown escape",
    "an unterminated quote",
    "a name with no value",
)


@pytest.mark.parametrize("case", list(UNUSUAL_CONFIG))
@pytest.mark.parametrize("where", ["repository", "global"])
def test_unusual_config_sends_the_hooks_save_to_pygit2(
    repo: Repo, cli: Any, hermetic: Path, case: str, where: str
) -> None:
    cli("patch", "--todo", "later")
    layout = layout_of(repo.path)
    assert loose.refusal(layout) is None
    target = repo.path / ".git" / "config" if where == "repository" else hermetic / ".gitconfig"
    text = UNUSUAL_CONFIG[case]
    if "repositoryformatversion" in text and where == "global":
        return  # the repository's own `repositoryformatversion = 0` wins, rightly
    with open(target, "ab") as handle:
        handle.write(text.encode("latin-1"))
    assert loose.refusal(layout) is not None
    assert loose.open_for_hook(layout) is None
    ws = Workspace.for_hook(layout)
    assert not ws.store_open  # opened on first use: pygit2's Store
    if case in REFUSED_BY_GIT or "signing" in case:
        return  # a config git and pygit2 refuse too, or signing with a program not here
    edit_view(repo.path, "through pygit2")
    before = repo.ref()
    written = writer.save(ws, origin="stop-guard")
    assert isinstance(ws.store, Store)
    assert written.outcome == writer.Outcome.SAVED
    assert repo.ref() != before


@pytest.mark.parametrize(
    "name", ["GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG_COUNT"]
)
def test_unusual_environment_sends_the_save_to_pygit2(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "1")
    assert loose.refusal(layout_of(repo.path)) == f"{name} is set"


def test_no_home_sends_the_save_to_pygit2(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOME")
    assert loose.refusal(layout_of(repo.path)) == "HOME is not set"


@pytest.mark.parametrize(
    "text",
    [
        "[commit]\n\tgpgsign = false\n",
        '[user]\n\tname = "A U Thor" # a comment\n',
        "[extensions]\n\tobjectFormat = sha1\n",
        '[remote "origin"]\n\turl = https://example.com/x.git\n',
        "; a comment\n[gc]\n\tauto = 0\n",
    ],
)
def test_ordinary_config_keeps_the_standard_library_save(repo: Repo, text: str) -> None:
    with open(repo.path / ".git" / "config", "a") as handle:
        handle.write(text)
    assert loose.refusal(layout_of(repo.path)) is None


def test_config_values_are_read_as_git_reads_them(repo: Repo) -> None:
    with open(repo.path / ".git" / "config", "a") as handle:
        handle.write('[user]\n\tname = "  Quoted  " tail ; comment\n[agy]\n\tlanguage = zh-TW\n')
    store = lean(layout_of(repo.path))
    assert store.config_value("user.name") == repo.git("config", "user.name").rstrip("\n")
    assert store.config_value("agy.language") == "zh-TW"
    assert store.config_value("AGY.Language") == "zh-TW"


# ---- the hook itself -------------------------------------------------------------------------


@pytest.mark.parametrize("event", ["stop-guard", "pre-compact"])
def test_a_dirty_view_is_saved_by_a_hook_that_imports_neither_pygit2_nor_typing(
    repo: Repo, cli: Any, event: str
) -> None:
    cli("patch", "--set", "goal=ship it", "--todo", "later")
    before = repo.ref()
    edit_view(repo.path, "edited by hand")
    name = "Stop" if event == "stop-guard" else "PreCompact"
    payload = {"session_id": "s-9", "cwd": str(repo.path), "hook_event_name": name}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gitstate", "hook", event],
        cwd=repo.path,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
    )
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    assert "gitstate.storage.loose" in modules
    heavy = ("pygit2", "typing", "dataclasses", "inspect", "subprocess", "click")
    assert not {m for m in modules if m.split(".")[0] in heavy}
    assert repo.ref() != before
    subject = repo.git("log", "-1", "--format=%s%n%(trailers:key=Agy-Session)", STATE_REF)
    assert subject == f"save ({event}): open_issues\nAgy-Session: s-9\n\n"
    assert repo.view.read_bytes() == blob(repo, STATE_REF)
    assert "clean" in cli("status").output.splitlines()[0]
    assert_fsck_clean(repo)


# ---- kill -9 mid-save ------------------------------------------------------------------------

# Edits the view and saves it as the stop guard does, as fast as it can, forever.
HOOK_WRITER = """
import os, re
from gitstate.storage import loose
from gitstate.storage.layout import discover
from gitstate.usecases.state import writer
from gitstate.usecases.workspace import Workspace

layout = discover(".")
i = 0
while True:
    i += 1
    with open("STATE.md", encoding="utf-8") as handle:
        text = handle.read()
    tmp = f".writer-{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(re.sub(r"(?m)^- edit \\d+$", f"- edit {i}", text))
    os.replace(tmp, "STATE.md")
    ws = Workspace.for_hook(layout)
    assert isinstance(ws.store, loose.LooseStore)
    writer.save(ws, origin="stop-guard")
"""


def test_kill_9_mid_save_leaves_a_sound_chain(repo: Repo, cli: Any, tmp_path: Path) -> None:
    cli("patch", "--set", "goal=survive kills", "--add", "open_issues=edit 0")
    script = tmp_path / "hook_writer.py"
    script.write_text(HOOK_WRITER)
    seed_value = random.randrange(1 << 30)
    rng = random.Random(seed_value)
    for round_ in range(5):
        where = f"round {round_} (random seed {seed_value})"
        before = repo.ref()
        with open(tmp_path / f"writer-{round_}.err", "w") as err:
            proc = subprocess.Popen(
                [sys.executable, str(script)], cwd=repo.path, stdout=subprocess.DEVNULL, stderr=err
            )
            try:
                first = partial(ref_moved, repo, before)
                wait_until(first, what=f"a first save in {where}", proc=proc, max_delay=0.002)
                time.sleep(rng.uniform(0, 0.02 + 0.02 * round_))
                os.kill(proc.pid, signal.SIGKILL)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL, (where, Path(err.name).read_text())
        assert_fsck_clean(repo)
        assert_linear(repo)
        assert len(reflog(repo)) == len(chain(repo)), where
        # The next save, right after the kill, goes through: no lock or half-object in its way.
        view = repo.view.read_text()
        repo.view.write_text(re.sub(r"(?m)^- edit \d+$", f"- edit {100000 + round_}", view))
        written = writer.save(Workspace.for_hook(layout_of(repo.path)), origin="stop-guard")
        assert written.outcome == writer.Outcome.SAVED, where
        assert repo.view.read_bytes() == blob(repo, STATE_REF), where
        assert not (repo.path / ".git" / (STATE_REF + ".lock")).exists(), where
    assert len(chain(repo)) > 1 + 2 * 5
