"""A fork server for the hostile-input matrix: one long-lived process per core.

It imports the tool once (the command line, every command module, the agent hooks), then for each
case read from stdin (one JSON object a line) it copies the case's template repository, applies
the case's last-moment changes (a FIFO, a 50 MB file, a read-only or full file system…), forks a
child that runs `git agy-state ARGS` through `gitstate.entry.main` exactly as the console script
does (its own cwd, environment, stdin, stdout and stderr files, its own process group), waits for
it with a timeout (killing the group on expiry), and answers with one JSON line: the exit code or
"timeout", the output, and the agy refs before and after. A fork per case costs milliseconds where
a fresh interpreter costs 300 ms; every case still is a real process with real file descriptors.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import click

import gitstate
import gitstate.cli
import gitstate.entry
import gitstate.hooks.agent

OUTPUT_LIMIT = 256 * 1024
REF_PREFIXES = ("refs/agy", "refs/notes", "refs/tags", "refs/agy-remotes")


def preload() -> None:
    """Import every command module now, so that no fork pays for it."""
    ctx = click.Context(gitstate.cli.main)

    def walk(group: click.Group, ctx: click.Context) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if isinstance(command, click.Group):
                walk(command, click.Context(command, parent=ctx))

    walk(gitstate.cli.main, ctx)
    # Every module of the tool (and through them the standard library it uses): the read-only
    # case runs as nobody, who may not read this interpreter's library folder.
    import pkgutil

    for found in pkgutil.walk_packages(gitstate.__path__, "gitstate."):
        if not found.name.endswith("__main__"):
            importlib.import_module(found.name)
    for name in (
        "sqlite3",
        "secrets",
        "difflib",
        "hashlib",
        "tempfile",
        "traceback",
        "shlex",
        "unicodedata",
        "fcntl",
        "select",
        "uuid",
        "zlib",
        "json.decoder",
    ):
        importlib.import_module(name)


def raw_refs(gitdir: Path) -> dict[str, str]:
    """Every loose ref file under the agy prefixes and packed-refs, byte for byte (a garbage or
    symbolic ref is kept as it is; nothing here parses them)."""
    found: dict[str, str] = {}
    refs = gitdir / "refs"
    for prefix in REF_PREFIXES:
        top = gitdir / prefix
        if not top.is_dir() or top.is_symlink():
            continue
        for folder, _dirs, files in os.walk(top):
            for name in files:
                path = Path(folder) / name
                try:
                    found[str(path.relative_to(gitdir))] = path.read_bytes().decode("latin-1")
                except OSError as exc:
                    found[str(path.relative_to(gitdir))] = f"<unreadable {exc.errno}>"
    try:
        packed = (gitdir / "packed-refs").read_text("latin-1")
    except OSError:
        packed = ""
    lines = [line for line in packed.splitlines() if any(p in line for p in REF_PREFIXES)]
    found["packed-refs"] = "\n".join(lines)
    del refs
    return found


def listed_refs(repo: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname) %(objectname) %(symref)", *REF_PREFIXES],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout


class Skip(Exception):
    """The platform cannot build this case (not root, no tmpfs): the test is skipped."""


def mount(point: Path, size: str) -> None:
    point.mkdir(parents=True)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise Skip(f"cannot mount a tmpfs here: {proc.stderr.strip() or proc.returncode}")


def umount(point: Path) -> None:
    subprocess.run(["umount", "-l", str(point)], check=False, capture_output=True)


def fill(folder: Path) -> None:
    """Write until the file system is full."""
    block = b"\0" * 65536
    with open(folder / ".filler", "wb", buffering=0) as out:
        try:
            while True:
                out.write(block)
        except OSError:
            pass
        try:
            while True:
                out.write(b"\0")
        except OSError:
            pass


def _link_or_copy(source: str, target: str) -> None:
    """Pack files are never written in place (git replaces them): a hard link shares one safely
    and saves the copy; everything else is copied."""
    if f"{os.sep}objects{os.sep}pack{os.sep}" in source:
        try:
            os.link(source, target)
            return
        except OSError:
            pass  # another file system (the tmpfs cases)
    shutil.copy2(source, target)


class TimedOut(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise TimedOut


def wait(pid: int, timeout: float) -> int | None:
    """The child's wait status, or None after killing its process group at the timeout."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return os.waitpid(pid, 0)[1]
    except TimedOut:
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def prepare(case: dict, case_dir: Path) -> tuple[Path, Path, list[Path]]:
    """The case's repository and home; the mount points to undo afterwards."""
    mounts: list[Path] = []
    post = case.get("post", [])
    if "fullfs" in post or "rofs" in post:
        mount(case_dir, "4m")
        mounts.append(case_dir)
    else:
        case_dir.mkdir(parents=True)
    repo, home = case_dir / "repo", case_dir / "home"
    shutil.copytree(case["template"], repo, symlinks=True, copy_function=_link_or_copy)
    shutil.copytree(case["home"], home, symlinks=True)
    view = repo / "STATE.md"
    if case.get("stdin_subst"):  # an agent payload naming the case's own work tree
        here = str(repo / case.get("cwd", "")).rstrip("/")
        data = Path(case["stdin"]).read_bytes().replace(b"{cwd}", here.encode())
        (case_dir / ".stdin").write_bytes(data)
        case["stdin"] = str(case_dir / ".stdin")
    for step in post:
        if step == "fifo":
            view.unlink(missing_ok=True)
            os.mkfifo(view)
        elif step == "chardev":  # STATE.md as /dev/zero (made here: copying one reads forever)
            view.unlink(missing_ok=True)
            try:
                os.mknod(view, stat.S_IFCHR | 0o666, os.makedev(1, 5))
            except PermissionError:
                raise Skip("mknod needs root") from None
        elif step == "job-fifo":
            for name in ("meta.json", "result.json", "events.jsonl"):
                os.mkfifo(repo / ".git" / "agy" / "jobs" / "j-20260102-030405-abcd" / name)
        elif step == "settings-fifo":
            for name in (".claude/settings.json", ".gemini/settings.json", ".agents/hooks.json"):
                (repo / name).parent.mkdir(parents=True, exist_ok=True)
                os.mkfifo(repo / name)
        elif step == "brain-fifo":  # every file of the brain's plain-text cache a FIFO
            agy = repo / ".git" / "hostile-brain" / "agy"
            for folder, _dirs, files in os.walk(agy / "cache"):
                for name in files:
                    os.unlink(os.path.join(folder, name))
                    os.mkfifo(os.path.join(folder, name))
            (agy / "injected").unlink(missing_ok=True)
            os.mkfifo(agy / "injected")
        elif step == "brain-ref-blob":
            brain = repo / ".git" / "hostile-brain"
            blob = (
                subprocess.run(
                    ["git", "--git-dir", str(brain), "hash-object", "-w", "--stdin"],
                    input=b"not a commit\n",
                    capture_output=True,
                    check=True,
                )
                .stdout.decode()
                .strip()
            )
            subprocess.run(
                ["git", "--git-dir", str(brain), "update-ref", "refs/agy/memory", blob], check=True
            )
        elif step == "worktree":  # re-point the linked worktree's git files at this copy
            (repo / "wt" / ".git").write_text(f"gitdir: {repo}/.git/worktrees/wt\n")
            (repo / ".git" / "worktrees" / "wt" / "gitdir").write_text(f"{repo}/wt/.git\n")
        elif step == "wt-fifo":
            (repo / "wt" / "STATE.md").unlink()
            os.mkfifo(repo / "wt" / "STATE.md")
        elif step == "wt-garbage":
            (repo / "wt" / ".git").write_text(f"gitdir: {repo}/no-such-gitdir\n")
        elif step in ("record-fifo", "lock-fifo"):
            path = repo / ".git" / "agy" / ("view" if step == "record-fifo" else "lock")
            path.unlink(missing_ok=True)
            os.mkfifo(path)
        elif step == "socket":
            view.unlink(missing_ok=True)
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(str(view))
        elif step == "big":
            with open(view, "r+b") as handle:  # a valid head, then a hole: 50 MB, instantly
                handle.truncate(50 * 1024 * 1024)
        elif step == "fifo-input":
            os.mkfifo(case_dir / "input.fifo")
        elif step == "big-input":
            with open(case_dir / "input.big", "wb") as handle:
                handle.write(b"- x\n" * 1024)
                handle.truncate(50 * 1024 * 1024)
        elif step == "readonly":
            if os.getuid() == 0:  # root ignores modes: the case runs as nobody, who owns it all
                for folder, dirs, files in os.walk(case_dir):
                    for name in dirs + files:
                        os.lchown(os.path.join(folder, name), 65534, 65534)
                os.lchown(case_dir, 65534, 65534)
            for folder, _dirs, files in os.walk(repo):
                for name in files:
                    path = os.path.join(folder, name)
                    if not os.path.islink(path):
                        os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) & ~0o222)
                os.chmod(folder, 0o555)
        elif step == "fullfs":
            fill(case_dir)
        elif step == "rofs":
            remount = ["mount", "-o", "remount,ro", str(case_dir)]
            if subprocess.run(remount, check=False).returncode:
                raise Skip("cannot remount the tmpfs read-only")
    return repo, home, mounts


