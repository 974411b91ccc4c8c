"""The user's config.toml as install edits Codex's hook trust in it (docs/agents.md, "Codex"):
a symlinked file is written through to its target (the link stays), only a regular file is
read, and a write that lands between our read and our replace is never overwritten."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo

from gitstate.agents import codex_trust, settings_file, toml_table

BEFORE = '# my dotfiles\nmodel = "o3"\n'


def config(home: Path) -> Path:
    return home / ".codex" / "config.toml"


def test_a_symlinked_config_toml_is_edited_at_its_target_and_stays_a_link(
    repo: Repo, cli: Any, hermetic: Path, tmp_path: Path
) -> None:
    real = tmp_path / "dotfiles" / "codex.toml"
    real.parent.mkdir()
    real.write_text(BEFORE)
    link = config(hermetic)
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    assert cli("install", "--agent", "codex", "--scope", "user").exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text().startswith(BEFORE) and real.read_text().count("trusted_hash") == 3
    assert cli("uninstall", "--agent", "codex", "--scope", "user").exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == BEFORE.encode()


def test_a_config_toml_linked_to_a_fifo_is_refused_without_hanging(
    repo: Repo, cli: Any, hermetic: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = config(hermetic)
    link.parent.mkdir(parents=True)
    link.symlink_to(fifo)
    result = cli("install", "--agent", "codex", "--scope", "user")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and str(link) in result.stderr
    assert "Traceback" not in result.stderr
    assert link.is_symlink() and os.readlink(link) == str(fifo)


def test_a_config_toml_in_a_link_loop_is_refused(repo: Repo, cli: Any, hermetic: Path) -> None:
    link = config(hermetic)
    link.parent.mkdir(parents=True)
    other = link.parent / "other.toml"
    link.symlink_to(other)
    other.symlink_to(link)
    result = cli("install", "--agent", "codex", "--scope", "user")
    assert result.exit_code == 1 and result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    assert os.readlink(link) == str(other) and os.readlink(other) == str(link)


def test_a_write_between_read_and_replace_is_kept_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(BEFORE)
    before = path.read_bytes()
    codex_written = BEFORE + '[hooks.state."x"]\ntrusted_hash = "sha256:00"\n'
    path.write_text(codex_written)  # Codex's /hooks trust lands after our read
    assert codex_trust._replace(path, path, before, BEFORE + "# ours\n") is False
    assert path.read_text() == codex_written
    assert codex_trust._replace(path, path, path.read_bytes(), "# ours\n") is True
    assert path.read_text() == "# ours\n"


def test_grant_on_a_file_that_does_not_move_writes_once(tmp_path: Path) -> None:
    ledger = settings_file.Ledger(tmp_path / "ledger.json")
    path = tmp_path / "codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(BEFORE)
    entry = codex_trust.Entry(f"{tmp_path}/hooks.json:stop:0:0", "sha256:" + "ab" * 32)
    lines = codex_trust.grant(ledger, path, [entry], "Codex")
    assert lines and "trusted our 1 hooks" in lines[0]
    assert path.read_text().startswith(BEFORE) and entry.hash in path.read_text()
    assert codex_trust.revoke(ledger, path, [entry], "Codex")
    assert path.read_bytes() == BEFORE.encode()


@pytest.mark.parametrize("size", [settings_file.MAX_BYTES + 1])
def test_an_oversized_config_toml_is_refused(tmp_path: Path, size: int) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"#" * size)
    with pytest.raises(toml_table.Unparsable, match="over 8 MiB"):
        codex_trust.read(path)
