"""The three languages of STATE.md: headings, title line, suffix tokens and message texts.

Pure data. zh-TW is antigravity-state's format character for character (full-width brackets and
separators, two U+2500 in the title); its messages are the peer validator's own wording. A
document's language shapes its own structure (headings, title, tokens); messages are in the
user's language (`user_language`), never a guess from a broken document (docs/format.md).
"""

from __future__ import annotations

from gitstate.document.language_marks import HEADINGS, TITLE_PREFIXES, detect_code

KEYS: tuple[str, ...] = (
    "goal",
    "done",
    "changed_files",
    "open_issues",
    "key_data",
    "failed_attempts",
    "next_steps",
)

# ASCII digits only: JavaScript's \d (the peer's) never matches other scripts' digits.
_STAMP_SHAPE = "9999-99-99 99:99"  # the title's time: 9 an ASCII digit, the rest as written
_DIGITS = "0123456789"


# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


class Language:
    """One language of STATE.md. A plain class, not a namedtuple (building one at import costs
    the agent hooks, which load this module on every turn); the three below are the only ones,
    so equality is identity."""

    __slots__ = (
        "code",
        "headings",
        "list_separator",
        "messages",
        "reason",
        "title_prefix",
        "verify",
    )

    def __init__(
        self,
        *,
        code: str,
        headings: tuple[str, ...],
        title_prefix: str,
        verify: str,
        reason: str,
        list_separator: str,
        messages: dict[str, str],
    ) -> None:
        self.code = code
        self.headings = headings  # in KEYS order
        self.title_prefix = title_prefix  # everything before the time stamp
        self.verify = verify  # suffix token before a verification
        self.reason = reason  # suffix token before a blocking reason
        self.list_separator = list_separator  # joins section names in messages
        self.messages = messages

    def __repr__(self) -> str:
        return f"Language({self.code!r})"

    def title_stamp(self, text: str) -> str | None:
        """The `YYYY-MM-DD HH:mm` of a title line in this language, or None: what
        `^<prefix>([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2})$` captures, read with str
        methods (document/model.py says why; tests/test_document_grammar.py compares them)."""
        if not text.startswith(self.title_prefix):
            return None
        stamp = text[len(self.title_prefix) :]
        if stamp.endswith("\n"):
            stamp = stamp[:-1]  # `$` matches before a last newline
        if len(stamp) != len(_STAMP_SHAPE):
            return None
        for char, shape in zip(stamp, _STAMP_SHAPE, strict=True):
            fits = (char in _DIGITS) if shape == "9" else (char == shape)
            if not fits:
                return None
        return stamp

    def heading(self, key: str) -> str:
        return self.headings[KEYS.index(key)]

    def title(self, stamp: str) -> str:
        return self.title_prefix + stamp

    def message(self, code: str, **fields: object) -> str:
        return self.messages[code].format(**fields)


# Message codes shared by every language; the fields each one takes are fixed.
_ZH_TW_MESSAGES = {
    "title": "標題行須為「{title}」",
    "sections": "段落須恰為七段且順序固定：{expected}；實際：{actual}",
    "none": "（無）",
    "key_items": "「{name}」最多 5 項，實際 {count} 項",
    "lines": "「{name}」最多 5 行，實際 {count} 行",
    "done_item": "「{name}」每項須以「- [x] 」開頭：{line}",
    "done_verify": "「{name}」項目缺「{token}」：{line}",
    "next_item": "「{name}」每項須以「- [ ] 」「- [>] 」或「- [!] 」開頭：{line}",
    "next_x": "「{name}」不得含 [x]，已完成項目請移到「{done}」：{line}",
    "blocked_reason": "受阻項目缺「{token}」：{line}",
    "in_progress": "「{name}」最多一個 [>] 進行中項目，實際 {count} 個",
    "escaped_marker": "[&gt;] 是經 Gemini CLI 轉義的 [>]，視為 [>]；下次儲存（git agy-state save）會寫回 [>]：{line}",
    "marker_outside": "「{name}」含進度標記 [{marker}]，標記只用於「{next}」與「{done}」：{line}",
    "too_big": "STATE.md 超過 1 MiB（{size} 位元組），拒絕處理",
    "not_text": "STATE.md 不是 UTF-8 文字",
    "nul": "STATE.md 含 NUL 位元組（二進位資料，不是文字）",
    "conflict": "「{name}」超出限制，請壓縮（同步合併的結果）",
    "bom": "STATE.md 以 BOM（位元組順序標記）開頭，請存為不含 BOM 的 UTF-8",
    "control": "此行含控制字元 {char}，請刪除（終端機跳脫、退格與雙向覆寫會讓文字顯示成別的內容）",
    "unencodable": "此行含 {char}（孤立的代理碼位），不是字元，無法存為 UTF-8",
    "result_too_big": "結果將有 {size} 位元組，超過 STATE.md 的 1 MiB 上限",
    "resolve_step": "解決「{heading}」的同步衝突",
    "resolve_reason": "兩邊改了同一行；另一邊的行標有 (sync conflict {label})",
}

