"""The hostile-input corpus: repository states built with plain git plumbing, the commands to run
against them (every leaf of the click group, found at collection time), agent-hook payloads, and
odd inputs. tests/hostile/test_hostile_matrix.py runs the product of these and checks each run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
from support import EN_SAMPLE

TIMEOUT = 20.0  # seconds: a hang is a failure, not a slow pass
DOCUMENTED_CODES = {0, 1, 2, 3, 4, 5, 6, 64, 124, 127, 130}  # docs/exit-codes.md
ZERO = "0" * 40
DEAD_PID = "2147483646"  # no such process: `hook pre-push --after` returns at once
AGENT_EVENTS = ("inject", "stop-guard", "pre-compact")
JOB_ID = "j-20260102-030405-abcd"  # a well-formed job id (the hostile job states use it)


def hermetic_env(home: str) -> dict[str, str]:
    """The environment of tests/conftest.py's seal, for processes this module starts itself."""
    venv_bin = os.path.dirname(sys.executable)
    return {
        "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "XDG_CONFIG_HOME": f"{home}/.config",
        "XDG_DATA_HOME": f"{home}/.local/share",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "AGY_BRAIN": f"{home}/brain",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": f"{home}/.gitconfig",
        "GIT_AUTHOR_NAME": "A U Thor",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_AUTHOR_DATE": "2026-01-02T03:04:05+00:00",
        "GIT_COMMITTER_NAME": "A U Thor",
        "GIT_COMMITTER_EMAIL": "author@example.com",
        "GIT_COMMITTER_DATE": "2026-01-02T03:04:05+00:00",
        "GIT_EDITOR": "false",
        "EDITOR": "false",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
    }


# ---- commands -----------------------------------------------------------------------------

# A harmless argument set per command; a command not listed gets one made from its click
# parameters (a required argument or option gets "x", a choice its first value), so a new
# command is in the matrix the day it lands.
DEFAULT_ARGS: dict[str, list[str]] = {
    "checkpoint": ["-m", "cp"],
    "install": ["--agent", "all"],
    "uninstall": ["--agent", "all"],
    "decide": ["--type", "Rule", "use", "plain", "git"],
    "error": ["--type", "T", "--cause", "c", "--fix", "f", "--scope", "s"],
    "restore": ["refs/agy/state"],
    "hook pre-push": ["--after", DEAD_PID, "origin", "https://example.invalid/r.git"],
    "hook post-checkout": [ZERO, "HEAD", "1"],
    "job run": ["--text", "do a thing"],
    "job watch": [JOB_ID, "--timeout", "1"],
    "job feedback": [JOB_ID, "more"],
    "job result": [JOB_ID],
    "job status": [JOB_ID],
    "job cancel": [JOB_ID],
    "job cleanup": [JOB_ID],
    "memory add": ["--layer", "knowledge", "a", "fact"],
    "memory edit": ["MEMORY.md"],
    "memory forget": ["--layer", "knowledge", "--dry-run", "fact"],
    "memory search": ["fact"],
    "memory session": ["--summary", "a session"],
    "patch": ["--todo", "a step"],
}
# The commands that read STATE.md, the state refs or the snapshot: run against every state (the
# others run against the states marked every=True).
READERS = {"archive", "check", "checkout", "doctor", "patch", "save", "show", "status"}
STDIN_FOR: dict[str, str] = {
    "memory edit": "memory.md",
    "hook pre-push": "push-lines",
}


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]
    args: tuple[str, ...]
    has_json: bool

    @property
    def name(self) -> str:
        return " ".join(self.path)


def _made_up_args(command: click.Command) -> list[str]:
    args: list[str] = []
    for param in command.params:
        if not param.required:
            continue
        value = "x"
        if isinstance(param.type, click.Choice):
            value = str(param.type.choices[0])
        if isinstance(param, click.Option):
            args += [param.opts[0], value]
        else:
            args.append(value)
    return args


