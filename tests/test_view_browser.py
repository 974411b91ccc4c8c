"""`git agy-state view` in a real browser: Debian's chromium, headless (docs/report.md).

The session fixture `chromium` finds it on PATH, else installs it once with apt-get when the
tests run as root on a machine that has apt (the result, found or not, holds for the session),
else every test here is skipped. Console messages reach chromium's stderr as `…:CONSOLE…`
lines with `--enable-logging=stderr --v=0`; a control page with one raw inline handler and one
remote image proves that the check sees them (and that the page's policy refuses both).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo

RUN_TIMEOUT = 180  # seconds for one headless run (the machine may be busy)
INSTALL_TIMEOUT = 1800
N = 6
BANDS = 8


@pytest.fixture(scope="session")
def chromium() -> str:
    found = _which()
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("chromium is not installed, and installing it needs root and apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
    for attempt in (install, ["apt-get", "update", "-q"], install):
        done = subprocess.run(
            attempt, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
        )
        if attempt is install and done.returncode == 0:
            break
    found = _which()
    if not found:
        pytest.skip("chromium could not be installed with apt-get")
    return found


def _which() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_chromium(
    browser: str, tmp: Path, page: Path, *flags: str
) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run(
        [
            browser,
            "--headless=new",
            "--no-sandbox",  # root, in a container
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *flags,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture
def page(repo: Repo, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An N-snapshot task with a decision, a known error, a checkpoint and a hostile goal."""

    def ok(*args: str) -> None:
        result = cli(*args)
        assert result.exit_code == 0, (args, result.stderr)

    for minute in range(N):
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"2026-03-04T10:{minute:02d}:00+00:00")
        if minute == 0:
            ok("patch", "--set", "goal=Render </script><img src=x onerror=alert(1)> as text")
            continue
        if minute == N - 1:
            ok("patch", "--start", "1")
            continue
        ok("patch", "--todo", f"step {minute}", "--add", f"key_data=fact {minute}")
        if minute == 2:
            ok("decide", "--type", "Architecture", "one page, no network")
            ok("error", "--type", "E", "--cause", "c", "--fix", "f", "--scope", "s")
            ok("checkpoint", "-m", "halfway")
    out = tmp_path / "task.html"
    ok("view", "--out", str(out))
    return out


def snapshot_count(repo: Repo) -> int:
    return len(repo.git("rev-list", "--first-parent", "refs/agy/state").split())


def test_renders_without_console_errors_and_shows_every_snapshot(
    chromium: str, page: Path, repo: Repo, tmp_path: Path
) -> None:
    run = run_chromium(chromium, tmp_path, page, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    assert console_lines(run.stderr) == []
    dom = run.stdout
    expected = snapshot_count(repo)
    assert expected == N
    assert len(re.findall(r'<li class="snapshot[ "]', dom)) == expected
    # Written by the page's script, so the script ran under the page's own policy.
    assert f'data-ready="{expected}"' in dom
    assert f'id="shown">{expected} of {expected} shown<' in dom
    assert "<img" not in dom and "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in dom


def test_the_console_check_sees_a_raw_handler_and_a_remote_load_refused(
    chromium: str, page: Path, tmp_path: Path
) -> None:
    raw = page.read_text().replace(
        "</main>",
        '<img src="x.png" onerror="console.log(1)"><img src="http://192.0.2.1/x.png"></main>',
    )
    control = tmp_path / "control.html"
    control.write_text(raw)
    run = run_chromium(chromium, tmp_path, control, "--dump-dom")
    lines = "\n".join(console_lines(run.stderr))
    assert "inline event handler violates" in lines
    assert "http://192.0.2.1/x.png" in lines and "violates" in lines


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        chunk, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if chunk == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif chunk == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind: int = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows


@pytest.mark.parametrize("size", [(1200, 1600), (390, 1400)], ids=["desktop", "phone"])
def test_a_screenshot_is_not_an_empty_layout(
    chromium: str, page: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    shot = tmp_path / "shot.png"
    run = run_chromium(
        chromium, tmp_path, page, f"--screenshot={shot}", f"--window-size={size[0]},{size[1]}"
    )
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    keep = os.environ.get("KEEP_VIEW_SCREENSHOTS")  # a folder: look at the page yourself
    if keep:
        shutil.copy(shot, Path(keep) / f"view-{size[0]}.png")
    width, height, rows = png_pixels(shot)
    assert (width, height) == size
    channels = len(rows[0]) // width
    background = rows[0][:3]
    bands = [0] * BANDS  # inked pixels in each horizontal band of the page
    for y in range(0, height, 4):
        row = rows[y]
        bands[y * BANDS // height] += sum(
            1
            for x in range(0, width, 2)
            if max(abs(row[x * channels + c] - background[c]) for c in range(3)) > 40
        )
    sampled = (height // 4) * (width // 2)
    assert sum(bands) > sampled * 0.02  # text, cards and badges, not a blank page
    assert sum(1 for n in bands if n) >= BANDS - 1  # down the whole page, not one line on top
