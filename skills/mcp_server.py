"""An MCP server exposing a skill registry, on the official SDK's `MCPServer`.

Tools are registered from each skill's `ToolDef`, not from a Python signature: the input
schema is ours, and arguments reach `SkillRegistry.call` unvalidated, so a bad argument
comes back as our typed `SkillError` (with `isError: true`) rather than an SDK message.
Skills are blocking functions; each call runs in a worker thread.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, TextContent
from pydantic import ConfigDict

from skills.context import SkillContext
from skills.models import SkillError
from skills.registry import Skill, SkillRegistry

INSTRUCTIONS = (
    "Run and watch training jobs on the autoresearch compute layer. Every tool returns JSON; "
    "failures come back as {error, message, field} with isError set, and the message says what to do next. "
    "Outputs are bounded: when `truncated` is true, `truncation` says what was cut and how to page."
)


class _RawArguments(ArgModelBase):
    """Passes the call's arguments through untouched; the registry validates them."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def build_mcp_server(registry: SkillRegistry, ctx: SkillContext, name: str = "autoresearch") -> MCPServer:
    """An `MCPServer` with one tool per skill of `registry`, all calls sharing `ctx`."""
    tools = [_tool(skill, registry, ctx) for skill in registry]
    return MCPServer(name=name, instructions=INSTRUCTIONS, tools=tools)


def _tool(skill: Skill, registry: SkillRegistry, ctx: SkillContext) -> Tool:
    async def run(arguments: dict[str, Any]) -> CallToolResult:
        output = await anyio.to_thread.run_sync(partial(registry.call, skill.name, arguments, ctx))
        data = output.model_dump(mode="json")
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(data))],
            structured_content=data,
            is_error=isinstance(output, SkillError),
        )

    tooldef = skill.tooldef
    output_schema = skill.output_model.model_json_schema()
    return Tool(
        fn=run,
        name=tooldef.name,
        description=tooldef.description,
        parameters=tooldef.parameters,
        fn_metadata=FuncMetadata(arg_model=_RawArguments, output_schema=output_schema),
        is_async=True,
    )