def all_commands() -> list[Command]:
    """Every leaf command of `git agy-state --help`, subcommands included."""
    from gitstate.cli import main

    found: list[Command] = []

    def walk(group: click.Group, ctx: click.Context, path: tuple[str, ...]) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None, name
            sub = (*path, name)
            if isinstance(command, click.Group):
                walk(command, click.Context(command, parent=ctx), sub)
                continue
            key = " ".join(sub)
            args = DEFAULT_ARGS.get(key)
            if args is None:
                args = _made_up_args(command)
            has_json = any("--json" in p.opts for p in command.params)
            found.append(Command(sub, tuple(args), has_json))

    walk(main, click.Context(main), ())
    return found


# ---- states -------------------------------------------------------------------------------


def git(repo: Path, *args: str, env: dict[str, str], input: bytes | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=env, input=input, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode().strip()


def tool(repo: Path, *args: str, env: dict[str, str], input: str | None = None) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gitstate", *args],
        cwd=repo,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"agy-state {' '.join(args)}: {proc.stderr}")


def build_base(repo: Path, env: dict[str, str]) -> None:
    """A healthy repository: a commit, two snapshots, a decision, a checkpoint, a view."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "--template=", "-b", "main", env=env)
    (repo / "README").write_text("readme\n")
    git(repo, "add", "README", env=env)
    git(repo, "commit", "-q", "-m", "initial", env=env)
    tool(repo, "init", env=env)
    (repo / "STATE.md").write_text(EN_SAMPLE)
    tool(repo, "save", "-m", "first", env=env)
    tool(repo, "patch", "--todo", "write the docs", env=env)
    tool(repo, "decide", "--type", "Rule", "keep", "it", "small", env=env)
    tool(repo, "checkpoint", "-m", "base", env=env)
    git(repo, "update-ref", "refs/agy/archive/old", "refs/agy/state~1", env=env)
    git(repo, "repack", "-adq", env=env)  # one pack: fewer files to copy per case


def _blob(repo: Path, data: bytes, env: dict[str, str]) -> str:
    return git(repo, "hash-object", "-w", "--stdin", env=env, input=data)


def _snapshot_with(entry: str) -> Callable[[Path, dict[str, str]], None]:
    """A new tip whose tree holds `entry` (a mktree line, {blob}/{tree}/{commit} filled in) as
    STATE.md; the view and its record are removed, so commands read the tip."""

    def build(repo: Path, env: dict[str, str]) -> None:
        tip = git(repo, "rev-parse", "refs/agy/state", env=env)
        inner = git(repo, "rev-parse", "refs/agy/state^{tree}", env=env)
        line = entry.format(
            tree=inner,
            commit=git(repo, "rev-parse", "HEAD", env=env),
            junk=_blob(repo, bytes(range(256)) * 8, env),
            latin=_blob(
                repo, EN_SAMPLE.replace("Goal", "G\xf6al").encode("latin-1", "replace"), env
            ),
            nul=_blob(repo, EN_SAMPLE.replace("backoff\n", "back\0off\n", 1).encode(), env),
            empty=_blob(repo, b"", env),
            notdoc=_blob(repo, b"hello world\n", env),
        )
        tree = git(repo, "mktree", env=env, input=(line + "\n").encode())
        commit = git(repo, "commit-tree", tree, "-p", tip, "-m", "hostile", env=env)
        git(repo, "update-ref", "refs/agy/state", commit, env=env)
        _drop_view(repo)

    return build


def _drop_view(repo: Path) -> None:
    (repo / "STATE.md").unlink(missing_ok=True)
    (repo / ".git" / "agy" / "view").unlink(missing_ok=True)


def _ref_to(ref: str, what: str) -> Callable[[Path, dict[str, str]], None]:
    def build(repo: Path, env: dict[str, str]) -> None:
        if what == "blob":
            target = _blob(repo, b"not a commit\n", env)
        elif what == "tree":
            target = git(repo, "rev-parse", "HEAD^{tree}", env=env)
        elif what == "tag":
            git(repo, "tag", "-a", "-m", "a tag", "agy-hostile-tag", "refs/agy/state", env=env)
            target = git(repo, "rev-parse", "agy-hostile-tag", env=env)
        elif what == "commit":  # a code commit, not a snapshot
            target = git(repo, "rev-parse", "HEAD", env=env)
        else:
            raise AssertionError(what)
        git(repo, "update-ref", "--no-deref", ref, target, env=env)

    return build


def _ref_file(ref: str, content: str) -> Callable[[Path, dict[str, str]], None]:
    def build(repo: Path, env: dict[str, str]) -> None:
        path = repo / ".git" / ref
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)

    return build


def _agy_entry(name: str, folder: bool):
    """<gitdir>/agy/NAME replaced: by a folder, or (NAME "") the agy folder itself by a file."""

    def build(repo: Path, env: dict[str, str]) -> None:
        agy = repo / ".git" / "agy"
        if not name:
            shutil.rmtree(agy)
            agy.write_text("not a folder\n")
            return
        path = agy / name
        path.unlink(missing_ok=True)
        path.mkdir() if folder else path.write_text("")

    return build


def _symbolic(repo: Path, env: dict[str, str]) -> None:
    git(repo, "symbolic-ref", "refs/agy/state", "refs/heads/main", env=env)


def _view(content: bytes | None = None, link: str | None = None, folder: bool = False):
    def build(repo: Path, env: dict[str, str]) -> None:
        view = repo / "STATE.md"
        view.unlink(missing_ok=True)
        if link is not None:
            os.symlink(link, view)
        elif folder:
            view.mkdir()
            (view / "inner.md").write_text(EN_SAMPLE)
        elif content is not None:
            view.write_bytes(content)

    return build


def _no_commits(repo: Path, env: dict[str, str]) -> None:
    shutil.rmtree(repo)
    repo.mkdir()
    git(repo, "init", "-q", "--template=", "-b", "main", env=env)


def _bare_inside(repo: Path, env: dict[str, str]) -> None:
    git(repo, "config", "core.bare", "true", env=env)


def _ok(repo: Path, env: dict[str, str]) -> None:
    pass


def _config(*pairs: tuple[str, str]) -> Callable[[Path, dict[str, str]], None]:
    def build(repo: Path, env: dict[str, str]) -> None:
        for key, value in pairs:
            git(repo, "config", key, value, env=env)

    return build


def _job_meta(data: bytes | None = None, link: str | None = None):
    """A job folder under <gitdir>/agy/jobs/ whose meta.json is `data` (or the folder a link)."""

    def build(repo: Path, env: dict[str, str]) -> None:
        folder = repo / ".git" / "agy" / "jobs" / JOB_ID
        folder.parent.mkdir(parents=True, exist_ok=True)
        if link is not None:
            os.symlink(link, folder)
            return
        folder.mkdir()
        if data is not None:
            (folder / "meta.json").write_bytes(data)
            (folder / "result.json").write_bytes(data)

    return build


SETTINGS_FILES = (".claude/settings.json", ".gemini/settings.json", ".agents/hooks.json")


def _settings(data: bytes | None = None, folder: bool = False, link: str | None = None):
    """The agents' project settings files as `data`, folders or links."""

    def build(repo: Path, env: dict[str, str]) -> None:
        for name in SETTINGS_FILES:
            path = repo / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if folder:
                path.mkdir()
            elif link is not None:
                os.symlink(link, path)
            elif data is not None:
                path.write_bytes(data)

    return build


