"""The man pages: written from the click commands, built into the wheel under share/man/man1,
found by `man` and by `git agy-state --help` (which git turns into `git help agy-state`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import click
import pygit2
import pytest

import gitstate
from gitstate.cli import main, manpages, summary

ROOT = Path(__file__).resolve().parent.parent
MAN = shutil.which("man")
GROFF = shutil.which("groff")
needs_man = pytest.mark.skipif(not (MAN and GROFF), reason="man or groff is not installed")


def _top_level() -> dict[str, click.Command]:
    ctx = click.Context(main)
    found = {}
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None
        found[name] = command
    return found


def _rendered(page: Path) -> str:
    """The page as `man -l` shows it, with no pager and no terminal; fails on a roff warning."""
    env = {**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"}
    proc = subprocess.run(
        [str(MAN), "-l", str(page)], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    lint = subprocess.run(
        [str(GROFF), "-man", "-Tutf8", "-ww", "-z", str(page)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert lint.stderr == "", f"{page.name}: {lint.stderr}"
    return proc.stdout


def test_a_page_for_the_tool_and_for_every_command(tmp_path: Path) -> None:
    written = [Path(p).name for p in manpages.write(str(tmp_path))]
    assert written[0] == "git-agy-state.1"
    assert sorted(written[1:]) == sorted(f"git-agy-state-{name}.1" for name in _top_level())


def test_a_group_page_holds_every_subcommand() -> None:
    for name, command in _top_level().items():
        if not isinstance(command, click.Group):
            continue
        text = manpages.command_page(name)
        for sub in command.commands:
            assert f'.SS "{manpages._escape(f"{name} {sub}")}"' in text, (name, sub)


@needs_man
def test_every_page_renders_with_man(tmp_path: Path) -> None:
    commands = _top_level()
    for path in manpages.write(str(tmp_path)):
        shown = " ".join(_rendered(Path(path)).split())
        name = Path(path).stem.removeprefix("git-agy-state").removeprefix("-")
        command = commands[name] if name else main
        for heading in ("NAME", "SYNOPSIS", "DESCRIPTION"):
            assert heading in shown, (path, heading)
        assert " ".join(summary(command).split()) in shown.replace("- ", "-"), path
    overview = " ".join(_rendered(tmp_path / "git-agy-state.1").split())
    for name in commands:
        assert f"git-agy-state-{name}(1)" in overview


@needs_man
def test_patch_page_shows_the_keys_in_every_language(tmp_path: Path) -> None:
    manpages.write(str(tmp_path))
    shown = _rendered(tmp_path / "git-agy-state-patch.1")
    assert "open_issues" in shown and "待解決" in shown and "待解决" in shown
    assert '{"op": "done", "step": N, "verify": TEXT}' in shown


def _pip(*args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def _built_wheel(tmp_path: Path) -> Path:
    """The wheel, built from a copy of the source tree (the checkout stays as it was) as
    `pip install .` builds it: in an isolated environment holding pyproject.toml's build
    requirements only, so that a requirement the man pages need and it lacks fails here."""
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "gitstate", source / "gitstate", ignore=ignore)
    shutil.copytree(ROOT / "scripts", source / "scripts", ignore=ignore)
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "NOTICE"):
        shutil.copy(ROOT / name, source / name)
    out = tmp_path / "wheel"
    _pip("wheel", "-q", "--no-deps", "-w", str(out), str(source))
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _built_wheel(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_carries_the_licences(built_wheel: Path) -> None:
    """The project's MIT licence and the NOTICE for the word list derived from jieba (MIT) and
    OpenCC (Apache-2.0) travel with every install, as those licences require."""
    with zipfile.ZipFile(built_wheel) as archive:
        names = {Path(name).name: name for name in archive.namelist() if ".dist-info/" in name}
        assert "LICENSE" in names and "NOTICE" in names
        notice = archive.read(names["NOTICE"]).decode()
        words = archive.read("gitstate/memory/document/cjk_words.py").decode()
    assert "Sun Junyi" in notice and "Apache License, Version 2.0" in notice
    assert "Permission is hereby granted" in words


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory, built_wheel: Path) -> Path:
    """The wheel installed into a venv of its own (never --prefix from this one: pip would take
    the editable install out of the environment running the tests): bin/ and share/man/ side by
    side. Its dependencies are this environment's: a .pth line appends the folders holding click
    and pygit2 to its sys.path, after its own site-packages, so `gitstate` is the wheel's (a
    folder named in a .pth is not a site folder: the editable install's own .pth there stays
    unread)."""
    prefix = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    python = str(prefix / "bin" / "python")
    _pip("--python", python, "install", "-q", "--no-deps", "--no-index", str(built_wheel))
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    found = {str(Path(module.__file__ or "").resolve().parent.parent) for module in (click, pygit2)}
    (Path(site) / "test-deps.pth").write_text("".join(f"{d}\n" for d in sorted(found)))
    return prefix


def _imported(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The modules a process imported, in the order `-X importtime` reports them: a module once
    all it imports is in, so a package's line follows its submodules' and precedes what the code
    run after the import brings in."""
    return [
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and not line.endswith("imported package")
    ]


