"""`save` on a view whose only difference from the tip is Gemini CLI's `[&gt;]` for `[>]`: no
snapshot is made, the view is written back with `[>]`, and save says it repaired the marker
rather than "nothing to save" (docs/format.md, "Escaped markers"; docs/json.md)."""

from __future__ import annotations

import json
from typing import Any

from conftest import Repo


def _escaped_view(repo: Repo, cli: Any) -> str:
    assert (
        cli("patch", "--set", "goal=g", "--todo", "write the test", "--start", "1").exit_code == 0
    )
    tip = repo.ref()
    assert tip is not None
    view = repo.view
    view.write_text(view.read_text().replace("- [>] write", "- [&gt;] write"))
    return tip


def test_save_says_it_repaired_the_marker(repo: Repo, cli: Any) -> None:
    tip = _escaped_view(repo, cli)
    saved = cli("save")
    assert saved.exit_code == 0, saved.output
    assert saved.stdout.startswith("repaired STATE.md: [&gt;] written back as [>]")
    assert "nothing to save" in saved.stdout  # still no snapshot: the content equals the tip
    assert "- [>] write the test" in repo.view.read_text()
    assert repo.ref() == tip


def test_save_json_says_repaired_and_a_clean_view_does_not(repo: Repo, cli: Any) -> None:
    _escaped_view(repo, cli)
    first = json.loads(cli("save", "--json").stdout)
    assert (first["outcome"], first["repaired"]) == ("unchanged", True)
    again = cli("save")
    assert again.stdout.startswith("nothing to save: STATE.md equals the tip")
    assert json.loads(cli("save", "--json").stdout)["repaired"] is False