def _brain(repo: Path, env: dict[str, str]) -> None:
    """A brain inside the repository's git dir (so that each case copies it), with memory."""
    brain_env = {**env, "AGY_BRAIN": str(repo / ".git" / "hostile-brain")}
    tool(repo, "memory", "init", env=brain_env)
    tool(repo, "memory", "add", "--layer", "knowledge", "a", "fact", env=brain_env)
    tool(repo, "memory", "add", "--layer", "project", "a", "project", "fact", env=brain_env)


def _worktree(then: Callable[[Path, dict[str, str]], None] | None = None):
    """A linked worktree `wt` inside the repository (its git files are re-pointed at each case's
    copy by the worker), with a saved state of its own; `then` breaks something after."""

    def build(repo: Path, env: dict[str, str]) -> None:
        git(repo, "worktree", "add", "-q", "-b", "side", "wt", env=env)
        (repo / ".git" / "info" / "exclude").write_text("STATE.md\nwt/\n")
        (repo / "wt" / "STATE.md").write_text(EN_SAMPLE)
        tool(repo / "wt", "save", "-m", "in the worktree", env=env)
        if then is not None:
            then(repo, env)

    return build


BRAIN_IN_REPO = (("AGY_BRAIN", "{case}/repo/.git/hostile-brain"),)


