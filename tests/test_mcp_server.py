"""`git agy-state mcp` against the SDK's own client over stdio: the real server, a real
subprocess, a real repository (docs/mcp.md)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import Repo
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from support import WAIT, run_tool
from test_secrets import GITHUB

from gitstate.document.patch_ops import OPS
from gitstate.mcp.tools import TOOLS

Session = Callable[[ClientSession], Awaitable[Any]]

TRICKY = "CJK 中文「引号」 | pipes || and \"quotes\", 'single', $HOME `tick` \\back\\slash"


def serve(repo: Path, *sessions: Session, cwd: Path | None = None) -> list[Any]:
    """Run each session against its own server process (`mcp --repo REPO`), all at once; what
    each returned. Bounded: a hang fails the test."""
    results: list[Any] = [None] * len(sessions)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gitstate", "mcp", "--repo", str(repo)],
        env=dict(os.environ),  # the hermetic HOME and git identity
        cwd=str(cwd or repo),
    )

    async def one(index: int, session: Session) -> None:
        async with stdio_client(params) as streams, ClientSession(*streams) as client:
            await client.initialize()
            results[index] = await session(client)

    async def main() -> None:
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                for index, session in enumerate(sessions):
                    group.start_soon(one, index, session)

    anyio.run(main)
    return results


def structured(result: Any) -> dict[str, Any]:
    """A tool's answer: its structured content, which the text block repeats."""
    assert result.structured_content is not None, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return dict(result.structured_content)


