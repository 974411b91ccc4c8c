"""Shared test material: sample documents and a real-subprocess runner for the tool."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_tool(
    *args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the tool as a real subprocess (`python -m gitstate`)."""
    return subprocess.run(
        [sys.executable, "-m", "gitstate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        env={**os.environ, **(env or {})},
        check=False,
    )


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
