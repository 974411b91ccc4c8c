"""A view that differs from its snapshot only in the title (its timestamp) is clean, as in save
and diff (docs/format.md: the title never counts; issue 14): `status`, and the stop guard on the
hooks' fast path, which must neither save nor block for it."""

from __future__ import annotations

import re
from typing import Any

from conftest import Repo
from test_cli_reads_like_git import start
from test_hooks_agent import claude, hook, out


def retitle(repo: Repo) -> None:
    text = repo.view.read_text()
    title, rest = text.split("\n", 1)
    stamp = re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", title)
    assert stamp is not None
    repo.view.write_text(title.replace(stamp.group(0), "1999-01-01 00:00") + "\n" + rest)


def test_status_is_clean_when_only_the_title_changed(repo: Repo, cli: Any) -> None:
    start(cli)
    retitle(repo)
    assert cli("status", "-s").stdout == ""
    assert "unsaved edits" not in cli("status").stdout
    assert "nothing to save" in cli("save").stdout + cli("save").stderr
    repo.git("repack", "-adq")  # the written blob packed: the CLI still sees it title-blind
    repo.git("prune-packed")
    assert cli("status", "-s").stdout == ""
    repo.view.write_text(repo.view.read_text() + "- [ ] an edit\n")
    assert cli("status", "-s").stdout == " M STATE.md\n"


def test_the_stop_guard_neither_saves_nor_blocks_for_the_title(repo: Repo, cli: Any) -> None:
    start(cli)
    retitle(repo)
    tip, shown = repo.ref(), repo.view.read_bytes()
    assert out(hook(repo, "stop-guard", payload=claude(repo, "Stop"))) == {}
    assert repo.ref() == tip and repo.view.read_bytes() == shown
    repo.view.write_text(repo.view.read_text().replace("write the code", "write the code well"))
    hook(repo, "stop-guard", payload=claude(repo, "Stop"))
    assert repo.ref() != tip  # a real edit is saved by the guard, as before
