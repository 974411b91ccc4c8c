"""The agent hooks' start-up (docs/hooks.md, "Start-up cost"): which modules each event loads,
and the rules that let a clean view skip work, checked against the code they stand in for.

Module sets, never timings (speed lives in bench/). The child runs with `-S` and the package's
own folder on sys.path: an editable install's finder (site-packages' .pth) imports pathlib
itself, and a wheel install has none; this way both judge only what the hook imports.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Repo

import gitstate
from gitstate import errors
from gitstate.document import language, validate
from gitstate.document.model import outline
from gitstate.hooks import agent, frame
from gitstate.memory.storage.layout import BrainLayout
from gitstate.storage import hooklayout, view
from gitstate.storage.layout import discover

PACKAGE_ROOT = str(Path(gitstate.__file__).resolve().parent.parent)
# The console script's own work (gitstate/entry.py main), in a child with no site packages.
RUNNER = (
    "import sys; sys.path.insert(0, {root!r}); sys.argv = ['git-agy-state', 'hook', {event!r}];"
    " from gitstate.entry import main; main()"
)
# What no clean hook may load: the CLI and git bindings, and what only slower paths need.
NEVER = {
    "click",
    "pygit2",
    "typing",
    # json's Python layer and what it pulls in: the hooks speak JSON through _json
    # (hooks/json_wire.py), and the credential scan compiles patterns only for a candidate line
    "json",
    "re",
    "enum",
    "collections",
    "pathlib",
    "urllib",
    "ipaddress",
    "dataclasses",
    "subprocess",
    "hashlib",
    "gitstate.errors",
    "gitstate.hooks.memory",  # no brain in the sealed home
    "gitstate.jobs",  # no job folder in these repositories
}


def loaded_by_hook(repo: Repo, event: str, payload: object) -> tuple[set[str], str]:
    """The modules a hook process imported (by -X importtime), and what it printed."""
    proc = subprocess.run(
        [
            sys.executable,
            "-S",
            "-X",
            "importtime",
            "-c",
            RUNNER.format(root=PACKAGE_ROOT, event=event),
        ],
        cwd=repo.path,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    modules = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "gitstate.hooks.agent" in modules  # the probe itself works
    return modules, proc.stdout


def families(modules: set[str], names: set[str]) -> set[str]:
    """The modules of `names` (a package counts with everything under it) that were loaded."""
    return {m for m in modules for n in names if m == n or m.startswith(n + ".")}


def agy(repo: Repo, **extra: object) -> dict[str, object]:
    return {"conversationId": "conv-1", "workspacePaths": [str(repo.path)], **extra}


def gemini(repo: Repo, event: str) -> dict[str, object]:
    return {
        "session_id": "sess-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(repo.path),
        "hook_event_name": event,
        "timestamp": "2026-01-02T03:04:05Z",
    }


def set_state(cli: Any, *, started: bool) -> None:
    args = ["patch", "--set", "goal=ship it", "--todo", "write the test"]
    result = cli(*args, *(["--start", "1"] if started else []))
    assert result.exit_code == 0, result.output


def test_the_installed_hook_command_starts_without_runpy(repo: Repo, cli: Any) -> None:
    """`install` writes `<python> -I -c 'import gitstate.__main__' hook …` (storage/launcher.py:
    hook_argv), not `-m gitstate`, whose runpy start costs about a tenth of the hook floor."""
    set_state(cli, started=True)
    assert cli("install", "--agent", "claude").exit_code == 0
    settings = json.loads((repo.path / ".claude" / "settings.local.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    words = shlex.split(command)
    assert words[1:] == [
        "-I",
        "-c",
        "import gitstate.__main__",
        "hook",
        "inject",
        "--agent",
        "claude",
    ]
    payload = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(repo.path)}
    proc = subprocess.run(
        [words[0], "-X", "importtime", *words[1:]],
        cwd=repo.path,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "write the test" in proc.stdout
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    assert "gitstate.hooks.agent" in modules and "runpy" not in modules


class TestModulesLoaded:
    def test_inject_imports_neither_pathlib_nor_the_document_model(
        self, repo: Repo, cli: Any
    ) -> None:
        set_state(cli, started=True)
        modules, printed = loaded_by_hook(repo, "inject", agy(repo, invocationNum=1))
        assert "write the test" in json.loads(printed)["injectSteps"][0]["ephemeralMessage"]
        # bisect only for a text with a credential in it (secrets.py: on the first hit); the
        # state's language from document/language_marks.py, not the message tables.
        unwanted = {"gitstate.document.model", "gitstate.document.language", "bisect"}
        assert families(modules, NEVER | unwanted) == set()

    def test_clean_stop_guard_loads_neither_validation_nor_the_document_model(
        self, repo: Repo, cli: Any
    ) -> None:
        set_state(cli, started=True)
        first, printed = loaded_by_hook(repo, "stop-guard", agy(repo))
        assert "write the test" in json.loads(printed)["reason"]
        assert "gitstate.document.validate" in first  # the first stop checks the bytes
        modules, again = loaded_by_hook(repo, "stop-guard", agy(repo))
        assert again == printed
        assert families(modules, NEVER | {"gitstate.document"}) == set()

    def test_clean_stop_guard_without_a_step_in_progress_loads_neither_document_module(
        self, repo: Repo, cli: Any
    ) -> None:
        set_state(cli, started=False)
        loaded_by_hook(repo, "stop-guard", agy(repo))  # validates once, leaves the mark
        modules, printed = loaded_by_hook(repo, "stop-guard", agy(repo))
        assert json.loads(printed) == json.loads(agy_nothing("stop-guard"))
        assert families(modules, NEVER | {"gitstate.document"}) == set()

    def test_a_dirty_stop_guard_saves_without_pathlib_or_re(self, repo: Repo, cli: Any) -> None:
        """The save runs on str paths (usecases/workspace.py `place`), and the document grammar
        is read with str methods: pathlib (with urllib.parse and ipaddress) and `re` would
        cost the saving hook about half the hook floor (docs/hooks.md, "Start-up cost")."""
        set_state(cli, started=False)
        loaded_by_hook(repo, "stop-guard", agy(repo))
        tip = repo.ref()
        view_file = repo.path / "STATE.md"
        view_file.write_text(view_file.read_text().replace("ship it", "ship it today"))
        modules, printed = loaded_by_hook(repo, "stop-guard", agy(repo))
        assert json.loads(printed) == json.loads(agy_nothing("stop-guard"))
        assert repo.ref() != tip  # it saved
        assert "gitstate.storage.loose" in modules  # through the standard-library store
        lean = {"click", "pygit2", "typing", "pathlib", "urllib", "ipaddress", "subprocess", "re"}
        # nor enum (the writer's names are string constants), nor contextlib (the locks are
        # context managers written out), nor functools, which both would bring
        lean |= {"enum", "contextlib", "functools"}
        assert families(modules, lean | {"hashlib", "dataclasses"}) == set()

    @pytest.mark.parametrize("title", ["old", "kept"])
    def test_the_turn_after_a_save_loads_no_document_module(
        self, repo: Repo, cli: Any, title: str
    ) -> None:
        """A save writes the view back, with a new title time when the minute changed: the
        guard that saved marks the bytes it wrote valid, so the next turn's guard takes the
        clean path (with an old title the bytes surely differ; kept, they most likely do not)."""
        set_state(cli, started=False)
        view_file = repo.path / "STATE.md"
        first, rest = view_file.read_text().split("\n", 1)
        if title == "old":
            first = first[: first.index("updated ")] + "updated 2020-01-02 03:04"
        view_file.write_text(first + "\n" + rest.replace("ship it", "ship it today"))
        tip = repo.ref()
        loaded_by_hook(repo, "stop-guard", agy(repo))
        assert repo.ref() != tip
        written = view_file.read_bytes()
        assert b"2020-01-02 03:04" not in written  # an old title is written anew
        layout = discover(repo.path)
        assert layout is not None
        assert view.read_valid_mark(layout) == agent._valid_mark(written, None)
        modules, printed = loaded_by_hook(repo, "stop-guard", agy(repo))
        assert json.loads(printed) == json.loads(agy_nothing("stop-guard"))
        assert families(modules, NEVER | {"gitstate.document"}) == set()

    def test_clean_pre_compact_loads_neither_document_module(self, repo: Repo, cli: Any) -> None:
        set_state(cli, started=True)
        tip = repo.ref()
        modules, printed = loaded_by_hook(repo, "pre-compact", gemini(repo, "PreCompress"))
        assert printed.count("\n") == 1 and repo.ref() == tip
        assert families(modules, NEVER | {"gitstate.document"}) == set()


def agy_nothing(event: str) -> str:
    from gitstate.agents import find

    found = find("agy")
    assert found is not None
    return json.dumps(found.nothing(event))


class TestValidMark:
    """A clean view is validated once per bytes, version and language settings."""

    def stop(self, repo: Repo) -> Any:
        proc = subprocess.run(
            [sys.executable, "-m", "gitstate", "hook", "stop-guard"],
            cwd=repo.path,
            input=json.dumps(agy(repo)),
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def test_a_clean_but_invalid_view_still_blocks_and_leaves_no_mark(
        self, repo: Repo, cli: Any
    ) -> None:
        set_state(cli, started=False)
        layout = discover(repo.path)
        assert layout is not None
        tip = repo.ref()
        assert tip is not None
        # A view written from a snapshot (as checkout or sync write one), but not a valid
        # document: clean, since its bytes are what the record says was written.
        view.write(layout, b"# not a state document\n", tip)
        assert view.status(layout, view.read(layout)) == "clean"
        for _ in range(2):
            assert "STATE.md is invalid" in self.stop(repo)["reason"]
        assert view.read_valid_mark(layout) is None

    def test_new_bytes_a_new_version_or_other_language_settings_are_checked_again(
        self, repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        set_state(cli, started=False)
        layout = discover(repo.path)
        assert layout is not None
        assert self.stop(repo) == json.loads(agy_nothing("stop-guard"))
        data = view.read(layout)
        assert data is not None
        mark = view.read_valid_mark(layout)
        assert mark == agent._valid_mark(data, None)
        assert mark.split()[:2] == [view.blob_id(data), gitstate.__version__]
        # Each input of the verdict changes the mark.
        assert agent._valid_mark(data + b"x", None) != mark
        assert agent._valid_mark(data, "zh-TW") != mark
        monkeypatch.setenv("LC_ALL", "zh_TW.UTF-8")
        assert agent._valid_mark(data, None) != mark
        monkeypatch.undo()
        # So does an edited rule module under the same version number (a development install):
        # a copy of the package's document folder, one of its rule files then changed.
        copy = tmp_path / "gitstate"
        shutil.copytree(Path(gitstate.__file__).parent / "document", copy / "document")
        monkeypatch.setattr(gitstate, "__file__", str(copy / "__init__.py"))
        before_edit = agent._valid_mark(data, None)
        with open(copy / "document" / "controls.py", "a") as handle:
            handle.write("\n# a rule changed\n")
        assert agent._valid_mark(data, None) != before_edit
        monkeypatch.undo()
        # A mark of another version for these very bytes is not trusted: with invalid bytes
        # behind it, the guard still finds them invalid.
        tip = repo.ref()
        assert tip is not None
        bad = b"# not a state document\n"
        view.write(layout, bad, tip)
        stale = agent._valid_mark(bad, None).replace(gitstate.__version__, "0.0.0-older")
        view.write_valid_mark(layout, stale)
        assert "STATE.md is invalid" in self.stop(repo)["reason"]
        # The mark of this version is trusted: the bytes are not validated again (this is the
        # skip the module test above sees from outside).
        view.write_valid_mark(layout, agent._valid_mark(bad, None))
        assert self.stop(repo) == json.loads(agy_nothing("stop-guard"))


class TestMarkAfterASave:
    """hooks/agent.py:_mark_saved, called on the real files after a save: it marks only bytes
    it judged valid, and reads the view as the hook does (a symlink is no view)."""

    def setup(self, repo: Repo, cli: Any) -> tuple[hooklayout.HookLayout, Path, bytes, str]:
        set_state(cli, started=False)
        layout = hooklayout.discover(str(repo.path))
        assert layout is not None
        before = (repo.path / "STATE.md").read_bytes()
        return layout, repo.path / "STATE.md", before, agent._valid_mark(before, None)

    def test_the_same_bytes_get_the_mark_judged_before_the_save(self, repo: Repo, cli: Any) -> None:
        layout, _, before, mark = self.setup(repo, cli)
        hook = agent.Hook("stop-guard", None, {})
        assert agent._mark_saved(hook, layout, before, mark, None) == before
        assert view.read_valid_mark(layout) == mark

    def test_a_valid_replacement_is_judged_and_marked(self, repo: Repo, cli: Any) -> None:
        layout, view_file, before, mark = self.setup(repo, cli)
        good = before.replace(b"ship it", b"ship it now")
        view_file.write_bytes(good)
        hook = agent.Hook("stop-guard", None, {})
        assert agent._mark_saved(hook, layout, before, mark, None) == good
        assert view.read_valid_mark(layout) == agent._valid_mark(good, None)

    def test_an_invalid_replacement_is_never_marked(self, repo: Repo, cli: Any) -> None:
        layout, view_file, before, mark = self.setup(repo, cli)
        bad = b"# not a title\n\nrubbish\n"
        view_file.write_bytes(bad)
        hook = agent.Hook("stop-guard", None, {})
        assert agent._mark_saved(hook, layout, before, mark, None) == before
        assert view.read_valid_mark(layout) not in (agent._valid_mark(bad, None), mark)

    def test_a_symlink_put_there_is_no_view_and_no_failure(self, repo: Repo, cli: Any) -> None:
        layout, view_file, before, mark = self.setup(repo, cli)
        (repo.path / "elsewhere.md").write_bytes(before)
        view_file.unlink()
        view_file.symlink_to(repo.path / "elsewhere.md")
        hook = agent.Hook("stop-guard", None, {})
        assert agent._mark_saved(hook, layout, before, mark, None) == before
        assert view.read_valid_mark(layout) != mark


class TestStandIns:
    """The hooks' small copies of rules kept elsewhere agree with their originals."""

    def test_exit_codes_and_locale_variables_are_the_originals(self) -> None:
        assert agent.EXIT_OK == errors.EXIT_OK
        assert agent.EXIT_STOP_BLOCKED == errors.EXIT_STOP_BLOCKED
        assert agent.LOCALE_VARIABLES == language.LOCALE_VARIABLES

    @pytest.mark.parametrize(
        "env",
        [
            {},
            {"XDG_DATA_HOME": ""},
            {"XDG_DATA_HOME": "rel/data"},
            {"AGY_BRAIN": "~/brains/b.git"},
            {"AGY_BRAIN": "brain/../b.git"},
        ],
    )
    def test_brain_dir_is_brain_layouts_path(
        self, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.chdir(tmp_path)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        brain = BrainLayout()
        assert Path(hooklayout.brain_dir()) == brain.path
        assert agent._brain_exists() is brain.exists() is False
        (brain.path / "objects").mkdir(parents=True)
        (brain.path / "HEAD").write_text("ref: refs/heads/main\n")
        assert agent._brain_exists() is brain.exists() is True

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "# Task state — updated 2026-01-02 03:04\n\n## Goal\nx\n## Next steps\n",
            "\ufeff# T\r\n## Goal  \r\n## Done\r\r\n##\n##  \n## \tx\t\n",
            "intro\n# not\n# second title\n## a\n ## b\n### c\n## d\rx\n",
            "# 任務狀態 ── 最後更新 2026-01-02 03:04\n## 目標\n## 下一步\n",
            "\ufeff\ufeff# two boms\n## x\u3000\n",
        ],
    )
    def test_headings_of_cuts_as_outline_does(self, text: str) -> None:
        out = outline(text)
        expected = (out.title.text if out.title else None, [s.name for s in out.sections])
        assert frame.headings_of(text) == expected

    @pytest.mark.parametrize(
        "text",
        [
            "plain\r\nlines\tand tabs\n",
            "\ufeffbom first\n",
            "a lone \r here\n",
            "esc \x1b[31m\n",
            "c1 \x9b\n",
            "bidi \u202e\n",
            "isolate \u2066\n",
            "nbsp \u00a0 and \u3000 ideographic\n",
            "zero width \u200d joiner\n",
            "del \x7f\n",
        ],
    )
    def test_control_check_with_its_shortcut_equals_the_full_scan(self, text: str) -> None:
        from gitstate.document import controls

        full = [
            validate.Problem(n, language.EN.message("control", char=controls.name(c)), "control")
            for n, c in controls.find(validate.strip_bom(text))
        ]
        assert validate._controls(language.EN, text) == full


