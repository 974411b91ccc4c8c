"""Asking the `git` command: refs, ancestry, config, remotes. Standard library only.

The network always goes through git (users' credentials, ssh config and proxies must just work):
storage/network.py, on top of `run` here. Use cases ask the functions below by intent; none
builds a git command line of its own (tests/test_git_boundary.py). Reads that only decide what
to do also go through here, so that a sync with nothing to merge
never pays pygit2's start-up; writing stays with pygit2 (gitstate.storage.snapshots).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from gitstate.errors import Failure, UsageError
from gitstate.storage.layout import Layout

# What `git rev-parse --local-env-vars` prints: the variables that tie a git process to one
# repository (a hook inherits GIT_DIR, GIT_INDEX_FILE…). Only these are dropped: the user's
# GIT_SSH_COMMAND, GIT_ASKPASS, GIT_CONFIG_GLOBAL, GIT_COMMITTER_* … must reach git (docs/sync.md:
# users' credentials, ssh config and proxies must just work).
LOCAL_ENV_VARS = frozenset(
    {
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_OBJECT_DIRECTORY",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_INDEX_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_COMMON_DIR",
    }
)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a git child (of a hook, or of sync): none of the inherited variables
    that point git at a repository (GIT_DIR, GIT_INDEX_FILE…); the rest as the user set it."""
    env = {k: v for k, v in os.environ.items() if k not in LOCAL_ENV_VARS}
    env.update(extra)
    return env


def run(
    layout: Layout,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """`git ARGS…` for this repository; stdin is `input` (else nothing: never the caller's);
    raises Failure only if git is missing."""
    return run_in(
        layout.gitdir,
        layout.workdir or layout.commondir,
        *args,
        env=env,
        timeout=timeout,
        input=input,
    )


def run_in(
    gitdir: Path,
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    input: str | None = None,
    umask: int = -1,
) -> subprocess.CompletedProcess[str]:
    """`git ARGS…` with GIT_DIR=gitdir (also for repositories without a Layout: the brain).
    `umask` (e.g. 0o077 for the private brain) applies to the files git creates."""
    base = clean_env(GIT_DIR=str(gitdir))
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            env={**base, **(env or {})},
            stdin=subprocess.DEVNULL if input is None else None,
            input=input,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            umask=umask,
        )
    except OSError as exc:
        raise Failure(f"cannot run git: {exc.strerror}") from None


def refuse_option_like(value: str, what: str = "remote") -> str:
    """`value` itself, unless git could read it as an option: a remote name or URL beginning
    with `-` (`--upload-pack=CMD` runs CMD) is a usage error (docs/memory.md, docs/sync.md).
    Callers also pass `--` before positional arguments; this refusal keeps such a value out of
    config and commit messages too."""
    if value.startswith("-"):
        raise UsageError(
            f"refusing {what} {value!r}: it begins with '-' and git would read it as an option",
            hint="give a remote name, a URL or a path (./-name for a path that begins with '-')",
        )
    return value


# Lines git prints after the real error, saying nothing about it.
_GENERIC = (
    "fatal: Could not read from remote repository.",
    "fatal: the remote end hung up unexpectedly",
    "error: failed to push some refs to ",
)
_ASIDES = ("hint:", "warning:")
_PREFIX_RE = re.compile(r"^(fatal|error): ")
_TAGGED_RE = re.compile(r"^[A-Za-z][\w -]*: ")  # `hint: …`, `ssh: …`, `remote: …`


def error_line(text: str) -> str:
    """The line of git's stderr that says what went wrong, for `error: git … failed: <it>`.

    The first `fatal:`/`error:` line that is not one of git's generic follow-ups (`Could not
    read from remote repository.`), with its `fatal: ` dropped and the lines git wrapped it onto
    joined; else the first line from another program (`ssh: Could not resolve hostname …`);
    else the last paragraph. For a missing repository that gives "'..' does not appear to be a
    git repository", not the last line's "and the repository exists."."""
    lines = [line.rstrip() for line in text.splitlines() if not line.startswith(_ASIDES)]
    tests = (
        lambda line: bool(_PREFIX_RE.match(line)) and not line.startswith(_GENERIC),
        lambda line: line.startswith(" ! "),  # a ref push refused: ` ! [rejected] … (why)`
        lambda line: bool(_TAGGED_RE.match(line)) and not line.startswith("remote:"),
        lambda line: bool(_PREFIX_RE.match(line)),
    )
    chosen = next((i for test in tests for i, line in enumerate(lines) if test(line)), None)
    if chosen is None:
        filled = [i for i, line in enumerate(lines) if line.strip()]
        if not filled:
            return "(no output)"
        chosen = filled[-1]
        while chosen > 0 and lines[chosen - 1].strip() and not _TAGGED_RE.match(lines[chosen]):
            chosen -= 1
    parts = [_PREFIX_RE.sub("", lines[chosen].strip(), count=1)]
    for line in lines[chosen + 1 : chosen + 4]:
        # A wrapped line goes on in lower case; a new message starts with its own tag.
        if not line.strip() or _TAGGED_RE.match(line) or not line.lstrip()[:1].islower():
            break
        parts.append(line.strip())
    return " ".join(parts)