def test_the_installed_command_imports_nothing_before_ours(
    built_wheel: Path, wheel_venv: Path
) -> None:
    """`git-agy-state` is our launcher (scripts/git-agy-state), not the script a pip before 25.2
    generates for an entry point, which imports `re` first: about two thirds of a bare
    interpreter's start-up, paid by every command (docs/commands.md, "Install and the launcher").
    Run as a user runs it, by its shebang, the modules imported before `gitstate` are exactly a
    bare `python -c pass`'s in the same venv. A pip from 25.2 on writes no `import re` either,
    so first the wheel itself: the command is its script, and no entry point makes another."""
    with zipfile.ZipFile(built_wheel) as archive:
        names = archive.namelist()
        scripts = [name for name in names if ".data/scripts/" in name]
        entry_points = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        assert [Path(name).name for name in scripts] == ["git-agy-state"]
        assert archive.read(scripts[0]).startswith(b"#!python\n")
        assert not entry_points or b"git-agy-state" not in archive.read(entry_points[0])
    script = wheel_venv / "bin" / "git-agy-state"
    python = wheel_venv / "bin" / "python"
    assert script.read_text().splitlines()[0] == f"#!{python}"  # pip's rewrite of `#!python`
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPROFILEIMPORTTIME"] = "1"
    proc = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == f"git agy-state, version {gitstate.__version__}\n"
    order = _imported(proc)
    assert "gitstate" in order and order.index("gitstate.entry") > order.index("gitstate")
    launcher_imports = order[: order.index("gitstate")]
    assert "re" not in launcher_imports
    bare = subprocess.run(
        [str(python), "-c", "pass"], capture_output=True, text=True, env=env, timeout=60
    )
    assert launcher_imports == _imported(bare)


@needs_man
def test_the_wheel_carries_the_pages_and_git_agy_state_help_shows_them(
    tmp_path: Path, built_wheel: Path, wheel_venv: Path
) -> None:
    with zipfile.ZipFile(built_wheel) as archive:
        pages = {
            Path(name).name
            for name in archive.namelist()
            if name.startswith("git_agy_state-") and "/data/share/man/man1/" in name
        }
    assert pages == {Path(p).name for p in manpages.write(str(tmp_path / "pages"))}
    prefix = wheel_venv
    assert (prefix / "bin" / "git-agy-state").exists()
    assert (prefix / "share" / "man" / "man1" / "git-agy-state-patch.1").exists()
    # A user's shell: the prefix's bin on PATH, MANPATH unset (man derives <prefix>/share/man
    # from it), no terminal so no pager.
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH", "MANPAGER", "PAGER")}
    env["PATH"] = os.pathsep.join([str(prefix / "bin"), "/usr/bin", "/bin"])
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    for args, page in (
        (["agy-state", "--help"], "GIT-AGY-STATE(1)"),
        (["help", "agy-state"], "GIT-AGY-STATE(1)"),
    ):
        proc = subprocess.run(
            ["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.lstrip().startswith(page), proc.stdout[:200]
        assert "git-agy-state-patch(1)" in " ".join(proc.stdout.split())
    found = subprocess.run(
        [str(MAN), "-w", "git-agy-state-memory"], env=env, capture_output=True, text=True
    )
    assert found.stdout.strip() == str(prefix / "share" / "man" / "man1" / "git-agy-state-memory.1")