STEPS_VARIANTS = [
    "- [>] plain",
    "- [ ] first\n- [>] second",
    "  - [>] indented",
    "-\t[>]\ttabs",
    "-\u00a0[>]\u3000unicode spaces",
    "-  [>] two spaces: no item",
    "- [>]no space: no item",
    "- [>]",
    "* [>] star: no item",
    "- [ ] a\n  more text\n- [!] b | reason: c\n- [>] third line counts all lines",
    "- [>] one\n- [>] two",
    "- [ ] none in progress",
    "- [>] trailing spaces   \t",
    "\n\n- [>] after blank lines\n\n",
]


def documents() -> list[str]:
    """Documents that parse, with their Next steps varied; the title moved, a preamble, CRLF."""
    from gitstate.document.model import render, template

    found = []
    for lang in (language.EN, language.ZH_TW):
        base = render(template(lang, "2026-01-02 03:04"))
        for steps in STEPS_VARIANTS:
            text = base.rstrip("\n") + "\n" + steps + "\n"
            found += [text, text.replace("\n", "\r\n"), "preamble\n- [>] not a step\n" + text]
            title, rest = text.split("\n", 1)
            found.append(rest + title + "\n")  # the title after the steps still titles it
    return found


class TestStepInProgress:
    @pytest.mark.parametrize("text", documents())
    def test_step_in_progress_equals_the_models_reading(self, text: str) -> None:
        from gitstate.document.model import parse, parse_item

        doc = parse(text)  # raises if the sample does not parse: the sample would be wrong
        expected = None
        for number, line in enumerate(doc.steps(), start=1):
            item = parse_item(line)
            if item is not None and item.marker == ">":
                expected = (number, item.text.strip())
                break
        assert agent.step_in_progress(text) == expected

    def test_next_steps_is_the_last_section(self) -> None:
        assert language.KEYS[-1] == "next_steps"
        assert set(agent.STEP_MESSAGES) == set(language.LANGUAGES)

    @pytest.mark.parametrize("configured", [None, "", "en", " zh_tw ", "ZH-cn", "fr", "zh"])
    @pytest.mark.parametrize(
        "env",
        [
            {},
            {"LANG": "zh_TW.UTF-8"},
            {"LC_MESSAGES": "zh_SG", "LANG": "zh_TW"},
            {"LC_ALL": "", "LANG": "zh-HK"},
            {"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US"},
            {"LANG": "de_DE"},
        ],
    )
    def test_user_code_is_user_languages(
        self, configured: str | None, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        for name in language.LOCALE_VARIABLES:
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert agent.user_code(configured) == language.user_language(configured, os.environ).code


class TestSecretsShortcut:
    def test_may_assign_is_never_false_where_a_keyword_pattern_matches(self) -> None:
        import random
        import re

        from gitstate import secrets

        alphabet = list("keyapitokenpassecretcredprivateauth_.-\\\"' \t:=/x\n")
        chooser = random.Random(13)
        matched = 0
        for _, _, literal, pattern in secrets._KEYWORDS:
            finder = re.compile(pattern + secrets._SEPARATOR)
            for _ in range(3000):
                noise = "".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, 20)))
                cut = chooser.randint(0, len(noise))
                text = noise[:cut] + literal + noise[cut:]
                if finder.search(text) is not None:
                    matched += 1
                    assert secrets._may_assign(text, literal), (literal, text)
        assert matched > 500  # the sample reaches the patterns
        assert not secrets._may_assign("## key data (verbatim)\n- port 8080\n", "key")

    def test_a_plain_state_reaches_no_keyword_pattern(self) -> None:
        from gitstate import secrets

        text = "## Key data (verbatim)\n- token limit 4096\n- it passes; the API is up\n"
        low = text.lower()
        present = [lit for _, _, lit, _ in secrets._KEYWORDS if lit in low]
        assert present == ["pass", "token", "api", "key"]
        assert not any(secrets._may_assign(low, literal) for literal in present)
        assert secrets.redact(text) == (text, [])
        # With an assignment the pattern runs, and finds it.
        (hit,) = secrets.scan("api_key = 'sk-live-Qm9vYmFyYmF6cXV4cXV1eA'\n")
        assert hit.kind == "API key assignment"


