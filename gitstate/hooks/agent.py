"""Agent hooks: an agent CLI's payload in, that agent's JSON shape out (docs/hooks.md).

Runs on every agent turn, so it starts fast: this module imports neither click nor pygit2 (the
stop guard loads pygit2 only when it must save), nor pathlib, typing or gitstate.errors; it
finds the repository with storage/hooklayout.py's str paths and reads STATE.md straight from
disk, only as a regular file (storage/view.py:read_regular). What each event loads, and what it
skips on a clean view, is in docs/hooks.md ("Start-up cost"). It fails open: any internal error is logged under
the git dir, the agent is let through, the exit is 0. A repository git itself would refuse
(its safe.directory owner check, storage/hooklayout.py:owner_refusal) gets nothing at all. What
inject says is framed as data (hooks/frame.py; docs/hooks.md, "What is injected").
"""

from __future__ import annotations

import os
import sys

import gitstate
from gitstate import agents
from gitstate.hooks import json_wire
from gitstate.storage import view
from gitstate.storage.hooklayout import brain_dir, discover, owner_refusal

# Type checkers take this as typing.TYPE_CHECKING (True); at run time typing stays unloaded.
TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` itself is imported only by type checkers: ~3 ms per hook saved
    from typing import Any, TextIO

    from gitstate.agents.base import AgentCLI
    from gitstate.storage.hooklayout import HookLayout as Layout

# gitstate.errors' codes (docs/exit-codes.md), not imported from there: its exception classes
# cost every hook a module it never needs (tests/test_hook_fastpath.py ties the two).
EXIT_OK = 0
EXIT_STOP_BLOCKED = 2
# What document/language.py:user_language reads besides agy.language (its LOCALE_VARIABLES).
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")

EVENTS = ("inject", "stop-guard", "pre-compact")
DEFAULT_BUDGET = 8192  # bytes of injected text, about 2k tokens
READ_LIMIT = view.LIMIT + 1  # the document limit, and one byte to know it is over
PITFALLS_LIMIT = 64 * 1024
# A payload is a few hundred bytes (the transcript is passed by path): anything over this is
# read no further and taken as broken, so an endless stdin cannot hold the agent (docs/hooks.md).
PAYLOAD_LIMIT = 4 * 1024 * 1024

STEP_MESSAGES = {
    "en": (
        'STATE.md has a step in progress: "{step}". Before stopping, do one of: finished → '
        'git agy-state patch --done {n} --verify "<how you checked it>"; pausing → '
        "git agy-state patch --pause {n} (back to [ ]); blocked → "
        'git agy-state patch --block {n} --reason "<why>".'
    ),
    "zh-TW": (
        "STATE.md 有進行中子目標：「{step}」。結束前擇一處理：已完成 → "
        'git agy-state patch --done {n} --verify "…"（移到「已完成」並附「｜驗證：」）；要暫停 → '
        "git agy-state patch --pause {n}（改回 [ ]）；受阻 → "
        'git agy-state patch --block {n} --reason "…"（改為 [!] 並附「｜原因：」）。'
    ),
    "zh-CN": (
        "STATE.md 有进行中子目标：「{step}」。结束前择一处理：已完成 → "
        'git agy-state patch --done {n} --verify "…"（移到「已完成」并附「｜验证：」）；要暂停 → '
        "git agy-state patch --pause {n}（改回 [ ]）；受阻 → "
        'git agy-state patch --block {n} --reason "…"（改为 [!] 并附「｜原因：」）。'
    ),
}

INVALID_MESSAGES = {
    "en": "STATE.md is invalid ({problems}); fix it before stopping (git agy-state check):",
    "zh-TW": "STATE.md 驗證失敗（{count} 項）；結束前請修正（git agy-state check）：",
    "zh-CN": "STATE.md 验证失败（{count} 项）；结束前请修正（git agy-state check）：",
}


class Hook:
    """One hook call: the event, the agent CLI (None in plain CLI mode) and its payload."""

    def __init__(self, event: str, agent: AgentCLI | None, payload: dict[str, Any]) -> None:
        self.event = event
        self.agent = agent
        self.payload = payload
        self.out = sys.stdout
        self.answered = False

    @property
    def agent_name(self) -> str | None:
        return self.agent.NAME if self.agent is not None else None

    # ---- the agents' shapes (gitstate/agents/) --------------------------------------------

    def emit(self, value: object) -> None:
        self.out.write(json_wire.dumps(value) + "\n")
        self.out.flush()
        self.answered = True

    def nothing(self) -> int:
        """Let the agent go on, saying nothing (the shape each agent expects for that)."""
        if self.agent is not None:
            self.emit(self.agent.nothing(self.event))
        self.answered = True
        return EXIT_OK

    def inject(self, text: str) -> int:
        if self.agent is not None:
            self.emit(self.agent.inject(text))
        else:
            self.out.write(text if text.endswith("\n") else text + "\n")
            self.answered = True
        return EXIT_OK

    def block(self, reason: str) -> int:
        if self.agent is None:  # plain CLI mode: the reason on stderr, exit 2
            sys.stderr.write(reason + "\n")
            self.answered = True
            return EXIT_STOP_BLOCKED
        self.emit(self.agent.block(reason))
        return EXIT_OK

    # ---- payload facts --------------------------------------------------------------------

    @property
    def session(self) -> str | None:
        return agents.session(self.payload, self.agent)

    def project_dir(self) -> str:
        """The workspace the payload names (the agent knows it), then the agents' project
        variables, then the current directory."""
        return agents.project_dir_of(self.payload, os.environ, self.agent) or os.getcwd()


def read_payload(stream: TextIO | None) -> dict[str, Any] | None:
    """The JSON payload on stdin; None when there is none; {} when it is broken (as the peer)."""
    if stream is None or stream.closed:
        return None
    try:
        if stream.isatty():
            return None
        raw = stream.read(PAYLOAD_LIMIT + 1)
    except (OSError, ValueError):
        return None
    if len(raw) > PAYLOAD_LIMIT:
        return {}
    if not raw.strip():
        return None
    try:
        data = json_wire.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's stack
        return {}
    return data if isinstance(data, dict) else {}


def parse_args(argv: list[str]) -> tuple[str, AgentCLI | None]:
    if not argv or argv[0] not in EVENTS:
        raise _usage(f"expected one of {', '.join(EVENTS)}")
    event, agent = argv[0], None
    rest = argv[1:]
    while rest:
        arg = rest.pop(0)
        if arg == "--agent" and rest:
            name = rest.pop(0)
        elif arg.startswith("--agent="):
            name = arg.split("=", 1)[1]
        else:
            raise _usage(f"unknown argument {arg!r}")
        agent = agents.find(name)
        if agent is None:
            raise _usage(f"--agent takes {', '.join(agents.NAMES)}, not {name!r}")
    return event, agent


class _Misuse(Exception):
    """A bad hook command line; run() turns it into errors.UsageError for the error map."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _usage(message: str) -> _Misuse:
    return _Misuse(message)


def run(argv: list[str], stdin: TextIO | None = None) -> int:
    """`git agy-state hook <event> [--agent A]`: never raises, never blocks on its own failure."""
    try:
        event, forced = parse_args(argv)
    except _Misuse as exc:
        from gitstate import error_map  # the one error map; only a misuse pays for it
        from gitstate.errors import UsageError

        hint = f"git agy-state hook {'|'.join(EVENTS)} [--agent {'|'.join(agents.NAMES)}]"
        code, lines = error_map.text(UsageError(exc.message, hint=hint))
        sys.stderr.write("\n".join(lines) + "\n")
        return code
    payload = read_payload(stdin if stdin is not None else sys.stdin)
    hook = Hook(event, forced or agents.detect(payload), payload or {})
    layout: Layout | None = None
    try:
        found = discover(hook.project_dir())
        if found is not None and not os.path.exists(os.path.join(found.gitdir, "HEAD")):
            found = None  # a .git file naming no git dir: no repository (git says so too)
        refusal = owner_refusal(found) if found is not None else None
        if refusal is not None:
            # Nothing from a repository git would not open, and nothing written into it.
            sys.stderr.write(f"warning: git agy-state: {event} skipped: {refusal}\n")
            return hook.nothing()
        layout = found
        if event == "inject":
            return _inject(hook, layout)  # the memory core needs no work tree
        if layout is None or layout.view_path is None:
            return hook.nothing()
        if event == "stop-guard":
            return _stop_guard(hook, layout)
        return _pre_compact(hook, layout)
    except Exception as exc:
        _log_failure(layout, event, hook.agent_name, exc)
        if not hook.answered:
            hook.nothing()
        return EXIT_OK


# ---- the events ---------------------------------------------------------------------------


def _read_view(layout: Layout) -> bytes | None:
    """STATE.md's bytes, or None when it is missing or not a regular file (never followed,
    never blocking: storage/view.py:read_regular)."""
    assert layout.view_path is not None
    try:
        return view.read_regular(layout.view_path, READ_LIMIT)
    except view.NotRegular:
        return None


def extras_for(layout: Layout) -> list[str]:
    """Context offered after the state, in order, while it fits the budget: the known pitfalls
    (active KnownIssue records), from the plain-text cache `decide`/`error` write
    (usecases/decisions/records.py:refresh_pitfalls; no pygit2 here)."""
    try:
        data = view.read_regular(os.path.join(layout.common_agy_dir, "pitfalls.md"), PITFALLS_LIMIT)
    except view.NotRegular:
        data = None
    pitfalls = data.decode("utf-8", "replace") if data else ""
    return [pitfalls] if pitfalls.strip() else []


def _you(configured: str | None) -> str | None:
    """Whom git would name as the author here (GIT_AUTHOR_EMAIL, else user.email)."""
    you = os.environ.get("GIT_AUTHOR_EMAIL") or configured
    return you.strip() if you and you.strip() else None


def state_text(layout: Layout) -> str | None:
    """The framed state to inject (hooks/frame.py), or None with no STATE.md at all.

    A regular STATE.md is injected, attributed to the snapshot it was written from (the view
    record) or said to be unsaved or of unknown origin; one that is no regular file is not read:
    the chain's tip snapshot goes in instead, saying why."""
    from gitstate.hooks import frame

    assert layout.view_path is not None
    chain = layout.state_ref
    try:
        data = view.read_regular(layout.view_path, READ_LIMIT)
        what = None
    except view.NotRegular as exc:
        data, what = None, exc.what
    if data is None and what is None:
        return None  # no STATE.md: silence, as the peer
    sources: list[str] = []
    where = "show_or_file"
    author: str | None = None
    text: str | None = None
    if data is not None:
        text = data.decode("utf-8", "replace")
        lang = frame.language_of(text)
        record = view.read_record(layout)
        if record is not None and record.ref == chain:
            author = record.author or view.commit_author(layout, record.snapshot)
            who, when, _ = frame.ident(author)
            kind = "snapshot" if record.blob == view.blob_id(data) else "edited"
            sources.append(
                frame.source_line(
                    lang, kind, chain=chain, short=record.snapshot[:12], who=who, when=when
                )
            )
            tip = view.ref_tip(layout, chain)
            if tip is not None and tip != record.snapshot:
                who, when, _ = frame.ident(view.commit_author(layout, tip))
                sources.append(
                    frame.source_line(lang, "newest", short=tip[:12], who=who, when=when)
                )
        else:
            sources.append(frame.source_line(lang, "unknown", chain=chain))
        if len(data) > view.LIMIT:
            sources.append(frame.source_line(lang, "over"))
    else:
        assert what is not None
        found = view.tip_state(layout)
        if found is None:
            lang = "en"
            sources.append(frame.source_line(lang, "none", chain=chain, what=what))
        else:
            commit, author, blob = found
            text = blob.decode("utf-8", "replace")
            lang = frame.language_of(text)
            who, when, _ = frame.ident(author)
            sources.append(
                frame.source_line(
                    lang,
                    "tip",
                    chain=chain,
                    short=commit[:12],
                    who=who,
                    when=when,
                    what=frame.what_in(lang, what),
                )
            )
            where = "show"
    from gitstate.storage import gitconfig  # here: pre-compact reads no config

    config = gitconfig.get_many(layout, ("user.email", "agy.injectBudget"))  # one pass
    if author is not None:
        _, _, email = frame.ident(author)
        you = _you(config["user.email"])
        if email and you and email.casefold() != you.casefold():
            sources.append(frame.source_line(lang, "other", you=frame.one_line(you)))
    budget = gitconfig.as_int(config["agy.injectBudget"], DEFAULT_BUDGET)
    extras = extras_for(layout) if text is not None else []
    return frame.state_frame(text, sources, extras, budget, where, lang)


def _inject(hook: Hook, layout: Layout | None) -> int:
    if hook.agent is not None and hook.agent.inject_skipped(hook.payload):
        return hook.nothing()  # agy: only the first model call of a turn gets the state
    parts = []
    if layout is not None and layout.view_path is not None:
        state = state_text(layout)
        if state:
            parts.append(state)  # within agy.injectBudget, frame and pitfalls included
    core = _memory_core(hook, layout)
    if core:
        parts.append(core)  # after the state, within its own budget (agy.memoryBudget)
    if not parts:
        return hook.nothing()  # no STATE.md and no memory: silence, as the peer
    return hook.inject("\n".join(parts))


def _memory_core(hook: Hook, layout: Layout | None) -> str | None:
    """The brain's memory core (hooks/memory.py); a failure there never costs the state."""
    try:
        if not _brain_exists():
            return None  # most users have no brain: they do not load the memory modules
        from gitstate.hooks.memory import core_for

        return core_for(hook.agent, hook.payload, layout, hook.project_dir())
    except Exception as exc:
        _log_failure(layout, "inject (memory)", hook.agent_name, exc)
        return None


def _brain_exists() -> bool:
    """memory/storage/layout.py:BrainLayout().exists(), by its own path rules, with os.path."""
    path = brain_dir()
    return os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(
        os.path.join(path, "objects")
    )


def pending_jobs(layout: Layout) -> list[str]:
    """Finished background jobs nobody has harvested yet, as `<id> (<state>)`; the stop guard
    blocks on them. The jobs slice's light scan (jobs/storage/probe.py: meta.json read
    directly, the jobs' one pending rule, no pygit2)."""
    if not os.path.isdir(os.path.join(layout.common_agy_dir, "jobs")):
        return []  # no job ever ran here (probe.root): the jobs slice stays unloaded
    from gitstate.jobs.storage import probe  # here: only the stop guard asks, not inject

    return probe.waiting(layout)


def _stop_guard(hook: Hook, layout: Layout) -> int:
    if hook.agent is not None and hook.agent.stop_looping(hook.payload):
        return hook.nothing()  # the agent already goes on because of us: never loop
    data = _read_view(layout)
    if data is not None:
        reason = _view_reason(hook, layout, data)
        if reason:
            return hook.block(reason)
    jobs = pending_jobs(layout)
    if jobs:
        return hook.block(
            "finished background jobs wait to be harvested: "
            + ", ".join(jobs)
            + " (git agy-state job result ID)"
        )
    return hook.nothing()


def _view_reason(hook: Hook, layout: Layout, data: bytes) -> str | None:
    """Why the agent may not stop yet, judging STATE.md; saves a valid view with unsaved edits.

    A clean view whose bytes this version already found valid, for the same language settings,
    is not validated again (the mark, storage/view.py:valid_mark; docs/hooks.md, "Start-up
    cost"): then, with no `[>]` anywhere in it, no document module loads at all."""
    from gitstate.storage import gitconfig

    configured = gitconfig.get(layout, "agy.language")
    clean = view.status(layout, data) == "clean"
    mark = _valid_mark(data, configured)
    if not (clean and view.read_valid_mark(layout) == mark):
        refusal = _judge(hook, layout, data, configured)
        if refusal:
            return refusal
        if clean:
            view.write_valid_mark(layout, mark)
        else:  # the mark is for the bytes the save writes back, not these
            refusal = _save_if_dirty(hook, layout, data)
            if refusal:
                return refusal
            data = _mark_saved(hook, layout, data, mark, configured)
    if b"[>]" not in data and b"[&gt;]" not in data:
        return None  # a step in progress is a `- [>] ` line (or Gemini's `[&gt;]`): none there
    return _step_reason(data, configured)


# The modules whose code is the rules a STATE.md is judged by (document/validate.py and what it
# calls). Their files' identity is part of the mark, so that an edited or reinstalled copy with
# the same version number (a development install) judges again instead of trusting old marks.
RULE_MODULES = ("validate", "model", "controls", "language", "language_marks", "phase")


def _rules_identity() -> str:
    """Size and mtime of each rule module's source, read with os.stat (no import)."""
    folder = os.path.join(os.path.dirname(gitstate.__file__), "document")
    parts = []
    for name in RULE_MODULES:
        try:
            found = os.stat(os.path.join(folder, name + ".py"))
        except OSError:
            parts.append("-")
            continue
        parts.append(f"{found.st_size}:{found.st_mtime_ns}")
    return ",".join(parts)


def _valid_mark(data: bytes, configured: str | None) -> str:
    """What a validation's verdict depends on: the bytes, the rules (this version and the rule
    modules' files) and the user's language (a tie in detecting the document's language goes
    to it)."""
    settings = [configured or "", *(os.environ.get(name) or "" for name in LOCALE_VARIABLES)]
    return " ".join([view.blob_id(data), gitstate.__version__, _rules_identity(), repr(settings)])


def _mark_saved(
    hook: Hook, layout: Layout, before: bytes, before_mark: str, configured: str | None
) -> bytes:
    """The view a save wrote back (its title's time may be new, a Gemini marker repaired),
    marked valid when it is: else the next turn's stop guard, finding it clean but unmarked,
    would load every document module to judge it again. Judging here costs little, those
    modules being loaded already. The view read back when it is valid, else `before` (another
    writer may have replaced it meanwhile: the next turn judges that)."""
    written = _read_view(layout)  # a symlink or folder put there meanwhile: None, not a raise
    if written == before:
        view.write_valid_mark(layout, before_mark)
        return before
    if written is None or _judge(hook, layout, written, configured):
        return before
    view.write_valid_mark(layout, _valid_mark(written, configured))
    return written


def _judge(hook: Hook, layout: Layout, data: bytes, configured: str | None) -> str | None:
    """The problem list when STATE.md is invalid, in the user's language; None when valid."""
    from gitstate.document.language import counted, user_language
    from gitstate.document.validate import check_bytes

    # In the user's language, whatever the sheet's (docs/format.md, "Language").
    user = user_language(configured, os.environ)
    report = check_bytes(data, user)
    if report.valid:
        return None
    from gitstate import error_map  # its problem list; only an invalid sheet needs it

    count = len(report.errors)
    lines = [
        INVALID_MESSAGES[user.code].format(count=count, problems=counted(count, "problem")),
        *error_map.problem_lines(report.errors, indent=""),
    ]
    return "\n".join(lines)


def _step_reason(data: bytes, configured: str | None) -> str | None:
    """The step in progress of a valid STATE.md, as the reason not to stop yet."""
    found = step_in_progress(data.decode("utf-8"))
    if found is None:
        return None
    number, step = found
    return STEP_MESSAGES[user_code(configured)].format(step=step, n=number)


def step_in_progress(text: str) -> tuple[int, str] | None:
    """(its number among the Next steps lines, its words) of the first `[>]` step of a
    document that parses, or None: what document/model.py's parse, Document.steps and
    parse_item give, without loading the document model on every agent stop
    (tests/test_hook_fastpath.py compares them). The seven sections of a parsed document are
    in KEYS order, so Next steps is the last one: its non-blank lines, cut as outline cuts."""
    title_seen = False
    steps: list[str] = []
    for raw in text.removeprefix("\ufeff").split("\n"):
        line = raw.rstrip()  # with "\r" of a "\r\n": outline splits at \r?\n, then strips
        if not title_seen and line.startswith("# "):
            title_seen = True
        elif line.startswith("## "):
            steps = []  # a later heading: the lines so far were another section's
        elif line.strip():
            steps.append(line)
    for number, line in enumerate(steps, start=1):
        # model.item_parts, for the `>` marker: ^\s*-\s\[(>|&gt;)\]\s+(.*)$ on the stripped line
        body = line.lstrip()
        if body[:1] == "-" and body[1:2].isspace():
            for end, marker in ((5, "[>]"), (8, "[&gt;]")):
                if body[2:end] == marker and body[end : end + 1].isspace():
                    return number, body[end:].strip()
    return None


def user_code(configured: str | None) -> str:
    """document/language.py:user_language(configured, os.environ).code, without loading the
    languages' tables: `agy.language` when it names one, else the locale's."""
    if configured:
        wanted = configured.strip().replace("_", "-").lower()
        for code in STEP_MESSAGES:
            if code.lower() == wanted:
                return code
    value = next((os.environ[n] for n in LOCALE_VARIABLES if os.environ.get(n)), "").lower()
    if value.startswith(("zh_tw", "zh_hk", "zh-tw", "zh-hk")):
        return "zh-TW"
    if value.startswith(("zh_cn", "zh_sg", "zh-cn", "zh-sg")):
        return "zh-CN"
    return "en"


def _save_if_dirty(hook: Hook, layout: Layout, data: bytes) -> str | None:
    """Save unsaved edits of a valid view (nothing lost, no turn spent); a refusal is a reason."""
    if view.status(layout, data) == "clean":
        return None
    from gitstate.errors import SecretFound, WorkAtRisk
    from gitstate.usecases.state import writer as state
    from gitstate.usecases.workspace import Workspace

    try:  # the layout run() found (and checked): no second discovery
        state.save(Workspace.for_hook(layout), session=hook.session, origin=hook.event)
    except (SecretFound, WorkAtRisk) as exc:
        # The agent can fix these; an internal error, by contrast, fails open.
        return f"STATE.md could not be saved: {exc.message}" + (
            f" ({exc.hint})" if exc.hint else ""
        )
    return None


def _pre_compact(hook: Hook, layout: Layout) -> int:
    data = _read_view(layout)
    # A clean view has nothing to save, valid or not: it is not validated (Gemini CLI calls
    # this before every model call).
    if data is not None and view.status(layout, data) != "clean":
        from gitstate.document.validate import check_bytes

        if check_bytes(data).valid:
            _save_if_dirty(hook, layout, data)
    return hook.nothing() if hook.agent else EXIT_OK


def _log_failure(layout: Layout | None, event: str, agent: str | None, exc: BaseException) -> None:
    """Append the failure, with its traceback, to <gitdir>/agy/hook.log; never raise from here."""
    if layout is None:
        return
    try:
        from gitstate import error_map
        from gitstate.storage import logs

        failed = error_map.log_text(exc, trace=True)
        logs.append(
            layout.agy_dir, logs.HOOK_LOG, f"{event} agent={agent or '-'} failed open: {failed}"
        )
    except Exception:
        pass