def answer(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return structured(result)


def refusal(result: Any) -> dict[str, Any]:
    assert result.is_error, result.content[0].text
    return structured(result)


def show_goal(repo: Repo) -> str:
    return repo.git("show", "refs/agy/state:STATE.md")


# ---- the tools and their schemas -----------------------------------------------------------


def test_every_tool_is_listed_with_its_schema(repo: Repo) -> None:
    async def session(client: ClientSession) -> Any:
        return (await client.list_tools()).tools

    [listed] = serve(repo.path, session)
    by_name = {tool.name: tool for tool in listed}
    assert set(by_name) == {fn.__name__ for fn in TOOLS}
    assert len(by_name) == 21
    for tool in listed:
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.description
    ops = by_name["state_patch"].input_schema["properties"]["ops"]
    assert ops["type"] == "array"
    branches = {b["properties"]["op"]["enum"][0]: b for b in ops["items"]["anyOf"]}
    assert list(branches) == list(OPS)  # one branch per op, from the ops themselves
    assert branches["done"]["required"] == ["op", "step", "verify"]
    assert by_name["state_patch"].input_schema["required"] == ["ops"]
    assert by_name["state_show"].annotations.read_only_hint is True
    assert by_name["state_patch"].annotations.read_only_hint is False


# ---- patching ------------------------------------------------------------------------------


def test_a_patch_moves_refs_agy_state_and_answers_as_patch_json(repo: Repo) -> None:
    assert repo.ref() is None
    ops = [{"op": "set", "section": "goal", "text": "ship the MCP server"}]

    async def session(client: ClientSession) -> Any:
        return answer(await client.call_tool("state_patch", {"ops": ops, "message": "start"}))

    [done] = serve(repo.path, session)
    tip = repo.ref()
    assert tip is not None and done["snapshot"] == tip
    assert done["outcome"] == "saved" and done["sections"] == ["goal"]
    assert repo.git("log", "-1", "--format=%s", "refs/agy/state").strip() == "start"
    # The same object as the CLI's: same keys.
    cli = run_tool("patch", "--add", "open_issues=x", "--json", cwd=repo.path)
    assert set(json.loads(cli.stdout)) == set(done)


def test_cjk_and_pipe_heavy_texts_round_trip_unchanged(repo: Repo) -> None:
    ops = [
        {"op": "set", "section": "goal", "text": TRICKY},
        {"op": "todo", "text": "步骤一 | a|b|c"},
        {"op": "start", "step": 1},
    ]

    async def session(client: ClientSession) -> Any:
        answer(await client.call_tool("state_patch", {"ops": ops}))
        goal = answer(await client.call_tool("state_show", {"section": "goal"}))
        steps = answer(await client.call_tool("state_show", {"section": "next_steps"}))
        read = await client.read_resource("agy://state")
        return goal, steps, read.contents[0].text

    [(goal, steps, text)] = serve(repo.path, session)
    assert goal["lines"] == [TRICKY]
    assert steps["lines"] == ["- [>] 步骤一 | a|b|c"]
    assert text == show_goal(repo)
    assert TRICKY in text


def test_an_invalid_patch_is_a_tool_error_and_moves_nothing(repo: Repo) -> None:
    run_tool("patch", "--set", "goal=g", cwd=repo.path)
    before = repo.ref()

    async def session(client: ClientSession) -> Any:
        unknown = refusal(await client.call_tool("state_patch", {"ops": [{"op": "frobnicate"}]}))
        typed = refusal(
            await client.call_tool("state_patch", {"ops": [{"op": "set", "section": "goal"}]})
        )
        failed = refusal(
            await client.call_tool(
                "state_patch", {"ops": [{"op": "done", "step": 9, "verify": "v"}]}
            )
        )
        return unknown, typed, failed

    [(unknown, typed, failed)] = serve(repo.path, session)
    assert unknown["code"] == 64 and "unknown op 'frobnicate'" in unknown["error"]
    assert unknown["hint"].startswith("ops: set, add")
    assert typed["code"] == 64 and "'text' must be a string" in typed["error"]
    assert failed["code"] == 1
    assert repo.ref() == before


def test_a_secret_is_refused_with_its_hits_and_nothing_moves(repo: Repo) -> None:
    run_tool("patch", "--set", "goal=g", cwd=repo.path)
    before = repo.ref()

    async def session(client: ClientSession) -> Any:
        ops = [{"op": "add", "section": "key_data", "text": f"token {GITHUB}"}]
        return refusal(await client.call_tool("state_patch", {"ops": ops}))

    [refused] = serve(repo.path, session)
    assert refused["code"] == 1 and refused["hits"]
    assert GITHUB not in json.dumps(refused)  # the excerpt is masked, as in the CLI
    assert repo.ref() == before
    assert GITHUB not in show_goal(repo)


def test_two_clients_patching_at_once_lose_nothing(repo: Repo) -> None:
    run_tool("patch", "--set", "goal=g", cwd=repo.path)
    # Each client its own section (a section holds at most 5 lines): a write that overwrote
    # the other's snapshot instead of building on it would drop the other's lines.
    sections = {"left": "open_issues", "right": "failed_attempts"}

    def adder(who: str) -> Session:
        async def session(client: ClientSession) -> Any:
            for n in range(4):
                ops = [{"op": "add", "section": sections[who], "text": f"{who} {n} 中文|"}]
                answer(await client.call_tool("state_patch", {"ops": ops}))

        return session

    serve(repo.path, adder("left"), adder("right"))
    text = show_goal(repo)
    for who in sections:
        for n in range(4):
            assert f"- {who} {n} 中文|" in text
    assert len(repo.git("rev-list", "refs/agy/state").split()) == 9


def test_calls_sent_at_once_to_one_server_lose_nothing(repo: Repo) -> None:
    run_tool("patch", "--set", "goal=g", cwd=repo.path)

    async def session(client: ClientSession) -> Any:
        async def add(n: int) -> None:
            ops = [{"op": "add", "section": "key_data", "text": f"at once {n}"}]
            answer(await client.call_tool("state_patch", {"ops": ops}))

        async with anyio.create_task_group() as group:
            for n in range(5):
                group.start_soon(add, n)

    serve(repo.path, session)
    text = show_goal(repo)
    assert all(f"- at once {n}" in text for n in range(5))
    assert len(repo.git("rev-list", "refs/agy/state").split()) == 6


def test_every_call_reads_the_refs_afresh(repo: Repo) -> None:
    async def session(client: ClientSession) -> Any:
        answer(
            await client.call_tool(
                "state_patch", {"ops": [{"op": "set", "section": "goal", "text": "one"}]}
            )
        )
        first = answer(await client.call_tool("state_status", {}))
        # Another writer (the CLI) moves the ref between two calls of this server.
        await anyio.to_thread.run_sync(
            lambda: run_tool("patch", "--set", "goal=two", cwd=repo.path)
        )
        second = answer(await client.call_tool("state_show", {"section": "goal"}))
        log = answer(await client.call_tool("state_log", {}))
        return first, second, log

    [(first, second, log)] = serve(repo.path, session)
    assert second["lines"] == ["two"]
    assert second["commit"] == repo.ref() != first["tip"]
    assert log["snapshots"][0]["commit"] == repo.ref()
    assert len(log["snapshots"]) == 2


# ---- the other tools -----------------------------------------------------------------------


def test_decisions_phase_and_checkpoint_answer_as_their_commands(repo: Repo) -> None:
    run_tool("patch", "--set", "goal=g", cwd=repo.path)

    async def session(client: ClientSession) -> Any:
        made = answer(await client.call_tool("decide", {"type": "Rule", "text": "规则 | one"}))
        known = answer(
            await client.call_tool(
                "record_error", {"type": "T", "cause": "C", "fix": "F", "scope": "S"}
            )
        )
        listed = answer(await client.call_tool("decisions", {}))
        resource = await client.read_resource("agy://decisions")
        bad_type = refusal(await client.call_tool("decide", {"type": "Nope", "text": "x"}))
        shown = answer(await client.call_tool("phase", {}))
        moved = answer(await client.call_tool("phase", {"new": "planning"}))
        bad_phase = refusal(await client.call_tool("phase", {"new": "SLEEPING"}))
        tagged = answer(await client.call_tool("checkpoint", {"message": "mcp"}))
        return (
            made,
            known,
            listed,
            resource.contents[0].text,
            bad_type,
            shown,
            moved,
            bad_phase,
            tagged,
        )

    [(made, known, listed, resource, bad_type, shown, moved, bad_phase, tagged)] = serve(
        repo.path, session
    )
    cli = json.loads(run_tool("decisions", "--json", cwd=repo.path).stdout)
    assert listed == {"decisions": cli, "skipped": 0}
    assert json.loads(resource) == cli
    assert [row["id"] for row in cli] == [made["id"], known["id"]]
    assert cli[0]["text"] == "规则 | one" and made["created"] is True
    assert bad_type["code"] == 64
    assert shown["phase"] == "IDLE" and "PLANNING" in shown["legal"]
    assert moved["phase"] == "PLANNING" and moved["changed"] is True
    assert bad_phase["code"] == 64 and bad_phase["hint"].startswith("phases:")
    assert repo.git("tag", "-l", "checkpoint-*").strip() == tagged["name"]


def test_job_tools_answer_from_the_jobs_folder(repo: Repo) -> None:
    async def session(client: ClientSession) -> Any:
        pending = answer(await client.call_tool("job_pending", {}))
        every = answer(await client.call_tool("job_status", {}))
        missing = refusal(
            await client.call_tool("job_status", {"job_id": "j-20260101-000000-abcd"})
        )
        malformed = refusal(await client.call_tool("job_result", {"job_id": "nope"}))
        return pending, every, missing, malformed

    [(pending, every, missing, malformed)] = serve(repo.path, session)
    assert pending == {"jobs": []} and every == {"jobs": []}
    assert missing["code"] == 3
    assert malformed["code"] == 64 and malformed["hint"].startswith("job ids look like")


def test_outside_a_repository_each_call_says_so(tmp_path: Path) -> None:
    async def session(client: ClientSession) -> Any:
        return refusal(await client.call_tool("state_status", {}))

    [refused] = serve(tmp_path, session)
    assert refused["code"] == 6


def test_a_repo_that_is_not_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    done = run_tool("mcp", "--repo", str(tmp_path / "missing"), cwd=tmp_path)
    assert done.returncode == 64
    assert done.stderr.startswith("error: --repo ") and "Traceback" not in done.stderr


@pytest.mark.parametrize("limit", [-1])
def test_a_negative_log_limit_is_a_usage_error(repo: Repo, limit: int) -> None:
    async def session(client: ClientSession) -> Any:
        return refusal(await client.call_tool("state_log", {"limit": limit}))

    [refused] = serve(repo.path, session)
    assert refused["code"] == 64


def test_memory_add_then_search_finds_it(repo: Repo) -> None:
    async def session(client: ClientSession) -> Any:
        added = answer(
            await client.call_tool(
                "memory_add", {"layer": "knowledge", "text": "部署 需要 先跑 迁移 | migrate first"}
            )
        )
        found = answer(await client.call_tool("memory_search", {"query": "迁移"}))
        bad = refusal(await client.call_tool("memory_add", {"layer": "nowhere", "text": "x"}))
        logged = answer(
            await client.call_tool(
                "memory_session", {"summary": "MCP 会话", "next_steps": ["下一步 | next"]}
            )
        )
        return added, found, bad, logged

    [(added, found, bad, logged)] = serve(repo.path, session)
    assert added["added"] is True
    assert [hit["path"] for hit in found["hits"]] == [added["path"]]
    assert bad["code"] == 64
    assert logged["project"] == repo.path.name


def test_arguments_that_do_not_fit_the_schema_are_usage_errors(repo: Repo) -> None:
    async def session(client: ClientSession) -> Any:
        wrong_type = refusal(await client.call_tool("state_patch", {"ops": "set goal"}))
        missing = refusal(await client.call_tool("decide", {"type": "Rule"}))
        empty = refusal(await client.call_tool("state_patch", {"ops": []}))
        return wrong_type, missing, empty

    [(wrong_type, missing, empty)] = serve(repo.path, session)
    assert wrong_type == {
        "error": "state_patch: ops: input should be a valid list",
        "code": 64,
        "hint": "the tool's input schema lists state_patch's arguments",
    }
    assert missing["code"] == 64 and missing["error"] == "decide: text: field required"
    assert empty["code"] == 64
    assert repo.ref() is None


def test_without_the_sdk_mcp_and_install_mcp_say_what_to_install(
    repo: Repo, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if the `mcp` extra were not installed: the SDK cannot be imported.
    import gitstate.mcp

    monkeypatch.delitem(sys.modules, "gitstate.mcp.server", raising=False)
    monkeypatch.delattr(gitstate.mcp, "server", raising=False)
    for name in [n for n in sys.modules if n == "mcp" or n.startswith("mcp.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "mcp", None)
    served = cli("mcp")
    assert served.exit_code == 1
    assert served.stderr.splitlines() == [
        "error: git agy-state mcp needs the MCP SDK, which is not installed",
        "hint: pip install 'git-agy-state[mcp]' (or pipx inject git-agy-state mcp)",
    ]
    installed = cli("install", "--agent", "claude", "--mcp")
    assert installed.exit_code == 1
    assert "needs the MCP SDK" in installed.stderr and "Traceback" not in installed.stderr
    assert not (repo.path / ".mcp.json").exists()