def refs(layout: Layout, *patterns: str) -> dict[str, str]:
    """{ref name: object id} for refs matching the patterns (for-each-ref's rules: a prefix up
    to a slash, or a glob). Tags map to the tag object, not the commit."""
    proc = run(layout, "for-each-ref", "--format=%(objectname) %(refname)", "--", *patterns)
    if proc.returncode != 0:
        raise Failure(f"git for-each-ref failed: {error_line(proc.stderr)}")
    found = {}
    for line in proc.stdout.splitlines():
        oid, _, name = line.partition(" ")
        if name:
            found[name] = oid
    return found


def ref_fields(layout: Layout, fields: Sequence[str], *patterns: str) -> list[list[str]]:
    """For each ref matching the patterns (for-each-ref's rules), the values of `fields`, in
    order: for-each-ref's format atoms without `%(…)`, e.g. ("refname", "objecttype",
    "*objectname", "contents:trailers:key=X,valueonly"). One git process for every ref."""
    fmt = "%00".join(f"%({field})" for field in fields)
    proc = run(layout, "for-each-ref", "--format=" + fmt, "--", *patterns)
    if proc.returncode != 0:
        raise Failure(f"git for-each-ref failed: {error_line(proc.stderr)}")
    return [line.split("\0") for line in proc.stdout.splitlines() if line]


def reached(layout: Layout, commits: Iterable[str], tips: Iterable[str]) -> set[str]:
    """Those of `commits` that the `tips` reach (one rev-list, its ids on stdin: no argv limit;
    tips this repository lacks are ignored)."""
    wanted = set(commits)
    if not wanted:
        return set()
    text = "".join(f"{c}\n" for c in sorted(wanted)) + "".join(f"^{t}\n" for t in set(tips))
    proc = run(layout, "rev-list", "--ignore-missing", "--stdin", input=text)
    if proc.returncode != 0:
        raise Failure(f"git rev-list failed: {error_line(proc.stderr)}")
    return wanted - set(proc.stdout.split())


def histories_disjoint(layout: Layout, a: str, b: str) -> bool:
    """Do the histories of commits `a` and `b` share no commit at all (git merge-base finds
    none)? An answer git cannot give (an object missing) is False: not known to be apart."""
    return run(layout, "merge-base", "--", a, b).returncode == 1


def name_status(layout: Layout, base: str, to: str = "HEAD") -> str:
    """`git diff --name-status -M BASE TO`: one line per file changed between the two trees
    (`M\tpath`, `R100\told\tnew`…), renames found. Raises Failure in git's words (a base
    that is gone)."""
    proc = run(layout, "diff", "--name-status", "-M", base, to, "--")
    if proc.returncode != 0:
        raise Failure(f"git diff failed: {error_line(proc.stderr)}")
    return proc.stdout


def is_ancestor(layout: Layout, ancestor: str, descendant: str) -> bool:
    proc = run(layout, "merge-base", "--is-ancestor", "--", ancestor, descendant)
    if proc.returncode not in (0, 1):
        raise Failure(f"git merge-base failed: {error_line(proc.stderr)}")
    return proc.returncode == 0


def config(layout: Layout, *keys: str) -> dict[str, str]:
    """The values of the given config keys that are set (one git process for all of them)."""
    pattern = "^(" + "|".join(k.replace(".", r"\.") for k in keys) + ")$"
    proc = run(layout, "config", "--get-regexp", "--", pattern)
    values: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        for wanted in keys:
            if key.lower() == wanted.lower():
                values[wanted] = value
    return values


def remote_urls(layout: Layout, name: str) -> set[str]:
    """The fetch and push URLs of remote `name`, as configured and as git rewrites them
    (url.<base>.insteadOf); an empty set for a remote that does not exist."""
    urls: set[str] = set()
    for args in (
        ("config", "--get-all", f"remote.{name}.url"),
        ("config", "--get-all", f"remote.{name}.pushurl"),
        ("remote", "get-url", "--all", "--", name),
        ("remote", "get-url", "--push", "--all", "--", name),
    ):
        proc = run(layout, *args)
        if proc.returncode == 0:
            urls.update(line.strip() for line in proc.stdout.splitlines() if line.strip())
    return urls


def notes_merge(
    layout: Layout, notes_ref: str, other: str, identity: Mapping[str, str]
) -> str | None:
    """Merge the notes of `other` into `notes_ref` line-wise (`git notes merge -s
    cat_sort_uniq`: a note both sides changed keeps every line of both, once). `identity`:
    config for git's merge commit (user.name, user.email) when the user has none. Returns
    git's error line when the merge failed, else None."""
    settings = [arg for key, value in identity.items() for arg in ("-c", f"{key}={value}")]
    proc = run(
        layout,
        *settings,
        "notes",
        f"--ref={notes_ref}",
        "merge",
        "-q",
        "-s",
        "cat_sort_uniq",
        other,
    )
    return error_line(proc.stderr) if proc.returncode != 0 else None


def remotes(layout: Layout) -> list[str]:
    proc = run(layout, "remote")
    return [line.strip() for line in proc.stdout.splitlines() if line.strip()]


def current_branch(layout: Layout) -> str | None:
    """The branch HEAD names (even before its first commit); None when detached."""
    try:
        head = (layout.gitdir / "HEAD").read_text().strip()
    except OSError:
        return None
    if head.startswith("ref: refs/heads/"):
        return head[len("ref: refs/heads/") :]
    return None