WRONG_META = {
    "id": JOB_ID,
    "state": 5,
    "round": "one",
    "pid": "abc",
    "created_at": [],
    "finished_at": {"x": 1},
    "branch": None,
    "worktree": 7,
    "harvested_at": None,
    "queue_position": "first",
}
GARBAGE_CONFIG = (
    ("agy.injectBudget", "lots"),
    ("agy.memoryBudget", "-5"),
    ("agy.memoryInject", "maybe"),
    ("agy.language", "klingon"),
    ("agy.maxConcurrent", "0x"),
    ("agy.maxRetries", "-1"),
    ("agy.queueTimeout", "soon"),
    ("agy.timeout", "forever"),
    ("agy.timeoutGrace", "1e999"),
    ("agy.skipPermissions", "perhaps"),
    ("agy.effort", "extreme"),
    ("agy.agentKind", "robot"),
    ("agy.agent", "'unbalanced"),
    ("agy.requiresigned", "sometimes"),
    ("agy.remote", "-oops"),
    ("agy.memoryRemote", "--upload-pack=touch /tmp/x"),
)


@dataclass(frozen=True)
class State:
    name: str
    build: Callable[[Path, dict[str, str]], None]
    post: tuple[str, ...] = ()  # done per case, in the fork server (hostile_worker.prepare)
    uid: int | None = None
    env: tuple[tuple[str, str], ...] = ()  # more environment ({case} is the case's folder)
    json_too: bool = False  # also run every command with --json here
    inputs: bool = False  # also run the odd-input cases here
    every: bool = False  # every command here; elsewhere only READERS (the suite's time budget)
    also: tuple[str, ...] = ()  # and the commands whose name starts with one of these
    cwd: str = ""  # where the command runs, inside the repository


