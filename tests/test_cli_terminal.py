"""Colour and the pager as git has them (docs/commands.md, "Colour and the pager"; issue 14).

The tool runs as a real subprocess on a pseudo-terminal (os.openpty) where a terminal is the
point, and on pipes where its absence is. The pager is a small shell script that writes what it
reads, and its environment, to files: that it ran is seen in them, not guessed.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import Repo
from support import WAIT, run_tool

ESC = "\033["
YELLOW = "\033[33m"


def run_on_terminal(repo: Repo, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the tool with stdin, stdout and stderr on a pseudo-terminal; (exit code, output).
    Reads until every holder of the terminal (the tool, a pager it started) has closed it."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitstate", *args],
        cwd=repo.path,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "TERM": "xterm", **(env or {})},
        close_fds=True,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + WAIT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                if proc.poll() is not None and not _readable(master):
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last holder of the terminal closed it
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=WAIT)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0.2)[0])


def pager_script(tmp_path: Path) -> tuple[str, Path, Path]:
    """A pager command that keeps what it is given in `paged`, its environment in `env`."""
    paged, env = tmp_path / "paged", tmp_path / "pager-env"
    script = tmp_path / "pager.sh"
    script.write_text(f"#!/bin/sh\nenv > '{env}'\ncat > '{paged}'\n")
    script.chmod(0o755)
    return str(script), paged, env


@pytest.fixture
def chain(repo: Repo) -> Repo:
    for step in ("write the test", "write the code", "ship it"):
        proc = run_tool("patch", "--todo", step, cwd=repo.path)
        assert proc.returncode == 0, proc.stderr
    return repo


def short_tip(repo: Repo) -> str:
    return repo.git("rev-parse", "--short", "refs/agy/state").strip()


def test_log_on_a_terminal_is_coloured_and_goes_through_the_pager(
    chain: Repo, tmp_path: Path
) -> None:
    pager, paged, env = pager_script(tmp_path)
    code, shown = run_on_terminal(chain, "log", env={"GIT_PAGER": pager})
    assert code == 0, shown
    text = paged.read_text()
    assert f"{YELLOW}{short_tip(chain)}\033[m" in text
    assert "patch: todo: ship it" in text
    assert "ship it" not in shown  # it went to the pager, not past it
    pager_env = env.read_text().splitlines()
    assert "LESS=FRX" in pager_env and "LV=-c" in pager_env
    assert "GIT_PAGER_IN_USE=true" in pager_env


def test_diff_and_show_are_paged_with_git_colours(chain: Repo, tmp_path: Path) -> None:
    pager, paged, _ = pager_script(tmp_path)
    chain.view.write_text(chain.view.read_text().replace("- [ ] ship it", "- [ ] ship it now"))
    assert run_on_terminal(chain, "diff", env={"GIT_PAGER": pager})[0] == 0
    text = paged.read_text()
    assert "\033[1m--- a/STATE.md" in text
    assert "\033[36m@@ " in text
    assert "\033[31m-- [ ] ship it\033[m" in text
    assert "\033[32m+- [ ] ship it now\033[m" in text
    assert run_on_terminal(chain, "show", env={"GIT_PAGER": pager})[0] == 0
    assert "\033[1m## Next steps\033[m" in paged.read_text()


def test_no_pager_json_and_git_no_pager_keep_the_output_on_the_terminal(
    chain: Repo, tmp_path: Path
) -> None:
    pager, paged, _ = pager_script(tmp_path)
    code, shown = run_on_terminal(chain, "log", "--no-pager", env={"GIT_PAGER": pager})
    assert code == 0 and "ship it" in shown and YELLOW in shown
    code, shown = run_on_terminal(chain, "log", "--json", env={"GIT_PAGER": pager})
    assert code == 0 and ESC not in shown
    assert json.loads(shown)[0]["commit"] == chain.ref()  # full ids: the JSON API is unchanged
    # `git --no-pager agy-state …` reaches us as GIT_PAGER=cat.
    code, shown = run_on_terminal(chain, "log", env={"GIT_PAGER": "cat"})
    assert code == 0 and "ship it" in shown
    assert not paged.exists()


def test_pager_settings_choose_and_switch_the_pager(chain: Repo, tmp_path: Path) -> None:
    pager, paged, _ = pager_script(tmp_path)
    chain.git("config", "core.pager", pager)
    run_on_terminal(chain, "log")
    assert "ship it" in paged.read_text()  # core.pager when GIT_PAGER is unset
    paged.unlink()
    chain.git("config", "pager.agy-state.log", "false")
    _, shown = run_on_terminal(chain, "log")
    assert "ship it" in shown and not paged.exists()
    chain.git("config", "--unset", "pager.agy-state.log")
    chain.git("config", "core.pager", "false-pager-not-used")
    chain.git("config", "pager.agy-state", pager)  # a value that is no boolean is the pager
    run_on_terminal(chain, "diff", "~1")
    assert "+- [ ] ship it" in paged.read_text()
    paged.unlink()
    run_on_terminal(chain, "status")
    assert paged.exists()  # pager.agy-state set pages every command, status too
    chain.git("config", "--unset", "pager.agy-state")
    paged.unlink()
    chain.git("config", "core.pager", pager)
    _, shown = run_on_terminal(chain, "status")
    assert "phase: IDLE" in shown and not paged.exists()  # status pages only when asked


def test_a_pipe_gets_neither_colour_nor_a_pager_unless_always(chain: Repo, tmp_path: Path) -> None:
    pager, paged, _ = pager_script(tmp_path)
    for args in (("log",), ("log", "-p"), ("status",), ("show",), ("diff", "~2")):
        proc = run_tool(*args, cwd=chain.path, env={"GIT_PAGER": pager, "TERM": "xterm"})
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout and ESC not in proc.stdout, args
    assert not paged.exists()
    assert YELLOW in run_tool("log", "--color", cwd=chain.path).stdout
    assert YELLOW in run_tool("log", "--color=always", cwd=chain.path).stdout
    chain.git("config", "color.ui", "always")
    assert YELLOW in run_tool("log", cwd=chain.path).stdout
    assert ESC not in run_tool("log", "--no-color", cwd=chain.path).stdout
    chain.git("config", "color.agy-state", "auto")  # ours before color.ui: a pipe is no terminal
    assert ESC not in run_tool("log", cwd=chain.path).stdout


def test_colour_settings_on_a_terminal(chain: Repo) -> None:
    assert YELLOW in run_on_terminal(chain, "log", "--no-pager")[1]
    assert ESC not in run_on_terminal(chain, "log", "--no-pager", env={"NO_COLOR": "1"})[1]
    assert ESC not in run_on_terminal(chain, "log", "--no-pager", env={"TERM": "dumb"})[1]
    chain.git("config", "color.ui", "auto")
    assert ESC not in run_on_terminal(chain, "log", "--no-pager", env={"NO_COLOR": "1"})[1]
    chain.git("config", "color.agy-state", "always")  # an explicit always beats NO_COLOR
    assert YELLOW in run_on_terminal(chain, "log", "--no-pager", env={"NO_COLOR": "1"})[1]
    chain.git("config", "color.agy-state", "false")
    assert ESC not in run_on_terminal(chain, "status")[1]
    assert YELLOW in run_on_terminal(chain, "status", "--color=auto")[1]


def test_long_subjects_are_cut_to_the_terminal_width_only_on_one(repo: Repo) -> None:
    subject = "a subject far longer than the forty columns this terminal has to offer"
    proc = run_tool("patch", "--todo", "long", "-m", subject, cwd=repo.path)
    assert proc.returncode == 0, proc.stderr
    _, shown = run_on_terminal(repo, "log", "--oneline", "--no-pager", env={"COLUMNS": "40"})
    line = shown.splitlines()[0]
    plain = line.replace(YELLOW, "").replace("\033[m", "")
    assert plain.endswith("…") and len(plain) == 40, repr(line)
    assert plain[:-1] in f"{short_tip(repo)} {subject}"
    piped = run_tool("log", "--oneline", cwd=repo.path, env={"COLUMNS": "40"}).stdout
    assert piped.splitlines()[0] == f"{short_tip(repo)} {subject}"