class TestHookLayout:
    """storage/hooklayout.py finds what git finds (layout.discover wraps it)."""

    def git_says(self, where: Path) -> tuple[str, str, str]:
        def ask(*args: str) -> str:
            return subprocess.run(
                ["git", "-C", str(where), "rev-parse", *args],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()

        common = ask("--git-common-dir")
        common = os.path.realpath(os.path.join(where, common))
        return ask("--show-toplevel"), ask("--absolute-git-dir"), common

    def test_main_work_tree_subfolder_and_linked_worktree(self, repo: Repo) -> None:
        (repo.path / "sub" / "deeper").mkdir(parents=True)
        linked = repo.path.parent / f"{repo.path.name}-linked"
        repo.git("worktree", "add", "-q", str(linked), "-b", "side")
        for where, name in (
            (repo.path, None),
            (repo.path / "sub" / "deeper", None),
            (linked, linked.name),
        ):
            found = hooklayout.discover(str(where))
            assert found is not None
            top, gitdir, common = self.git_says(where)
            assert (found.workdir, found.gitdir, found.commondir) == (
                os.path.realpath(top),
                os.path.realpath(gitdir),
                common,
            )
            assert found.worktree == (None if name is None else os.path.basename(gitdir))
            layout = found.to_layout()
            assert layout == discover(where)
            assert (str(layout.view_path), str(layout.agy_dir), str(layout.common_agy_dir)) == (
                found.view_path,
                found.agy_dir,
                found.common_agy_dir,
            )
            assert layout.state_ref == found.state_ref

    def test_inside_the_git_dir_and_above_a_ceiling_nothing_is_found(
        self, repo: Repo, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (repo.path / "sub").mkdir()
        assert hooklayout.discover(str(repo.path / ".git")) is None
        monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo.path / "sub"))
        assert hooklayout.discover(str(repo.path / "sub")) is None
        monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo.path))
        found = hooklayout.discover(str(repo.path / "sub"))
        assert found is not None and found.workdir == os.path.realpath(repo.path)

    def test_view_files_are_written_and_cleaned_through_either_layout(self, repo: Repo) -> None:
        found = hooklayout.discover(str(repo.path))
        assert found is not None
        for layout in (found, found.to_layout()):
            view.write(layout, b"text\n", "0" * 40)
            assert view.status(layout, view.read_regular(str(repo.view), 100)) == "clean"
            leftover = repo.path / f"{view.TMP_PREFIX}1-2.tmp"
            leftover.write_text("x")
            view.clean_stale_tmp(layout)
            assert not leftover.exists() and repo.view.exists()
            view.remove(layout)
            assert not repo.view.exists() and view.read_record(layout) is None
