"""Shared material for the memory tests: running `memory …`, reading the brain with plain git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from click.testing import Result

from gitstate.memory.storage.layout import brain_path


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.stdout + result.stderr
    return result


def as_json(result: Result) -> Any:
    return json.loads(ok(result).stdout)


def brain_git(*args: str, brain: Path | None = None, check: bool = True) -> str:
    """Plain git in the brain's git dir: what a user sees there."""
    proc = subprocess.run(
        ["git", "--git-dir", str(brain or brain_path()), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def brain_file(path: str, ref: str = "refs/agy/memory", brain: Path | None = None) -> str:
    return brain_git("show", f"{ref}:{path}", brain=brain)


def tip(brain: Path | None = None) -> str:
    return brain_git("rev-parse", "refs/agy/memory", brain=brain).strip()
