"""Shared test material: sample documents, a real-subprocess runner for the tool, and the one
way a test waits for another process (poll a condition, bounded; never a bare sleep)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# Generous on purpose: these bounds catch a hang, never slowness (a loaded machine, a coverage
# run); a test that passes waits only as long as its condition takes.
WAIT = 60.0
TOOL_TIMEOUT = 300.0


def run_tool(
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = TOOL_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """Run the tool as a real subprocess (`python -m gitstate`); a hang past `timeout` raises
    subprocess.TimeoutExpired and fails the test."""
    return subprocess.run(
        [sys.executable, "-m", "gitstate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


def wait_until(
    probe: Callable[[], T],
    *,
    timeout: float = WAIT,
    what: str | None = None,
    proc: subprocess.Popen[Any] | None = None,
    max_delay: float = 0.1,
) -> T:
    """Poll `probe` with a short backoff until it returns something truthy, and return that.

    Fails after `timeout` seconds, or as soon as `proc` (the process expected to bring the
    condition about) has exited. `max_delay` caps the pause between polls, for a test that
    must act within milliseconds of the condition."""
    deadline = time.monotonic() + timeout
    delay = min(0.005, max_delay)
    while True:
        value = probe()
        if value:
            return value
        waited_for = what or getattr(probe, "__name__", "a condition")
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the process exited ({proc.returncode}) before {waited_for}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:.0f}s waiting for {waited_for}")
        time.sleep(delay)
        delay = min(delay * 2, max_delay)


ZH_TW_SAMPLE = """\
# 任務狀態 ── 最後更新 2026-09-09 23:40

## 目標
issue #4412：重構資料庫連線池與斷線重試機制

## 已完成
- [x] 實作連線重試指數退避演算法｜驗證：npm test tests/retry.test.mjs 全部通過

## 已變更檔案
- M src/pool.ts
- A tests/retry.test.mjs

## 待解決
- 重試逾時上限需要自環境變數讀取

## 關鍵資料（原樣保留）
- 錯誤訊息：ECONNRESET: Socket hung up at TCP.onStreamRead
- 預設重試參數：MAX_RETRIES=5, BASE_DELAY=200ms

## 已試過但失敗
- 固定 1 秒間隔重試：高併發情境下造成伺服器連線雪崩

## 下一步
- [>] 實作連線健康檢查定時器｜驗證：模擬斷線並檢查 3 秒內自動重連
- [ ] 將重試參數抽離至 config.ts
- [!] 整合 Prometheus 監控指標｜原因：等 PR #4410 合併後才有 Metric API
"""

EN_SAMPLE = """\
# Task state — updated 2026-09-09 23:40

## Goal
Make the connection pool retry with backoff

## Done
- [x] exponential backoff | verified: pytest tests/test_retry.py passes

## Changed files
- M src/pool.py

## Open issues

## Key data (verbatim)
- error: ECONNRESET: Socket hung up

## Tried and failed

## Next steps
- [>] add a health-check timer
- [ ] move retry settings to config.py
"""
