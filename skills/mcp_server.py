"""An MCP server exposing a skill registry, on the official SDK's `MCPServer`.

Tools are registered from each skill's `ToolDef`, not from a Python signature: the input
schema is ours, and arguments reach `SkillRegistry.call` unvalidated, so a bad argument
comes back as our typed `SkillError` rather than an SDK message.

What clients rely on (the official TypeScript SDK validates structured content against the
tool's outputSchema whenever it is present, errors included):
- success: `structuredContent` is the skill's output, its JSON also the text content;
- failure: `isError: true`, the error JSON as text content and no `structuredContent`;
- input schemas are the plain JSON Schema (optional fields optional), never OpenAI's strict form;
- every tool carries `readOnlyHint`, `destructiveHint` and `idempotentHint`;
- `serverInfo` has our name and the installed package version.
Skills are blocking functions; each call runs in a worker thread.
"""

from __future__ import annotations

import json
from functools import partial
from importlib import metadata
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from skills.context import SkillContext
from skills.exporters import mcp_annotations
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
    return MCPServer(name=name, version=server_version(), instructions=INSTRUCTIONS, tools=tools)


def server_version() -> str:
    """The installed autoresearch version (`serverInfo.version`); "0+unknown" from a bare checkout."""
    try:
        return metadata.version("autoresearch")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _tool(skill: Skill, registry: SkillRegistry, ctx: SkillContext) -> Tool:
    async def run(arguments: dict[str, Any]) -> CallToolResult:
        output = await anyio.to_thread.run_sync(partial(registry.call, skill.name, arguments, ctx))
        data = output.model_dump(mode="json")
        text = [TextContent(type="text", text=json.dumps(data))]
        if isinstance(output, SkillError):  # no structuredContent: it would not match the outputSchema
            return CallToolResult(content=text, is_error=True)
        return CallToolResult(content=text, structured_content=data, is_error=False)

    tooldef = skill.tooldef
    output_schema = skill.output_model.model_json_schema()
    return Tool(
        fn=run,
        name=tooldef.name,
        description=tooldef.description,
        parameters=tooldef.parameters,
        fn_metadata=FuncMetadata(arg_model=_RawArguments, output_schema=output_schema),
        is_async=True,
        annotations=ToolAnnotations.model_validate(mcp_annotations(tooldef)),
    )