def child(case: dict, repo: Path, home: Path, case_dir: Path, outputs: Path) -> None:
    """In the fork: become the command (never returns)."""
    code = 1
    try:
        os.setsid()
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # the server's timeout handler is not ours
        env = {
            key: value.replace("{home}", str(home)).replace("{case}", str(case_dir))
            for key, value in case["env"].items()
        }
        os.chdir(repo / case.get("cwd", ""))
        os.environ.clear()
        os.environ.update(env)
        import pygit2

        levels = pygit2.enums.ConfigLevel
        pygit2.settings.search_path[levels.GLOBAL] = str(home)
        pygit2.settings.search_path[levels.XDG] = str(home / ".config")
        pygit2.settings.search_path[levels.SYSTEM] = str(home / ".empty")
        stdin = case.get("stdin")
        if stdin is None:
            fd = os.open(os.devnull, os.O_RDONLY)
        else:
            stdin = stdin.replace("{case}", str(case_dir))
            fd = os.open(stdin, os.O_RDONLY | os.O_NONBLOCK)
            os.set_blocking(fd, True)
        os.dup2(fd, 0)
        out = os.open(outputs / "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        err = os.open(outputs / "err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        os.dup2(out, 1)
        os.dup2(err, 2)
        if case.get("uid") is not None and os.getuid() == 0:  # files opened: become nobody
            os.setgid(case["uid"])
            os.setuid(case["uid"])
        sys.stdin = open(0, closefd=False, encoding="utf-8", errors="strict")  # noqa: SIM115 (the process ends with os._exit)
        sys.stdout = open(1, "w", closefd=False, encoding="utf-8")  # noqa: SIM115
        sys.stderr = open(  # noqa: SIM115
            2, "w", closefd=False, encoding="utf-8", errors="backslashreplace"
        )
        sys.argv = ["git-agy-state", *[a.replace("{case}", str(case_dir)) for a in case["argv"]]]
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        try:
            gitstate.entry.main()
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                sys.stderr.write(f"{exc.code}\n")
                code = 1
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
    finally:
        os._exit(code)


def read_output(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(OUTPUT_LIMIT).decode("utf-8", "backslashreplace")
    except OSError:
        return ""


def run_case(case: dict, scratch: Path, listed_before: dict[str, str]) -> dict:
    case_dir = scratch / f"c{case['n']}"
    outputs = scratch / f"o{case['n']}"
    outputs.mkdir(mode=0o777)
    os.chmod(outputs, 0o777)  # the read-only case runs as nobody
    mounts: list[Path] = []
    result: dict = {"n": case["n"]}
    started = time.monotonic()
    try:
        repo, home, mounts = prepare(case, case_dir)
        before = raw_refs(repo / ".git")
        pid = os.fork()
        if pid == 0:
            child(case, repo, home, case_dir, outputs)
        status = wait(pid, case["timeout"])
        if status is None:
            result["code"] = "timeout"
        elif os.WIFSIGNALED(status):
            result["code"] = f"signal {os.WTERMSIG(status)}"
        else:
            result["code"] = os.WEXITSTATUS(status)
        result["elapsed"] = round(time.monotonic() - started, 3)
        result["stdout"] = read_output(outputs / "out")
        result["stderr"] = read_output(outputs / "err")
        after = raw_refs(repo / ".git")
        result["moved"] = None
        if after != before:
            env = {k: v.replace("{home}", str(home)) for k, v in case["env"].items()}
            key = case["template"]
            if key not in listed_before:
                listed_before[key] = listed_refs(Path(case["template"]), env)
            now = listed_refs(repo, env)
            if now != listed_before[key]:
                result["moved"] = {"before": listed_before[key], "after": now}
    except Skip as exc:
        result["skip"] = str(exc)
    except Exception as exc:  # the harness failed, not the tool: say so
        import traceback

        result["harness"] = "".join(traceback.format_exception(exc))
    finally:
        for point in mounts:
            umount(point)
        if not os.environ.get("AGY_HOSTILE_KEEP"):
            shutil.rmtree(case_dir, ignore_errors=True)
            shutil.rmtree(outputs, ignore_errors=True)
    return result


def main() -> None:
    scratch = Path(sys.argv[1])
    preload()
    listed_before: dict[str, str] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        case = json.loads(line)
        result = run_case(case, scratch, listed_before)
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