STATES: list[State] = [
    State("healthy", _ok, json_too=True, inputs=True, every=True),
    State("no-commits", _no_commits, every=True),
    State("bare-config", _bare_inside),
    State("state-ref-blob", _ref_to("refs/agy/state", "blob"), every=True),
    State("state-ref-tree", _ref_to("refs/agy/state", "tree")),
    State("state-ref-tag", _ref_to("refs/agy/state", "tag")),
    State("state-ref-code-commit", _ref_to("refs/agy/state", "commit")),
    State("state-ref-missing", _ref_file("refs/agy/state", "1" * 40 + "\n")),
    State("state-ref-garbage", _ref_file("refs/agy/state", "garbage\n"), also=("log", "diff")),
    State("state-ref-symbolic", _symbolic),
    State("notes-ref-blob", _ref_to("refs/notes/agy/decisions", "blob")),
    State("archive-ref-tree", _ref_to("refs/agy/archive/old", "tree")),
    State("checkpoint-tag-blob", _ref_file("refs/tags/checkpoint-bad", "2" * 40 + "\n")),
    State("job-ref-blob", _ref_to("refs/agy/jobs/j-bad", "blob")),
    State("tip-state-tree", _snapshot_with("040000 tree {tree}\tSTATE.md")),
    State("tip-state-gitlink", _snapshot_with("160000 commit {commit}\tSTATE.md")),
    State("tip-state-junk", _snapshot_with("100644 blob {junk}\tSTATE.md"), every=True),
    State("tip-state-latin1", _snapshot_with("100644 blob {latin}\tSTATE.md")),
    State("tip-state-nul", _snapshot_with("100644 blob {nul}\tSTATE.md")),
    State("tip-state-empty", _snapshot_with("100644 blob {empty}\tSTATE.md")),
    State("tip-state-notdoc", _snapshot_with("100644 blob {notdoc}\tSTATE.md")),
    State("tip-no-state", _snapshot_with("100644 blob {notdoc}\tOTHER.md")),
    State("view-fifo", _ok, post=("fifo",), every=True),
    State("view-char-device", _ok, post=("chardev",)),
    State("view-socket", _ok, post=("socket",)),
    State("view-link-passwd", _view(link="/etc/passwd")),
    State("view-link-loop", _view(link="STATE.md")),
    State("view-link-dangling", _view(link="nowhere/at/all.md")),
    State("view-link-dir", _view(link="/etc")),
    State("view-directory", _view(folder=True)),
    State("view-50mb", _ok, post=("big",)),
    State("view-empty", _view(b"")),
    State("view-notdoc", _view(b"hello world\n")),
    State("view-nul", _view(EN_SAMPLE.replace("backoff\n", "back\0off\n", 1).encode())),
    State("view-latin1", _view(EN_SAMPLE.replace("Goal", "G\xf6al").encode("latin-1", "replace"))),
    State("view-dirty", _view(EN_SAMPLE.replace("backoff", "jitter").encode())),
    State("config-garbage", _config(*GARBAGE_CONFIG), every=True),
    State(
        "config-user-dotdot", _config(("agy.user", ".."), ("user.email", "../@x")), also=("sync",)
    ),
    State("config-user-odd", _config(("agy.user", "a b:c/../d\\e")), also=("sync",)),
    State("brain-is-a-file", _ok, env=(("AGY_BRAIN", "{case}/repo/README"),), also=("memory",)),
    State("brain-is-a-worktree", _ok, env=(("AGY_BRAIN", "{case}/repo"),), also=("memory",)),
    State("brain-is-dev-null", _ok, env=(("AGY_BRAIN", "/dev/null"),), also=("memory",)),
    State("job-meta-garbage", _job_meta(b"{not json"), also=("job",)),
    State("job-meta-deep", _job_meta(b"[" * 100_000 + b"]" * 100_000), also=("job",)),
    State("job-meta-array", _job_meta(b"[1, 2]"), also=("job",)),
    State("job-meta-wrong-types", _job_meta(json.dumps(WRONG_META).encode()), also=("job",)),
    State("job-meta-fifo", _job_meta(), post=("job-fifo",), also=("job",)),
    State("job-meta-missing", _job_meta(), also=("job",)),
    State("job-folder-link", _job_meta(link="/etc"), also=("job",)),
    State("settings-garbage", _settings(b"{not json"), also=("install", "uninstall")),
    State(
        "settings-deep", _settings(b"[" * 100_000 + b"]" * 100_000), also=("install", "uninstall")
    ),
    State("settings-array", _settings(b"[1, 2]"), also=("install", "uninstall")),
    State(
        "settings-wrong-hooks",
        _settings(b'{"hooks": [1, "x", null], "plugins": 5}'),
        also=("install", "uninstall"),
    ),
    State("settings-latin1", _settings(b'{"x": "\xff"}'), also=("install", "uninstall")),
    State("settings-dir", _settings(folder=True), also=("install", "uninstall")),
    State("settings-link-readme", _settings(link="../README"), also=("install", "uninstall")),
    State("settings-fifo", _settings(), post=("settings-fifo",), also=("install", "uninstall")),
    State("brain-cache-fifo", _brain, post=("brain-fifo",), env=BRAIN_IN_REPO, also=("memory",)),
    State(
        "brain-memory-ref-blob",
        _brain,
        post=("brain-ref-blob",),
        env=BRAIN_IN_REPO,
        also=("memory",),
    ),
    State("worktree", _worktree(), post=("worktree",), cwd="wt", every=True),
    State(
        "worktree-ref-blob",
        _worktree(_ref_to("refs/agy/wt/wt/state", "blob")),
        post=("worktree",),
        cwd="wt",
    ),
    State("worktree-fifo", _worktree(), post=("worktree", "wt-fifo"), cwd="wt"),
    State("worktree-gitfile-garbage", _worktree(), post=("worktree", "wt-garbage"), cwd="wt"),
    State("view-record-garbage", _ref_file("agy/view", "\x00garbage\n\xff")),
    State("view-record-dir", _agy_entry("view", folder=True)),
    State("view-record-fifo", _ok, post=("record-fifo",)),
    State("lock-is-a-dir", _agy_entry("lock", folder=True), also=("decide", "checkpoint")),
    State("lock-is-a-fifo", _ok, post=("lock-fifo",), also=("decide", "checkpoint")),
    State("agy-dir-is-a-file", _agy_entry("", folder=False), also=("decide", "checkpoint", "job")),
    State("git-dir-env-nowhere", _ok, env=(("GIT_DIR", "{case}/nowhere"),)),
    State("git-dir-env-file", _ok, env=(("GIT_DIR", "{case}/repo/README"),)),
    State(
        "home-is-a-file",
        _ok,
        env=(
            ("HOME", "{case}/repo/README"),
            ("XDG_DATA_HOME", "{case}/repo/README/data"),
            ("XDG_CONFIG_HOME", "{case}/repo/README/config"),
            ("XDG_CACHE_HOME", "{case}/repo/README/cache"),
            ("AGY_BRAIN", "{case}/repo/README/brain"),
        ),
        also=("memory", "install", "uninstall", "job"),
    ),
    State("read-only-tree", _ok, post=("readonly",), uid=65534, every=True),
    State("full-fs", _ok, post=("fullfs",), every=True),
    State("read-only-fs", _ok, post=("rofs",)),
]


