"""A project install as `git status` sees it (docs/hooks.md, "Personal and shared files"): our
hook entries name this machine's interpreter, so they go where each CLI keeps personal settings
or into a file excluded from git, and nothing new is left for `git status` to offer without a
note naming it. Install then uninstall gives every byte back, info/exclude included; an earlier
install's entries in the shared file are recognised and moved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo

from gitstate.agents.plugin import OURS
from gitstate.usecases.setup import install as agent_install
from gitstate.usecases.setup.doctor import doctor
from gitstate.usecases.workspace import Workspace

CMD = "/opt/venv/bin/python -I -m gitstate"  # what install writes: this machine's interpreter
OLD = "/old/venv/bin/python -I -m gitstate"  # an earlier install's, on a machine long gone


def status(repo: Repo) -> list[str]:
    return repo.git("status", "--porcelain", "--untracked-files=all").splitlines()


def exclude_file(repo: Repo) -> Path:
    return repo.path / ".git" / "info" / "exclude"


def snapshot(repo: Repo) -> dict[str, bytes]:
    """Every file of the work tree (not .git) and info/exclude, as bytes."""
    files = {
        str(p.relative_to(repo.path)): p.read_bytes()
        for p in repo.path.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(repo.path).parts
    }
    files["info/exclude"] = exclude_file(repo).read_bytes() if exclude_file(repo).exists() else b""
    return files


def ours(data: dict[str, Any]) -> list[str]:
    return [
        h["command"]
        for groups in data.get("hooks", {}).values()
        for g in groups
        for h in g["hooks"]
        if OURS.search(h["command"])
    ]


def install(repo: Repo, agent: str, home: Path, scope: str = "project") -> list[str]:
    return agent_install.install(agent, scope, repo.path, home, CMD)


def uninstall(repo: Repo, agent: str, home: Path, scope: str = "project") -> list[str]:
    return agent_install.uninstall(agent, scope, repo.path, home)


# ---- Claude Code: .claude/settings.local.json -------------------------------------------------


def test_claude_project_hooks_go_to_the_personal_file_excluded_from_git(
    repo: Repo, hermetic: Path
) -> None:
    before = snapshot(repo)
    lines = install(repo, "claude", hermetic)
    local = repo.path / ".claude" / "settings.local.json"
    assert ours(json.loads(local.read_text())) and all(
        CMD in c for c in ours(json.loads(local.read_text()))
    )
    assert not (repo.path / ".claude" / "settings.json").exists()
    assert "/.claude/settings.local.json" in exclude_file(repo).read_text().splitlines()
    skill = ".claude/skills/agy-state/SKILL.md"
    assert status(repo) == [f"?? {skill}"]  # the skill is the team's to commit: named below
    assert any(
        line.startswith("note: ") and skill in line and "untracked" in line for line in lines
    )
    assert any("added /.claude/settings.local.json to" in line for line in lines)

    again = install(repo, "claude", hermetic)
    assert any("unchanged" in line for line in again)
    assert not any("added /.claude" in line for line in again)
    assert exclude_file(repo).read_text().count("/.claude/settings.local.json") == 1

    uninstall(repo, "claude", hermetic)
    assert snapshot(repo) == before
    assert status(repo) == []


def test_an_earlier_install_in_the_shared_file_moves_to_the_personal_one(
    repo: Repo, hermetic: Path
) -> None:
    shared = repo.path / ".claude" / "settings.json"
    shared.parent.mkdir()
    team = {"permissions": {"allow": ["Bash(npm test)"]}}
    team_text = json.dumps(team, indent=2) + "\n"
    old = {
        **team,
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "startup",
                    "hooks": [{"type": "command", "command": f"{OLD} hook inject --agent claude"}],
                }
            ],
            "Stop": [
                {"hooks": [{"type": "command", "command": f"{OLD} hook stop-guard --agent claude"}]}
            ],
        },
    }
    shared.write_text(json.dumps(old, indent=2) + "\n")
    repo.git("add", ".claude/settings.json")
    repo.git("commit", "-q", "-m", "team settings")

    lines = install(repo, "claude", hermetic)

    assert shared.read_text() == team_text  # ours gone from the team's file, theirs kept as written
    local = json.loads((repo.path / ".claude" / "settings.local.json").read_text())
    assert ours(local) and not any(OLD in c for c in ours(local))
    assert any("removed our hooks" in line and str(shared) in line for line in lines)
    assert " M .claude/settings.json" in status(repo)  # said above: the old entries left it

    uninstall(repo, "claude", hermetic)
    assert shared.read_text() == team_text
    assert not (repo.path / ".claude" / "settings.local.json").exists()
    assert "/.claude/settings.local.json" not in exclude_file(repo).read_text()


def test_uninstall_removes_old_entries_from_the_shared_file_too(repo: Repo, hermetic: Path) -> None:
    shared = repo.path / ".claude" / "settings.json"
    shared.parent.mkdir()
    shared.write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": f"{OLD} hook stop-guard --agent claude",
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    lines = uninstall(repo, "claude", hermetic)
    assert any("removed our hooks" in line for line in lines)
    assert ours(json.loads(shared.read_text())) == []


def test_claude_user_scope_is_unchanged(repo: Repo, hermetic: Path) -> None:
    install(repo, "claude", hermetic, "user")
    assert ours(json.loads((hermetic / ".claude" / "settings.json").read_text()))
    assert status(repo) == []


# ---- Gemini CLI and Codex: the project file, excluded when install made it ---------------------


@pytest.mark.parametrize(
    ("agent", "rel"), [("gemini", ".gemini/settings.json"), ("codex", ".codex/hooks.json")]
)
def test_a_project_file_install_created_is_excluded(
    repo: Repo, hermetic: Path, agent: str, rel: str
) -> None:
    before = snapshot(repo)
    lines = install(repo, agent, hermetic)
    assert f"/{rel}" in exclude_file(repo).read_text().splitlines()
    skill = f".{agent}/skills/agy-state/SKILL.md"
    assert status(repo) == [f"?? {skill}"]
    assert any(skill in line and line.startswith("note: ") for line in lines)
    uninstall(repo, agent, hermetic)
    assert snapshot(repo) == before


@pytest.mark.parametrize(
    ("agent", "rel"), [("gemini", ".gemini/settings.json"), ("codex", ".codex/hooks.json")]
)
def test_a_project_file_the_team_commits_is_named_not_excluded(
    repo: Repo, hermetic: Path, agent: str, rel: str
) -> None:
    path = repo.path / rel
    path.parent.mkdir()
    path.write_text('{"hooks": {}}\n')
    repo.git("add", rel)
    repo.git("commit", "-q", "-m", "team hooks")
    lines = install(repo, agent, hermetic)
    assert f" M {rel}" in status(repo)
    (note,) = [line for line in lines if str(path) in line and "interpreter" in line]
    assert note.startswith("note: ") and "--scope user" in note
    assert f"/{rel}" not in (exclude_file(repo).read_text() if exclude_file(repo).exists() else "")
    uninstall(repo, agent, hermetic)
    assert path.read_text() == '{"hooks": {}}\n'


def test_outside_a_repository_nothing_is_excluded(tmp_path: Path, hermetic: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    lines = agent_install.install("claude", "project", project, hermetic, CMD)
    assert not any("info/exclude" in line for line in lines)
    agent_install.uninstall("claude", "project", project, hermetic)
    assert list(project.iterdir()) == []


# ---- Gemini CLI's folder trust ----------------------------------------------------------------


TRUST_NOTE = (
    "trust the folder, or set GEMINI_CLI_TRUST_WORKSPACE=true; --skip-trust does not load "
    "project hooks"
)


def trust(hermetic: Path, rules: dict[str, str]) -> None:
    path = hermetic / ".gemini" / "trustedFolders.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(rules))


def gemini_trust_check(repo: Repo) -> Any:
    found = [c for c in doctor(Workspace.open()) if c.name == "Gemini CLI folder trust"]
    return found[0] if found else None


@pytest.mark.parametrize("scope", ["project", "user"])
def test_install_prints_the_trust_note_for_both_scopes(
    repo: Repo, hermetic: Path, scope: str
) -> None:
    lines = install(repo, "gemini", hermetic, scope)
    assert any(TRUST_NOTE in line for line in lines)


def test_doctor_says_nothing_of_gemini_without_our_hooks(repo: Repo) -> None:
    assert gemini_trust_check(repo) is None


@pytest.mark.parametrize(
    ("rules", "trusted"),
    [
        ({}, False),
        ({"{repo}": "TRUST_FOLDER"}, True),
        ({"{repo}/sub": "TRUST_PARENT"}, True),  # the rule's parent is the repository
        ({"{parent}": "TRUST_FOLDER", "{repo}": "DO_NOT_TRUST"}, False),  # the longest rule wins
        ({"{parent}": "DO_NOT_TRUST", "{repo}": "TRUST_FOLDER"}, True),
        ({"{repo}-other": "TRUST_FOLDER"}, False),  # a sibling whose name starts alike
    ],
)
def test_doctor_checks_the_folder_trust_where_our_hooks_are(
    repo: Repo, hermetic: Path, rules: dict[str, str], trusted: bool
) -> None:
    install(repo, "gemini", hermetic, "user")
    trust(
        hermetic,
        {k.format(repo=repo.path, parent=repo.path.parent): v for k, v in rules.items()},
    )
    check = gemini_trust_check(repo)
    assert check is not None
    assert check.status == ("ok" if trusted else "warn")
    if not trusted:
        assert check.hint == TRUST_NOTE
    project_lines = install(repo, "gemini", hermetic, "project")
    assert any(TRUST_NOTE in line for line in project_lines) != trusted


def test_the_environment_and_the_switch_trust_every_folder(
    repo: Repo, hermetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(repo, "gemini", hermetic, "project")
    assert gemini_trust_check(repo).status == "warn"
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert gemini_trust_check(repo).status == "ok"
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE")
    settings = hermetic / ".gemini" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text('{"security": {"folderTrust": {"enabled": false}}}')
    assert gemini_trust_check(repo).status == "ok"


def test_agys_workspace_hooks_file_is_personal_too(
    repo: Repo, hermetic: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "no-agy"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty) + ":/usr/bin:/bin")  # agy not on PATH: the fallback
    before = snapshot(repo)
    lines = install(repo, "agy", hermetic)
    assert "/.agents/hooks.json" in exclude_file(repo).read_text().splitlines()
    assert status(repo) == ["?? .agents/skills/agy-state/SKILL.md"]
    assert any(".agents/skills/agy-state/SKILL.md" in line for line in lines)
    uninstall(repo, "agy", hermetic)
    assert snapshot(repo) == before
