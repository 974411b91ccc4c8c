"""Messages that say what is true, in the user's language (issue 12, items 6 and 8).

Messages follow the user (`agy.language`, then LC_ALL, LC_MESSAGES, LANG), never a guess from a
broken document; a document keeps its own language for its own structure (docs/format.md,
"Language"). And the wrong messages of the hostile run: a NUL byte, git's stderr cut to its last
line, Python's `None` in a bare repository, "1 problems".
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo
from support import EN_SAMPLE, ZH_TW_SAMPLE, run_tool
from test_hooks_agent import claude, hook, out

from gitstate.document.language import (
    EN,
    ZH_CN,
    ZH_TW,
    counted,
    detect,
    locale,
    user_language,
)
from gitstate.document.validate import check_bytes, check_text
from gitstate.storage.gitcli import error_line

PEER_TITLE = "標題行須為「# 任務狀態 ── 最後更新 YYYY-MM-DD HH:mm」"
EN_TITLE = 'the title line must be "# Task state — updated YYYY-MM-DD HH:mm"'


def messages(report: Any) -> list[str]:
    return [p.message for p in report.errors]


# ---- which language: pure ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"LC_ALL": "zh_TW.UTF-8", "LC_MESSAGES": "C", "LANG": "C"}, "zh_TW.UTF-8"),
        ({"LC_ALL": "", "LC_MESSAGES": "zh_CN.UTF-8", "LANG": "C"}, "zh_CN.UTF-8"),
        ({"LC_ALL": "", "LANG": "zh_HK.UTF-8"}, "zh_HK.UTF-8"),
        ({}, None),
    ],
)
def test_the_locale_is_posixs_order(environ: dict[str, str], expected: str | None) -> None:
    assert locale(environ) == expected


def test_agy_language_wins_and_a_bad_one_falls_back_to_the_locale() -> None:
    env = {"LANG": "zh_TW.UTF-8"}
    assert user_language("zh-CN", env) is ZH_CN
    assert user_language("en", env) is EN
    assert user_language("klingon", env) is ZH_TW
    assert user_language(None, {"LANG": "C.UTF-8"}) is EN


def test_a_text_of_no_language_is_read_in_the_users() -> None:
    assert detect(None, [], EN) is EN
    assert detect(None, ["whatever"], ZH_CN) is ZH_CN
    # A tie between zh-TW and zh-CN (shared headings) goes to the user's, else to zh-TW.
    assert detect(None, ["已完成", "下一步"], ZH_CN) is ZH_CN
    assert detect(None, ["已完成", "下一步"], EN) is ZH_TW
    # A clear document keeps its language whoever reads it.
    assert detect("# Task state — updated 2026-01-01 10:00", ["Goal"], ZH_TW) is EN


def test_counted() -> None:
    assert counted(0, "ref") == "0 refs"
    assert counted(1, "problem") == "1 problem"
    assert counted(2, "problem") == "2 problems"
    assert counted(2, "entry", "entries") == "2 entries"


# ---- which language: validation --------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "hello\n", "# notes\n\n## Ideas\n- one\n"])
def test_a_document_of_no_language_gets_the_users_messages(text: str) -> None:
    report = check_text(text, EN)
    assert report.language == "en"
    assert messages(report)[0] == EN_TITLE
    assert "Goal, Done, Changed files" in messages(report)[1]
    assert check_text(text, ZH_TW).errors[0].message == PEER_TITLE
    assert check_text(text, ZH_CN).errors[0].message.startswith("标题行须为「# 任务状态")


def test_a_zh_tw_sheet_checked_for_an_english_user() -> None:
    text = ZH_TW_SAMPLE.replace("｜驗證：npm test", " npm test").replace(
        "- 重試逾時上限需要自環境變數讀取", "\n".join(f"- 問題 {i}" for i in range(6))
    )
    report = check_text(text, EN)
    assert report.language == "zh-TW"  # its own language, for its structure
    assert messages(report) == [
        'a "已完成" item lacks "｜驗證：": - [x] 實作連線重試指數退避演算法 npm test '
        "tests/retry.test.mjs 全部通過",
        '"待解決" holds at most 5 lines, found 6',
    ]
    # A zh-TW user gets the peer's own wording, as without a user.
    assert check_text(text, ZH_TW) == check_text(text)
    assert messages(check_text(text, ZH_TW))[1] == "「待解決」最多 5 行，實際 6 行"


def test_an_english_sheet_checked_for_a_zh_tw_user() -> None:
    text = EN_SAMPLE.replace("# Task state — updated", "# Task state, updated")
    report = check_text(text, ZH_TW)
    assert report.language == "en"
    assert messages(report) == ["標題行須為「# Task state — updated YYYY-MM-DD HH:mm」"]


@pytest.mark.parametrize(
    ("user", "wording"),
    [
        (EN, "STATE.md holds a NUL byte: binary data, not text"),
        (ZH_TW, "STATE.md 含 NUL 位元組（二進位資料，不是文字）"),
        (ZH_CN, "STATE.md 含 NUL 字节（二进制数据，不是文本）"),
    ],
)
def test_a_nul_byte_is_named_with_its_line(user: Any, wording: str) -> None:
    report = check_bytes(b"a\nb\n\x00\n" + ZH_TW_SAMPLE.encode(), user)
    assert [(p.code, p.line, p.message) for p in report.errors] == [("not_text", 3, wording)]
    assert check_bytes(b"\xff\n", user).errors[0].message != wording  # not UTF-8: its own words


# ---- which language: the commands -------------------------------------------------------------


def env_language(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("text", ["", "not a state document\n"])
def test_check_of_a_broken_sheet_speaks_the_users_language(
    repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    repo.view.write_text(text)
    result = cli("check")  # the suite runs with LANG=LC_ALL=C.UTF-8
    assert result.exit_code == 1
    assert f"  - line 1: {EN_TITLE}" in result.stdout.splitlines()
    assert "標題" not in result.stdout
    env_language(monkeypatch, LC_MESSAGES="zh_TW.UTF-8", LANG="C.UTF-8")
    assert f"  - line 1: {PEER_TITLE}" in cli("check").stdout.splitlines()
    repo.git("config", "agy.language", "zh-CN")
    body = json.loads(cli("check", "--json").stdout)
    assert body["language"] == "zh-CN" and body["errors"][0]["message"].startswith("标题行须为")


def test_save_and_patch_refusals_speak_the_users_language(repo: Repo, cli: Any) -> None:
    repo.view.write_text("")
    for args in (("save",), ("patch", "--todo", "x")):
        result = cli(*args)
        assert result.exit_code == 1, result.stderr
        assert EN_TITLE in result.stderr and "標題" not in result.stderr


def test_a_patch_result_is_refused_in_the_users_language(repo: Repo, cli: Any) -> None:
    repo.view.write_text(ZH_TW_SAMPLE)
    assert cli("save").exit_code == 0
    result = cli("patch", *[a for i in range(5) for a in ("--add", f"open_issues=問題 {i}")])
    assert result.exit_code == 1
    assert '"待解決" holds at most 5 lines, found 6' in result.stderr


def test_the_stop_guard_speaks_the_users_language(repo: Repo) -> None:
    repo.view.write_text(ZH_TW_SAMPLE.replace("- [ ] 將重試", "- [>] 將重試"))
    body = out(hook(repo, "stop-guard", payload=claude(repo, "Stop")))
    assert body["decision"] == "block"
    assert body["reason"].startswith("STATE.md is invalid (1 problem);")
    assert '"下一步" holds at most one [>] item in progress, found 2' in body["reason"]


# ---- wrong messages ---------------------------------------------------------------------------


MISSING_REPO = """\
fatal: '..' does not appear to be a git repository
fatal: Could not read from remote repository.