_ZH_CN_MESSAGES = {
    "title": "标题行须为「{title}」",
    "sections": "段落须恰为七段且顺序固定：{expected}；实际：{actual}",
    "none": "（无）",
    "key_items": "「{name}」最多 5 项，实际 {count} 项",
    "lines": "「{name}」最多 5 行，实际 {count} 行",
    "done_item": "「{name}」每项须以「- [x] 」开头：{line}",
    "done_verify": "「{name}」项目缺「{token}」：{line}",
    "next_item": "「{name}」每项须以「- [ ] 」「- [>] 」或「- [!] 」开头：{line}",
    "next_x": "「{name}」不得含 [x]，已完成项目请移到「{done}」：{line}",
    "blocked_reason": "受阻项目缺「{token}」：{line}",
    "in_progress": "「{name}」最多一个 [>] 进行中项目，实际 {count} 个",
    "escaped_marker": "[&gt;] 是经 Gemini CLI 转义的 [>]，视为 [>]；下次保存（git agy-state save）会写回 [>]：{line}",
    "marker_outside": "「{name}」含进度标记 [{marker}]，标记只用于「{next}」与「{done}」：{line}",
    "too_big": "STATE.md 超过 1 MiB（{size} 字节），拒绝处理",
    "not_text": "STATE.md 不是 UTF-8 文本",
    "nul": "STATE.md 含 NUL 字节（二进制数据，不是文本）",
    "conflict": "「{name}」超出限制，请压缩（同步合并的结果）",
    "bom": "STATE.md 以 BOM（字节顺序标记）开头，请存为不含 BOM 的 UTF-8",
    "control": "此行含控制字符 {char}，请删除（终端转义、退格与双向覆盖会让文字显示成别的内容）",
    "unencodable": "此行含 {char}（孤立的代理码位），不是字符，无法存为 UTF-8",
    "result_too_big": "结果将有 {size} 字节，超过 STATE.md 的 1 MiB 上限",
    "resolve_step": "解决「{heading}」的同步冲突",
    "resolve_reason": "两边改了同一行；另一边的行标有 (sync conflict {label})",
}

_EN_MESSAGES = {
    "title": 'the title line must be "{title}"',
    "sections": "there must be exactly seven sections in this order: {expected}; found: {actual}",
    "none": "(none)",
    "key_items": '"{name}" holds at most 5 items, found {count}',
    "lines": '"{name}" holds at most 5 lines, found {count}',
    "done_item": 'every line of "{name}" must start with "- [x] ": {line}',
    "done_verify": 'a "{name}" item lacks "{token}": {line}',
    "next_item": 'every line of "{name}" must start with "- [ ] ", "- [>] " or "- [!] ": {line}',
    "next_x": '"{name}" must not hold [x]; move finished items to "{done}": {line}',
    "blocked_reason": 'a blocked item lacks "{token}": {line}',
    "in_progress": '"{name}" holds at most one [>] item in progress, found {count}',
    "escaped_marker": (
        "[&gt;] is [>] as Gemini CLI escapes it; read as [>], and the next save "
        "(git agy-state save) writes [>]: {line}"
    ),
    "marker_outside": (
        '"{name}" holds the progress marker [{marker}]; markers belong in "{next}" and "{done}": '
        "{line}"
    ),
    "too_big": "STATE.md is over 1 MiB ({size} bytes); refusing to read it",
    "not_text": "STATE.md is not UTF-8 text",
    "nul": "STATE.md holds a NUL byte: binary data, not text",
    "conflict": '"{name}" breaks its size limit after a sync merge; compress it',
    "bom": "STATE.md starts with a byte-order mark (BOM); save it as UTF-8 without BOM",
    "control": (
        "the line holds the control character {char}; remove it (terminal escapes, "
        "backspaces and bidi overrides make text show as something else)"
    ),
    "unencodable": "the line holds {char}, a lone surrogate: no character, not UTF-8 text",
    "result_too_big": "the result would be {size} bytes, over the 1 MiB limit of STATE.md",
    "resolve_step": "resolve the sync conflict in {heading}",
    "resolve_reason": (
        "both sides changed the same lines; the other side's are marked (sync conflict {label})"
    ),
}