# ---- agent hook payloads -------------------------------------------------------------------


def agent_payloads(event: str, cwd: str) -> dict[str, tuple[str | None, bytes]]:
    """name → (the --agent flag or None, the payload bytes on stdin)."""
    claude_event = {"inject": "SessionStart", "stop-guard": "Stop", "pre-compact": "PreCompact"}
    gemini_event = {
        "inject": "SessionStart",
        "stop-guard": "AfterAgent",
        "pre-compact": "PreCompress",
    }
    agy = {"conversationId": "c-1", "workspacePaths": [f"file://{cwd}"], "invocationNum": 1}
    claude = {"session_id": "s-1", "cwd": cwd, "hook_event_name": claude_event[event]}
    gemini = {
        "session_id": "g-1",
        "cwd": cwd,
        "hook_event_name": gemini_event[event],
        "timestamp": "2026-01-02T03:04:05Z",
    }
    return {
        "agy": ("agy", json.dumps(agy).encode()),
        "claude": ("claude", json.dumps(claude).encode()),
        "gemini": ("gemini", json.dumps(gemini).encode()),
        "detected-agy": (None, json.dumps(agy).encode()),
        "detected-claude": (None, json.dumps(claude).encode()),
    }


def malformed_payloads() -> dict[str, bytes]:
    wrong = {
        "conversationId": ["not", "a", "string"],
        "workspacePaths": "file:///etc",
        "invocationNum": "one",
        "cwd": 42,
        "session_id": {"a": 1},
        "hook_event_name": None,
        "stop_hook_active": "yes",
        "transcript_path": 7,
    }
    return {
        "not-json": b"this is not json {",
        "json-array": b"[1, 2, 3]",
        "json-string": b'"hello"',
        "json-null": b"null",
        "empty": b"",
        "huge": json.dumps(
            {"session_id": "s", "hook_event_name": "Stop", "x": "y" * 8_000_000}
        ).encode(),
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "wrong-types": json.dumps(wrong).encode(),
        "cwd-elsewhere": json.dumps(
            {"session_id": "s", "cwd": "/", "hook_event_name": "Stop"}
        ).encode(),
        "cwd-missing": json.dumps(
            {"session_id": "s", "cwd": "/no/such", "hook_event_name": "Stop"}
        ).encode(),
        "workspace-passwd": json.dumps(
            {"conversationId": "c", "workspacePaths": ["/etc/passwd"]}
        ).encode(),
        "non-utf8": b'{"session_id": "\xff\xfe", "hook_event_name": "Stop"}',
        "nul": b'{"session_id": "a\x00b"}',
        "lone-surrogate": b'{"session_id": "\\ud800", "cwd": "\\udfff"}',
        "bom": b'\xef\xbb\xbf{"session_id": "s", "hook_event_name": "Stop"}',
    }


