"""`sync https://user:TOKEN@host/…` works, and the token is written nowhere (docs/security.md).

The URL reaches git alone; merge subjects, reflogs, fetched-copy ref names, config, logs and
output get it without its user-info. git's `url.<base>.insteadOf` turns the credential URL into
the local bare remote, so the test needs no server.
"""

from __future__ import annotations

from pathlib import Path

from test_sync import Machine, Net, net, start_task

__all__ = ["net"]  # fixture

TOKEN = "glpat-" + "Q7w8E9r0T1y2U3i4O5p6"
URL = f"https://agy-user:{TOKEN}@git.example.invalid/team/project.git"


def everything_written(machine: Machine) -> str:
    """Every text git keeps for the repository: refs, messages, reflogs, config, our own files."""
    git_dir = machine.path / ".git"
    parts = [
        machine.git("for-each-ref", "--format=%(refname)"),
        machine.git("log", "--all", "--format=%B%n%an %ae%n%cn %ce"),
    ]
    for path in git_dir.rglob("*"):
        if path.is_file() and (
            "logs" in path.parts or path.name == "config" or "agy" in path.parts
        ):
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def test_a_credential_url_is_used_but_never_written(net: Net) -> None:
    a = net.clone("a")
    b = net.clone("b")
    # In the global config (the sealed home's): the repository's own config must stay clean.
    a.git("config", "--global", f"url.{net.remote}.insteadOf", URL)
    start_task(a)
    first = a.run("sync", URL)
    assert first.returncode == 0, first.stderr
    start_task(b, "--add", "key_data=B's own line")
    second = b.run("sync", URL)  # diverged: a merge commit whose subject names the source
    assert second.returncode == 0, second.stderr
    assert len(b.parents()) == 2, "the test means to write a merge commit"
    for machine, proc in ((a, first), (b, second)):
        assert TOKEN not in proc.stdout + proc.stderr
        written = everything_written(machine)
        assert TOKEN not in written
        assert "agy-user" not in machine.git("for-each-ref", "--format=%(refname)")
    assert "git.example.invalid/team/project.git" in b.git(
        "log", "-1", "--format=%s", "refs/agy/state"
    )


def test_a_failing_credential_url_is_not_echoed(net: Net, tmp_path: Path) -> None:
    a = net.clone("a")
    a.git("config", "--global", f"url.{tmp_path / 'missing.git'}.insteadOf", URL)
    start_task(a)
    proc = a.run("sync", URL)
    assert proc.returncode != 0
    assert proc.stderr.startswith("error: ") and TOKEN not in proc.stderr + proc.stdout
