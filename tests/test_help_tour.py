"""The README's two-minute tour, run as a newcomer types it: every line succeeds (issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tour() -> str:
    """The tour's shell block, as the README has it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text.split("## A two-minute tour", 1)[1]
    return after.split("```sh\n", 1)[1].split("```", 1)[0]


def test_the_tour_runs_line_by_line(tmp_path: Path) -> None:
    tour = _tour()
    assert tour.startswith("cd your-project")
    assert "git agy-state sync" in tour
    assert tour.index("git agy-state remote setup") < tour.index("git agy-state sync")
    # Your project: a repository with a commit and a remote (a bare one here), by a person
    # whose git knows their e-mail address (sync names their refs after it).
    remote = tmp_path / "remote.git"
    project = tmp_path / "your-project"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, timeout=60)
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True, timeout=60)
    (project / "README").write_text("readme\n")
    setup = [
        ["config", "user.email", "newcomer@example.com"],
        ["add", "README"],
        ["commit", "-qm", "initial"],
        ["remote", "add", "origin", str(remote)],
    ]
    for args in setup:
        subprocess.run(["git", *args], cwd=project, check=True, timeout=60)
    # `$EDITOR STATE.md`: an editor that adds an open issue, as a person would.
    editor = tmp_path / "editor"
    editor.write_text(
        "#!/bin/sh\n"
        "sed -i 's/^## Open issues$/## Open issues\\n- the retry budget is not decided/' \"$1\"\n"
    )
    editor.chmod(0o755)
    env = {
        **os.environ,
        "EDITOR": str(editor),
        # git finds `git agy-state` as git-agy-state on PATH, as after `pipx install .`.
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]),
    }
    proc = subprocess.run(
        ["bash", "-e", "-x", "-c", tour],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "- the retry budget is not decided" in proc.stdout  # the diff of the hand edit
    pushed = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname)", "refs/agy/users/"],
        cwd=remote,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert pushed.stdout.strip().endswith("/state"), pushed.stdout
    assert "Usage: git agy-state sync" in proc.stdout  # `help sync`