# ---- odd inputs (run against the states marked inputs=True) ----------------------------------

ODD_INPUTS: dict[str, tuple[list[str], str | None, tuple[str, ...]]] = {
    # name: (argv, stdin or None, post steps)
    "job-result-dotdot": (["job", "result", "../../etc"], None, ()),
    "job-cancel-dotdot": (["job", "cancel", "../x"], None, ()),
    "job-cleanup-dotdot": (["job", "cleanup", "--purge", "../../x"], None, ()),
    "job-feedback-dotdot": (["job", "feedback", "../x", "hi"], None, ()),
    "job-status-dotdot": (["job", "status", "../x"], None, ()),
    "job-watch-dotdot": (["job", "watch", "--timeout", "1", "../x"], None, ()),
    "job-status-slash": (["job", "status", "/etc/passwd"], None, ()),
    "job-run-plan-fifo": (["job", "run", "--plan", "{case}/input.fifo"], None, ("fifo-input",)),
    "job-run-plan-devzero": (["job", "run", "--plan", "/dev/zero"], None, ()),
    "job-run-plan-dir": (["job", "run", "--plan", "/etc"], None, ()),
    "job-run-plan-big": (["job", "run", "--plan", "{case}/input.big"], None, ("big-input",)),
    "job-run-plan-missing": (["job", "run", "--plan", "/no/such/plan.md"], None, ()),
    "job-run-plan-stdin-zero": (["job", "run", "--plan", "-"], "/dev/zero", ()),
    "check-fifo": (["check", "{case}/input.fifo"], None, ("fifo-input",)),
    "check-devzero": (["check", "/dev/zero"], None, ()),
    "check-big": (["check", "{case}/input.big"], None, ("big-input",)),
    "check-dir": (["check", "/etc"], None, ()),
    "check-missing": (["check", "/no/such"], None, ()),
    "memory-edit-stdin-zero": (["memory", "edit", "MEMORY.md"], "/dev/zero", ()),
    "memory-edit-stdin-big": (["memory", "edit", "MEMORY.md"], "{case}/input.big", ("big-input",)),
    "memory-edit-dotdot": (["memory", "edit", "../../etc/passwd"], "memory.md", ()),
    "memory-edit-absolute": (["memory", "edit", "/etc/passwd"], "memory.md", ()),
    "memory-show-dotdot": (["memory", "show", "../../etc/passwd"], None, ()),
    "memory-add-stdin-zero": (["memory", "add", "--layer", "knowledge", "-"], "/dev/zero", ()),
    "memory-add-project-dotdot": (
        ["memory", "add", "--layer", "project", "--project", "../x", "fact"],
        None,
        (),
    ),
    "memory-forget-project-dotdot": (
        ["memory", "forget", "--layer", "project", "--project", "../../x", "fact"],
        None,
        (),
    ),
    "memory-session-workspace-dotdot": (
        ["memory", "session", "--summary", "s", "--workspace", "../../x"],
        None,
        (),
    ),
    "decide-stdin-zero": (["decide", "--type", "Rule", "-"], "/dev/zero", ()),
    "show-archive-dotdot": (["show", "archive/../../heads/main"], None, ()),
    "show-dotdot": (["show", "../../../etc/passwd"], None, ()),
    "show-option-like": (["show", "--", "--upload-pack=touch x"], None, ()),
    "diff-dotdot": (["diff", "refs/agy/../heads/main", "refs/agy/state"], None, ()),
    "restore-checkpoint-dotdot": (["restore", "checkpoint-../../x"], None, ()),
    "restore-option-like": (["restore", "--", "-x"], None, ()),
    "checkout-dotdot": (["checkout", "../x"], None, ()),
    "archive-reopen-dotdot": (["archive", "--reopen", "../../heads/main"], None, ()),
    "archive-reopen-missing": (["archive", "--reopen", "nope"], None, ()),
    "checkpoint-nul-message": (["checkpoint", "-m", "a\x01b"], None, ()),
    "sync-dotdot": (["sync", ".."], None, ()),
    "sync-option-like": (["sync", "--", "-oops"], None, ()),
    "sync-from-dotdot": (["sync", "--from", "../x"], None, ()),
    "remote-setup-dotdot": (["remote", "setup", "../x"], None, ()),
    "log-negative": (["log", "-n", "-5"], None, ()),
    "log-huge": (["log", "-n", "99999999999999999999"], None, ()),
    "phase-bad": (["phase", "NOT-A-PHASE"], None, ()),
    "patch-set-bad-key": (["patch", "--set", "../goal=x"], None, ()),
    "patch-start-huge": (["patch", "--start", "99999999999999999999"], None, ()),
    "job-watch-interval": (["job", "watch", "--interval", "0", "j"], None, ()),
    "hook-pre-push-stdin-zero": (
        ["hook", "pre-push", "--after", DEAD_PID, "origin"],
        "/dev/zero",
        (),
    ),
    "hook-pre-push-garbage-lines": (
        ["hook", "pre-push", "--after", DEAD_PID, "origin"],
        "push-garbage",
        (),
    ),
    "hook-pre-push-negative-after": (["hook", "pre-push", "--after", "-1", "origin"], None, ()),
    "hook-pre-push-dash-remote": (["hook", "pre-push", "--after", DEAD_PID, "--", "-x"], None, ()),
    "job-run-timeout-garbage": (["job", "run", "--text", "t", "--timeout", "soon"], None, ()),
    "job-run-model-option-like": (["job", "run", "--text", "t", "--model", "--x"], None, ()),
    "job-run-text-controls": (["job", "run", "--text", "a\x1b[2Jb"], None, ()),
    "job-run-text-huge": (["job", "run", "--text", "x" * 300_000], None, ()),
    "decide-supersedes-dotdot": (
        ["decide", "--type", "Rule", "--supersedes", "../x", "t"],
        None,
        (),
    ),
    "decide-controls": (["decide", "--type", "Rule", "a\x1b]0;x\x07b"], None, ()),
    "error-huge": (
        ["error", "--type", "T", "--cause", "c" * 300_000, "--fix", "f", "--scope", "s"],
        None,
        (),
    ),
    "memory-search-fts-syntax": (["memory", "search", 'NEAR("a" "b", -1) OR *'], None, ()),
    "memory-search-huge": (["memory", "search", "q" * 200_000], None, ()),
    "memory-show-layer-bad": (["memory", "show", "--layer", "../x"], None, ()),
    "show-section-bad": (["show", "--section", "../x"], None, ()),
    "hook-post-checkout-junk": (["hook", "post-checkout", "../x", "--y", "zz"], None, ()),
    "hook-unknown-agent": (["hook", "inject", "--agent", "nobody"], None, ()),
    "hook-extra-arg": (["hook", "stop-guard", "extra"], None, ()),
}


@dataclass
class Case:
    id: str
    state: str
    argv: list[str]
    stdin: str | None = None  # a file name in the inputs folder, an absolute path, or None
    post: tuple[str, ...] = ()
    agent_hook: bool = False
    json: bool = False
    extra: dict[str, object] = field(default_factory=dict)


def write_inputs(folder: Path, head: str) -> None:
    """The stdin files cases refer to by name."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "memory.md").write_text("# Memory\n\n- a fact\n")
    (folder / "push-lines").write_text(f"refs/heads/main {head} refs/heads/main {ZERO}\n")
    (folder / "push-garbage").write_bytes(
        b"garbage\n\xff\xfe not utf-8\nrefs/heads/x zz refs/heads/y\n" + b"a" * 100_000 + b"\n"
    )
    for event in AGENT_EVENTS:
        for name, (_agent, data) in agent_payloads(event, "{cwd}").items():
            (folder / f"payload-{event}-{name}").write_bytes(data)
    for name, data in malformed_payloads().items():
        (folder / f"payload-{name}").write_bytes(data)
