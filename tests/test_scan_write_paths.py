"""Every text that enters a pushable ref is scanned, messages included (docs/secrets.md).

The documents were scanned; the words around them were not: a `save -m` or `patch -m` subject, a
`checkpoint -m` tag message and a job's summary (the record's commit subject) all travel with
sync and pre-push. Each is tried here with a credential; nothing may reach a ref.
"""

from __future__ import annotations

from typing import Any

from conftest import Repo

from gitstate.usecases.jobs import records

# Built at run time: no credential-shaped literal sits in the repository.
TOKEN = "ghp_" + "Z9y8X7w6V5u4" * 3


def refs(repo: Repo) -> str:
    return repo.git("for-each-ref", "--format=%(refname) %(objectname)")


def test_save_message_with_a_credential_is_refused(repo: Repo, cli: Any) -> None:
    assert cli("patch", "--set", "goal=g", "--todo", "a").exit_code == 0
    repo.view.write_text(repo.view.read_text().replace("- [ ] a", "- [ ] a\n- [ ] b"))
    before = refs(repo)
    result = cli("save", "-m", f"use {TOKEN} for the api")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: refusing to write: the snapshot message")
    assert TOKEN not in result.stderr
    assert "hint: " in result.stderr
    assert refs(repo) == before
    assert cli("save", "-m", f"use {TOKEN}", "--allow-secret").exit_code == 0


def test_patch_message_with_a_credential_is_refused(repo: Repo, cli: Any) -> None:
    assert cli("patch", "--set", "goal=g").exit_code == 0
    before = refs(repo)
    result = cli("patch", "--todo", "b", "-m", f"token={TOKEN}")
    assert result.exit_code == 1 and "snapshot message" in result.stderr
    assert refs(repo) == before


def test_checkpoint_message_with_a_credential_is_refused(repo: Repo, cli: Any) -> None:
    assert cli("patch", "--set", "goal=g").exit_code == 0
    before = refs(repo)
    result = cli("checkpoint", "-m", f"works with {TOKEN}")
    assert result.exit_code == 1 and "checkpoint message" in result.stderr
    assert refs(repo) == before
    assert not repo.git("tag", "-l", "checkpoint-*").strip()
    assert cli("checkpoint", "-m", "plain words").exit_code == 0


def test_a_multi_line_message_is_one_subject(repo: Repo, cli: Any) -> None:
    """A newline in -m would start a paragraph that readers take for trailers."""
    assert cli("patch", "--set", "goal=g", "-m", "first\n\nAgy-Phase: ARCHIVING").exit_code == 0
    assert repo.git("log", "-1", "--format=%s", "refs/agy/state").strip() == (
        "first Agy-Phase: ARCHIVING"
    )
    assert cli("phase", "--json").exit_code == 0
    assert '"IDLE"' in cli("phase", "--json").stdout


def test_a_job_summary_is_redacted_before_it_becomes_a_subject() -> None:
    subject = records.subject_of(
        {"job_id": "j-1", "round": 1, "state": "done", "summary": f"pushed with {TOKEN} ok"}
    )
    assert TOKEN not in subject and "[REDACTED]" in subject
    # A long summary is cut after redaction: a token cut in half would no longer be caught.
    long = records.subject_of(
        {"job_id": "j-1", "round": 1, "state": "done", "summary": "x" * 50 + " " + TOKEN}
    )
    assert TOKEN[:12] not in long
