"""`git agy-state mcp`: the tool table (tools.py) served over stdio by the official MCP SDK
(`mcp` 2.x, the `mcp` extra; docs/mcp.md).

Each tool answers with its command's `--json` object as structured content (and the same JSON
as a text block, for clients that show only text). A failure is a tool error (isError) whose
structured content is the error object every `--json` failure prints, from the one error map
(gitstate/error_map.py): `{"error", "code", "hint"?, "errors"?, "hits"?}`. The calls of one
server run one at a time: the SDK runs plain functions in worker threads, and the use cases'
locks guard processes, so two servers (two agents) are as safe as two CLI processes and one
server never races itself.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from gitstate import __version__, error_map
from gitstate.errors import UsageError
from gitstate.mcp import tools
from gitstate.mcp.ops_schema import ops_schema

NAME = "agy-state"
INSTRUCTIONS = (
    "The agent's working memory, kept in git (git agy-state). Read the state with state_show "
    "or the agy://state resource; change it with state_patch (ops, texts as they are: no "
    "shell quoting); record decisions with decide. Each tool returns the JSON object of its "
    "`git agy-state … --json` command; a failure is a tool error carrying error, hint, code."
)

_one_at_a_time = threading.Lock()


def error_result(exc: BaseException) -> CallToolResult:
    """`exc` as a tool error carrying the error map's `--json` object."""
    _code, body = error_map.as_json(exc)
    text = json.dumps(body, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body, is_error=True
    )


class _Tool(Tool):
    """A tool whose arguments, when they do not fit its schema (a wrong type, a missing one),
    are a usage error like any other (exit code 64's object), not the SDK's bare text."""

    async def run(self, arguments: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            return error_result(_usage(self.name, exc))
        return await super().run(arguments, *args, **kwargs)


def _usage(name: str, exc: ValidationError) -> UsageError:
    problems = [
        f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg'].lower()}"
        for error in exc.errors()
    ]
    return UsageError(
        f"{name}: " + "; ".join(problems[:5]),
        hint=f"the tool's input schema lists {name}'s arguments",
    )


def _guarded(fn: Callable[..., dict[str, Any]]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with _one_at_a_time:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # every failure is an answer, never a dead server
                return error_result(exc)

    return call


def _tool(fn: Callable[..., dict[str, Any]]) -> Tool:
    name = fn.__name__
    annotations = ToolAnnotations(
        read_only_hint=name in tools.READ_ONLY, destructive_hint=False, open_world_hint=False
    )
    tool = _Tool.from_function(
        _guarded(fn),
        name=name,
        description=" ".join((fn.__doc__ or "").split()),
        annotations=annotations,
    )
    if name == "state_patch":
        # The signature says only "a list of objects"; the ops' own schema says which.
        tool.parameters["properties"]["ops"] = ops_schema()
    return tool


def build() -> MCPServer:
    server = MCPServer(
        NAME,
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=[_tool(fn) for fn in tools.TOOLS],
        log_level="WARNING",
    )

    @server.resource(
        "agy://state",
        name="STATE.md",
        description="The state's newest snapshot (refs/agy/state), as git agy-state show prints it.",
        mime_type="text/markdown",
    )
    def state_md() -> str:
        return tools.state_text()

    @server.resource(
        "agy://decisions",
        name="decisions",
        description="The active decisions and known errors, as git agy-state decisions --json.",
        mime_type="application/json",
    )
    def decisions_json() -> str:
        return tools.active_decisions()

    return server


def serve() -> None:
    """Serve on stdin/stdout until the client closes them."""
    build().run("stdio")
