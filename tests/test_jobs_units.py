"""The pure parts of the job runtime: plans, prompts, result lines, settings, ids, quota."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from gitstate.agents import jobs as agents
from gitstate.agents.jobs import Agent, Call
from gitstate.errors import UsageError
from gitstate.jobs.document import config, plan
from gitstate.jobs.storage import files as jobfiles
from gitstate.jobs.usecases.doctor import parse_quota


class TestPlan:
    def test_front_matter_in_every_form(self) -> None:
        parsed = plan.parse_plan(
            "---\nscope: src/\nacceptance:\n  - pytest -q\n  - ruff check\n"
            "constraints: [no new deps, 'keep API']\n---\n\n# Title\nbody\n"
        )
        assert parsed.scope == ("src/",)
        assert parsed.acceptance == ("pytest -q", "ruff check")
        assert parsed.constraints == ("no new deps", "keep API")
        assert parsed.body == "# Title\nbody\n" and parsed.title == "Title"

    @pytest.mark.parametrize(
        "text",
        ["---\nnot front matter at all\n---\nbody", "---\nscope: a\nno closing line", "plain"],
    )
    def test_malformed_front_matter_is_body(self, text: str) -> None:
        parsed = plan.parse_plan(text)
        assert parsed.body == text and parsed.scope == ()

    def test_prompt_carries_the_contract(self) -> None:
        parsed = plan.parse_plan("---\nscope: src/\n---\nDo it.")
        prompt = plan.build_prompt(
            parsed, job_id="j-20260101-000000-abcd", worktree="/w", branch="agy/x", round_no=1
        )
        assert prompt.startswith("Do it.\n\n## Execution contract")
        assert "Work only inside /w (on branch agy/x)" in prompt
        assert "in scope: src/" in prompt and "make them pass: not declared" in prompt
        again = plan.build_prompt(
            parsed,
            job_id="j",
            worktree="/w",
            branch=None,
            round_no=2,
            feedback="fix",
            previous_summary="s",
        )
        assert again.startswith(
            "Feedback on the previous round: fix\nSummary of the previous round: s"
        )
        assert "Do it." not in again  # the conversation already holds the plan

    def test_prompt_limit(self) -> None:
        with pytest.raises(UsageError) as info:
            plan.build_prompt(
                plan.Plan("x" * plan.MAX_PROMPT_BYTES),
                job_id="j",
                worktree="/w",
                branch=None,
                round_no=1,
            )
        assert info.value.exit_code == 64

    def test_binary_plans_are_refused(self) -> None:
        with pytest.raises(UsageError):
            plan.decode_plan(b"a\x00b", "p")
        with pytest.raises(UsageError):
            plan.decode_plan(b"\xff\xfe", "p")

    def test_contract_check(self) -> None:
        good = {"summary": "s", "files_changed": ["a"], "tests_passed": True}
        assert plan.contract_problems(good) == []
        assert plan.contract_problems(None) == ["no structured output"]
        assert plan.contract_problems({"summary": 1, "files_changed": "a", "extra": 1}) == [
            "missing tests_passed",
            "summary is not a string",
            "files_changed is not a list of strings",
            "unexpected extra",
        ]


BODY = {
    "status": "SUCCESS",
    "response": "r",
    "structured_output": {"summary": "s"},
    "conversation_id": "c",
    "duration_seconds": 2,
    "num_turns": 3,
    "usage": {"input_tokens": 5, "output_tokens": 6},
}


class TestResultLines:
    def test_both_agy_shapes(self) -> None:
        flat = agents.result_of({"type": "result", **BODY})
        envelope = agents.result_of({"event": "result", "result": BODY})
        assert flat == envelope
        assert flat is not None and flat.status == "SUCCESS" and flat.conversation_id == "c"
        assert flat.duration_seconds == 2.0 and flat.num_turns == 3
        assert agents.tokens(flat.usage) == 11

    def test_claude_result(self) -> None:
        found = agents.result_of(
            {
                "type": "result",
                "subtype": "error_max_turns",
                "is_error": True,
                "result": "text",
                "session_id": "sess",
                "duration_ms": 1500,
            }
        )
        assert found is not None
        assert (found.status, found.response, found.conversation_id, found.duration_seconds) == (
            "ERROR",
            "text",
            "sess",
            1.5,
        )

    def test_other_lines(self) -> None:
        assert agents.result_of({"type": "assistant"}) is None
        assert agents.result_of(["x"]) is None
        assert agents.conversation_of({"type": "system", "session_id": "s"}) == "s"

    def test_argv_per_agent(self) -> None:
        call = Call("P", None, "low", "30m", Path("/s.json"), None)
        assert Agent("agy", ("agy",), True).argv(call) == [
            "agy", "-p", "P", "--output-format", "stream-json", "--effort", "low",
            "--print-timeout", "30m", "--json-schema", "/s.json", "--dangerously-skip-permissions",
        ]  # fmt: skip
        resumed = call._replace(conversation="c", schema_path=None, effort=None, model="m")
        assert Agent("claude", ("claude", "--x"), False).argv(resumed) == [
            "claude", "--x", "-p", "--output-format", "stream-json", "--verbose",
            "--model", "m", "--resume", "c", "--", "P",
        ]  # fmt: skip
        dashed = call._replace(prompt="--model=x\nrest", schema_path=None)
        assert Agent("agy", ("agy",), False).argv(dashed)[1:3] == ["-p", "\n--model=x\nrest"]
        assert Agent("claude", ("claude",), False).argv(dashed)[-2:] == ["--", "--model=x\nrest"]


class TestConfig:
    def get(self, values: dict[str, str]) -> config.JobConfig:
        return config.load(values.get)

    def test_defaults(self) -> None:
        loaded = self.get({})
        assert loaded.agent == ("agy",) and loaded.kind == "agy"
        assert (loaded.max_concurrent, loaded.queue_timeout, loaded.max_retries) == (3, 7200.0, 1)
        assert loaded.skip_permissions and loaded.model is None and loaded.timeout == "30m"

    def test_values(self) -> None:
        loaded = self.get(
            {
                "agy.agent": "'/opt/my tools/claude' --flag",
                "agy.skipPermissions": "false",
                "agy.maxRetries": "0",
                "agy.queueTimeout": "90s",
            }
        )
        assert loaded.agent == ("/opt/my tools/claude", "--flag") and loaded.kind == "claude"
        assert not loaded.skip_permissions and loaded.max_retries == 0
        assert loaded.queue_timeout == 90.0

    @pytest.mark.parametrize(
        "key,value",
        [
            ("agy.maxConcurrent", "0"),
            ("agy.maxConcurrent", "three"),
            ("agy.queueTimeout", "2 hours"),
            ("agy.agent", ""),
            ("agy.agent", "'unclosed"),
            ("agy.skipPermissions", "maybe"),
            ("agy.effort", "max"),
            ("agy.agentKind", "gemini"),
        ],
    )
    def test_bad_values_are_usage_errors(self, key: str, value: str) -> None:
        with pytest.raises(UsageError) as info:
            self.get({key: value} if value else {key: " "})
        assert key in info.value.message


class TestIds:
    def test_shape(self) -> None:
        assert jobfiles.check_id("j-20260102-030405-ab12") == "j-20260102-030405-ab12"
        for bad in ("j-20260102-030405-ab1", "../j-20260102-030405-ab12", "j-20260102-030405-AB12"):
            with pytest.raises(UsageError):
                jobfiles.check_id(bad)


class TestQuota:
    def test_json_groups(self) -> None:
        text = json.dumps(
            {"command": {"data": {"groups": [{"name": "5h", "used": 1, "limit": 9}]}}}
        )
        assert parse_quota(text)["windows"] == [
            {
                "name": "5h",
                "used": 1,
                "limit": 9,
                "remaining": None,
                "percent": None,
                "resets_at": None,
            }
        ]

    def test_tsv_fallback(self) -> None:
        found = parse_quota("window\tused\tlimit\n5h\t3\t10\nweekly\t7\t100\n")
        assert found["source"] == "text"
        assert [(w["name"], w["used"]) for w in found["windows"]] == [("5h", "3"), ("weekly", "7")]


class TestReads:
    def test_a_file_replaced_while_it_is_read_is_read_again(self, tmp_path: Path) -> None:
        """Writers rename a new meta.json into place at any moment; a reader caught between
        its lstat and its open must see one of the two versions, never "no file" (a supervisor
        that read its job as missing left it, and the job read as interrupted)."""
        path = tmp_path / "meta.json"
        jobfiles.write_json(path, {"n": 0})
        stop = threading.Event()

        def writer() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                jobfiles.write_json(path, {"n": n})

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            seen = [jobfiles.read_json(path) for _ in range(3000)]
            texts = [jobfiles.read_text(path) for _ in range(1000)]
        finally:
            stop.set()
            thread.join()
        assert None not in seen
        assert "" not in texts
