"""Output that reads like git's (docs/commands.md, "Output"; issue 14): ids as `core.abbrev`
has them, `log --oneline/--graph/-p`, `status -s`, a title-only diff that is empty, plurals.

Graphs are checked against git's own `git log --graph` of the same chain, with a real sync
merge between two clones (tests/test_sync.py's machines)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pygit2
from conftest import Repo
from test_sync import Net, converge, net, two_machines  # noqa: F401 (net is a fixture)

HEX = re.compile(r"^[0-9a-f]+")


def start(cli: Any) -> None:
    for step in ("write the test", "write the code"):
        result = cli("patch", "--todo", step)
        assert result.exit_code == 0, result.stderr


def first_ids(text: str) -> list[str]:
    return [m.group(0) for line in text.splitlines() if (m := HEX.match(line))]


def test_ids_follow_core_abbrev(repo: Repo, cli: Any) -> None:
    start(cli)
    tip = repo.ref()
    assert tip is not None
    assert first_ids(cli("log").stdout)[0] == tip[:7]  # git's default
    assert f"written from: {tip[:7]} (the tip)" in cli("status").stdout
    for value, length in (("12", 12), ("no", 40), ("auto", 7), ("5", 5)):
        repo.git("config", "core.abbrev", value)
        assert first_ids(cli("log", "--oneline").stdout)[0] == tip[:length], value
        assert repo.git("rev-parse", "--short", tip).strip() == tip[:length]
    repo.git("config", "core.abbrev", "12")
    patched = cli("patch", "--todo", "one more").stdout
    assert re.match(r"^patched [0-9a-f]{12}: next_steps$", patched), patched
    diff = cli("log", "-p", "-n", "1").stdout
    assert re.search(r"^--- a/STATE.md \([0-9a-f]{12}\)$", diff, re.M), diff
    assert json.loads(cli("log", "--json").stdout)[0]["commit"] == repo.ref()  # JSON: whole


def test_an_ambiguous_prefix_is_made_longer_as_git_does(repo: Repo, cli: Any) -> None:
    start(cli)
    tip = repo.ref()
    assert tip is not None
    repo.git("config", "core.abbrev", "4")
    # A blob whose id starts with the tip's four digits, written on purpose.
    n = 0
    while True:
        body = f"collide {n}\n".encode()
        oid = hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()
        if oid[:4] == tip[:4] and oid[:5] != tip[:5]:
            break
        n += 1
    assert str(pygit2.Repository(str(repo.path)).create_blob(body)) == oid
    expected = repo.git("rev-parse", "--short", tip).strip()
    assert len(expected) == 5 and tip.startswith(expected)
    assert first_ids(cli("log", "--oneline").stdout)[0] == expected
    assert f"written from: {expected} (the tip)" in cli("status").stdout


def test_oneline_and_the_phase_column_only_when_not_idle(repo: Repo, cli: Any) -> None:
    start(cli)
    lines = cli("log", "--oneline").stdout.splitlines()
    tip = repo.ref()
    assert tip is not None
    assert lines[0] == f"{tip[:7]} patch: todo: write the code"
    assert "IDLE" not in cli("log").stdout
    assert cli("phase", "PLANNING").exit_code == 0
    lines = cli("log", "--oneline").stdout.splitlines()
    assert re.match(r"^[0-9a-f]{7} \(PLANNING\) ", lines[0]), lines[0]
    assert "(" not in lines[-1]
    full = cli("log").stdout.splitlines()
    assert re.match(r"^[0-9a-f]{7} \d{4}-\d\d-\d\d \d\d:\d\d PLANNING ", full[0]), full[0]
    assert re.match(r"^[0-9a-f]{7} \d{4}-\d\d-\d\d \d\d:\d\d patch: ", full[-1]), full[-1]


def test_graph_of_a_real_sync_merge_is_gits(net: Net) -> None:  # noqa: F811
    a, b = two_machines(net)
    a.ok("patch", "--add", "key_data=- port: 5432 (from A)")
    a.ok("patch", "--add", "key_data=- host: db (from A)")
    b.ok("patch", "--add", "failed_attempts=fixed 1 s retry (from B)")
    converge(a, b)
    assert len(a.parents()) == 2
    ours = a.ok("log", "--graph", "--oneline").splitlines()
    gits = a.git("log", "--graph", "--format=%h %s", "refs/agy/state").splitlines()
    assert [line.rstrip() for line in ours] == [line.rstrip() for line in gits]
    assert any(line.startswith("|\\") for line in ours)
    assert any(line.startswith("|/") for line in ours)
    ours = a.ok("log", "--graph", "--oneline", "-n", "2").splitlines()
    gits = a.git("log", "--graph", "-n", "2", "--format=%h %s", "refs/agy/state").splitlines()
    assert [line.rstrip() for line in ours] == [line.rstrip() for line in gits]
    assert len(json.loads(a.ok("log", "--graph", "--json"))) == len(
        a.git("rev-list", "refs/agy/state").split()
    )
    patched = a.ok("log", "--graph", "-p", "-n", "2").splitlines()
    assert patched[0].startswith("*   ") and any(x.startswith("| | +") for x in patched)


def test_status_short_is_one_line_as_gits(repo: Repo, cli: Any) -> None:
    start(cli)
    assert cli("status", "-s").stdout == ""
    repo.view.write_text(repo.view.read_text() + "- [ ] an edit\n")
    assert cli("status", "--short").stdout == " M STATE.md\n"
    repo.view.write_text("# not a state file\n\ntext\n")
    line = cli("status", "-s").stdout
    assert re.match(r"^ M STATE\.md \(invalid: (1 problem|[02-9]\d* problems)\)\n$", line), line
    repo.view.unlink()
    assert cli("status", "-s").stdout == " D STATE.md\n"
    assert cli("status", "-s", "--json").stdout == cli("status", "--json").stdout


def test_a_diff_of_only_the_title_time_is_empty(repo: Repo, cli: Any) -> None:
    start(cli)
    text = repo.view.read_text()
    title, rest = text.split("\n", 1)
    stamp = re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", title)
    assert stamp is not None
    repo.view.write_text(title.replace(stamp.group(0), "1999-01-01 00:00") + "\n" + rest)
    assert cli("diff").stdout == ""
    found = json.loads(cli("diff", "--json").stdout)
    assert found["sections"] == [] and found["diff"] == ""
    repo.view.write_text(
        title.replace(stamp.group(0), "1999-01-01 00:00")
        + "\n"
        + rest.replace("- [ ] write the code", "- [ ] write the code well")
    )
    shown = cli("diff").stdout
    assert "+- [ ] write the code well" in shown
    assert "1999-01-01" not in shown  # the title's line is no change


def test_counts_are_said_with_their_plurals(repo: Repo, cli: Any) -> None:
    start(cli)
    repo.view.write_text("# not a state file\n\ntext\n")
    status = cli("status").stdout
    count = json.loads(cli("status", "--json").stdout)["errors"]
    noun = "problem" if count == 1 else "problems"
    assert f"valid: no ({count} {noun}: git agy-state check)" in status
    assert "(s)" not in status
    checked = cli("check").stdout
    assert f"({count} {noun})" in checked


def test_graph_of_any_dag_shows_each_snapshot_once_after_its_children(repo: Repo, cli: Any) -> None:
    start(cli)
    base = repo.ref()
    assert base is not None
    tree = repo.git("rev-parse", f"{base}^{{tree}}").strip()

    def snapshot(subject: str, *parents: str) -> str:
        args = [arg for p in parents for arg in ("-p", p)]
        message = f"{subject}\n\nAgy-Format: 1\n"
        return repo.git("commit-tree", tree, *args, input=message).strip()

    a1, b1, c1 = (snapshot(name, base) for name in ("a1", "b1", "c1"))
    a2, b2 = snapshot("a2", a1, b1), snapshot("b2", b1, c1)
    tip = snapshot("t", snapshot("m", a2, b2, c1))  # an octopus and a criss-cross
    repo.git("update-ref", "refs/agy/state", tip, base)
    lines = cli("log", "--graph", "--oneline").stdout.splitlines()
    order = []
    for line in lines:
        entry = re.match(r"^([|/\\_ *]*)([0-9a-f]{7}) ", line)
        if entry:
            assert entry.group(1).count("*") == 1, line
            order.append(entry.group(2))
        else:
            assert set(line) <= set("|/\\_ "), line
    listed = repo.git("rev-list", "--parents", "refs/agy/state").splitlines()
    parents = {row.split()[0][:7]: [p[:7] for p in row.split()[1:]] for row in listed}
    assert sorted(order) == sorted(parents)  # every snapshot, once
    for commit, its in parents.items():
        assert all(order.index(commit) < order.index(p) for p in its)