Please make sure you have the correct access rights
and the repository exists.
"""


@pytest.mark.parametrize(
    ("stderr", "line"),
    [
        (MISSING_REPO, "'..' does not appear to be a git repository"),
        (
            "ssh: Could not resolve hostname nohost: Name or service not known\n"
            + MISSING_REPO.split("\n", 1)[1],
            "ssh: Could not resolve hostname nohost: Name or service not known",
        ),
        (
            "error: src refspec nosuch does not match any\n"
            "error: failed to push some refs to '/tmp/b.git'\n",
            "src refspec nosuch does not match any",
        ),
        (
            "To /tmp/b.git\n ! [rejected]        main -> main (fetch first)\n"
            "error: failed to push some refs to '/tmp/b.git'\nhint: Updates were rejected\n",
            "! [rejected]        main -> main (fetch first)",
        ),
        (
            "fatal: unable to access 'https://h/x/': Failed to connect to h port 1\n",
            "unable to access 'https://h/x/': Failed to connect to h port 1",
        ),
        (
            "error: cannot lock ref 'refs/agy/state': is at 1234\nbut expected 5678\n",
            "cannot lock ref 'refs/agy/state': is at 1234 but expected 5678",
        ),
        (
            "Please make sure you have the correct access rights\nand it exists.\n",
            "Please make sure you have the correct access rights and it exists.",
        ),
        ("", "(no output)"),
    ],
)
def test_the_meaningful_line_of_gits_error(stderr: str, line: str) -> None:
    assert error_line(stderr) == line


def test_sync_to_a_missing_repository_says_which(repo: Repo) -> None:
    repo.git("config", "user.email", "me@example.com")
    proc = run_tool("sync", "..", cwd=repo.path)
    assert proc.returncode != 0
    assert proc.stderr.splitlines()[0] == (
        "error: git fetch .. failed: '..' does not appear to be a git repository"
    )


def test_check_in_a_bare_repository_names_no_none(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch, hermetic: Path
) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    monkeypatch.chdir(bare)
    result = cli("check")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "no STATE.md and no snapshot yet: nothing to check "
        "(a bare repository: no work tree, so no STATE.md)\n"
    )
    assert "None" not in result.stdout


def test_one_problem_is_one_problem(repo: Repo, cli: Any) -> None:
    repo.view.write_text(EN_SAMPLE.replace("- [ ] move", "- [>] move"))
    assert "STATE.md is invalid (1 problem): " in cli("check").stdout
    doctor = cli("doctor")
    assert "invalid (1 problem)" in doctor.stdout
    assert "problems)" not in doctor.stdout


def test_no_counted_plural_is_left_as_s_in_brackets() -> None:
    """Every count in human output goes through `counted` (or its own grammar): no `(s)`."""
    root = Path(__file__).resolve().parent.parent / "gitstate"
    found = []
    for path in root.rglob("*.py"):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if "(s)" in text.replace("CLI(s)", "").replace("http(s)", ""):
                found.append(f"{path.relative_to(root)}:{number}: {text.strip()}")
    assert found == []


def test_sync_counts_the_refs_it_pushed(repo: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("config", "user.email", "me@example.com")
    repo.view.write_text(EN_SAMPLE)
    env = {"GIT_AUTHOR_EMAIL": "me@example.com", "GIT_COMMITTER_EMAIL": "me@example.com"}
    assert run_tool("save", cwd=repo.path, env=env).returncode == 0
    first = run_tool("sync", cwd=repo.path, env=env)
    assert first.returncode == 0, first.stderr
    assert "pushed 1 ref to origin as me-example.com" in first.stdout
    again = run_tool("sync", cwd=repo.path, env=env)
    assert "pushed 0 refs to origin" in again.stdout, again.stdout
    assert os.path.isdir(remote)
