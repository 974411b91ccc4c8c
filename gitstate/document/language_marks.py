"""What marks a STATE.md's language: each language's seven headings and its title prefix.

Pure data, and the one scoring rule (document/language.py:detect reads it too). A module of its
own so that the agent hook, which needs a state's language on every inject (hooks/frame.py),
loads these few strings and not the message tables of document/language.py.
"""

from __future__ import annotations

# In document/language.py's KEYS order; the codes in detect's tie order (zh-TW first).
HEADINGS: dict[str, tuple[str, ...]] = {
    "zh-TW": (
        "目標",
        "已完成",
        "已變更檔案",
        "待解決",
        "關鍵資料（原樣保留）",
        "已試過但失敗",
        "下一步",
    ),
    "zh-CN": (
        "目标",
        "已完成",
        "已变更文件",
        "待解决",
        "关键资料（原样保留）",
        "已试过但失败",
        "下一步",
    ),
    "en": (
        "Goal",
        "Done",
        "Changed files",
        "Open issues",
        "Key data (verbatim)",
        "Tried and failed",
        "Next steps",
    ),
}
TITLE_PREFIXES: dict[str, str] = {
    "zh-TW": "# 任務狀態 ── 最後更新 ",
    "zh-CN": "# 任务状态 ── 最后更新 ",
    "en": "# Task state — updated ",
}


def detect_code(title: str | None, headings: list[str], prefer: str | None = None) -> str:
    """A document's language code, scored as document/language.py:detect describes: a point
    per heading a language owns, two for its title prefix; a tie goes to `prefer` when it is
    among the best, else to the first of the best in HEADINGS order."""
    best = -1
    tied: list[str] = []
    for code, names in HEADINGS.items():
        score = sum(1 for h in headings if h in names)
        if title is not None and title.startswith(TITLE_PREFIXES[code]):
            score += 2
        if score > best:
            best, tied = score, [code]
        elif score == best:
            tied.append(code)
    return prefer if prefer in tied else tied[0]
