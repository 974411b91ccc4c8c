"""Every text that enters a pushable ref is scanned, messages included (docs/secrets.md).

The documents were scanned; the words around them were not: a `save -m` or `patch -m` subject, a
`checkpoint -m` tag message and a job's summary (the record's commit subject) all travel with
sync and pre-push. Each is tried here with a credential; nothing may reach a ref.
"""

from __future__ import annotations

from typing import Any

from conftest import Repo
from memory_support import brain_file

from gitstate.jobs.storage import records

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


def key_body() -> str:
    import base64
    import random

    rng = random.Random(7)
    return "\n".join(
        "  " + base64.b64encode(bytes(rng.randrange(256) for _ in range(48))).decode()
        for _ in range(4)
    )


BEGIN = "-----BEGIN OPENSSH PRIVATE KEY-----"
END = "-----END OPENSSH PRIVATE KEY-----"


def test_a_key_body_added_under_a_begin_line_the_tip_holds_is_refused(repo: Repo, cli: Any) -> None:
    """Scanning only the added lines would see a body with no BEGIN line: the block is seen whole."""
    assert cli("patch", "--set", "goal=g", "--todo", "a").exit_code == 0
    text = repo.view.read_text()
    text = text.replace(
        "## Key data (verbatim)\n", f"## Key data (verbatim)\n- deploy key:\n  {BEGIN}\n  {END}\n"
    )
    repo.view.write_text(text)
    assert cli("save", "--allow-secret").exit_code == 0  # the header alone, allowed by the user
    before = refs(repo)
    repo.view.write_text(text.replace(f"  {END}", key_body() + f"\n  {END}"))
    result = cli("save")
    assert result.exit_code == 1 and "private key" in result.stderr
    assert refs(repo) == before


def test_memory_edit_adding_a_key_body_under_a_begin_line_is_refused(repo: Repo, cli: Any) -> None:
    assert cli("memory", "init").exit_code == 0
    header = f"# Memory\n\n## Keys\n- deploy key\n  {BEGIN}\n  {END}\n"
    assert cli("memory", "edit", "MEMORY.md", "--allow-secret", input=header).exit_code == 0
    with_body = header.replace(f"  {END}", key_body() + f"\n  {END}")
    result = cli("memory", "edit", "MEMORY.md", input=with_body)
    assert result.exit_code == 1 and "private key" in result.stderr, result.stderr
    assert BEGIN in brain_file("MEMORY.md")
    assert key_body().split("\n")[0].strip() not in brain_file("MEMORY.md")