ZH_TW = Language(
    code="zh-TW",
    headings=HEADINGS["zh-TW"],
    title_prefix=TITLE_PREFIXES["zh-TW"],
    verify="｜驗證：",
    reason="｜原因：",
    list_separator="、",
    messages=_ZH_TW_MESSAGES,
)

ZH_CN = Language(
    code="zh-CN",
    headings=HEADINGS["zh-CN"],
    title_prefix=TITLE_PREFIXES["zh-CN"],
    verify="｜验证：",
    reason="｜原因：",
    list_separator="、",
    messages=_ZH_CN_MESSAGES,
)

EN = Language(
    code="en",
    headings=HEADINGS["en"],
    title_prefix=TITLE_PREFIXES["en"],
    verify=" | verified: ",
    reason=" | reason: ",
    list_separator=", ",
    messages=_EN_MESSAGES,
)

LANGUAGES: dict[str, Language] = {lang.code: lang for lang in (ZH_TW, ZH_CN, EN)}


def by_code(code: str) -> Language:
    """The language for a code such as `zh-TW`; case-insensitive, `_` accepted for `-`."""
    wanted = code.replace("_", "-").lower()
    for lang in LANGUAGES.values():
        if lang.code.lower() == wanted:
            return lang
    raise KeyError(code)


# POSIX's order for the language of messages: the first of these that is set and not empty.
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def locale(environ: Mapping[str, str]) -> str | None:
    """The locale messages follow (LC_ALL, else LC_MESSAGES, else LANG)."""
    for name in LOCALE_VARIABLES:
        value = environ.get(name)
        if value:
            return value
    return None


def from_locale(lang_env: str | None) -> Language:
    """The language of a locale such as `zh_TW.UTF-8` (docs/format.md): zh-TW for zh_TW and
    zh_HK, zh-CN for zh_CN and zh_SG, en for anything else (C, POSIX, en_US, de_DE…)."""
    value = (lang_env or "").lower()
    if value.startswith(("zh_tw", "zh_hk", "zh-tw", "zh-hk")):
        return ZH_TW
    if value.startswith(("zh_cn", "zh_sg", "zh-cn", "zh-sg")):
        return ZH_CN
    return EN


def user_language(configured: str | None, environ: Mapping[str, str]) -> Language:
    """The user's language: `agy.language` when it names one, else the locale. New documents
    are written in it and every message is (docs/format.md, "Language"). Callers that can
    report a bad `agy.language` check it first (usecases/workspace.py); the agent hooks, which
    must not fail, take the locale instead."""
    if configured:
        try:
            return by_code(configured.strip())
        except KeyError:
            pass
    return from_locale(locale(environ))


def detect(title: str | None, headings: list[str], prefer: Language | None = None) -> Language:
    """A document's language, from its title and `## ` headings.

    Each language scores one point per heading it owns and two for the title prefix. A tie goes
    to `prefer` (the user's language) when it is among the best, else to zh-TW, the peer's
    format (zh-TW and zh-CN share several headings). A text with no heading or title of any
    language ties everywhere, so it is read in the user's language: a broken document never
    decides the language of the messages about it.
    """
    return LANGUAGES[detect_code(title, headings, prefer.code if prefer is not None else None)]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 problem`, `2 problems`, `0 refs`: a count in English human output."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
