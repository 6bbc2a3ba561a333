"""The one tool exporter: a small mapping function per consumer, from the neutral `ToolDef`.

Rules: only OpenAI gets the strict-mode schema (with `strict: true`, and only where one
exists); Anthropic and MCP get the plain JSON Schema, in which optional fields are optional.
The LLM providers (autoresearch/llm) and the MCP server use these functions, nothing else.
"""

from __future__ import annotations

from typing import Any

from skills.tooldef import ToolDef


def openai_tool(tool: ToolDef) -> dict[str, Any]:
    """An OpenAI Chat Completions tool (`ChatCompletionToolParam`), strict where the schema allows."""
    function: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if tool.strict_parameters is not None:
        function["parameters"] = tool.strict_parameters
        function["strict"] = True
    else:
        function["parameters"] = tool.parameters
    return {"type": "function", "function": function}


def anthropic_tool(tool: ToolDef) -> dict[str, Any]:
    """An Anthropic Messages tool (`ToolParam`), with the plain schema."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def mcp_annotations(tool: ToolDef) -> dict[str, Any]:
    """MCP tool annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`)."""
    hints = tool.hints
    return {
        "readOnlyHint": hints.read_only,
        "destructiveHint": hints.destructive and not hints.read_only,
        "idempotentHint": hints.idempotent,
    }


def mcp_tool(tool: ToolDef) -> dict[str, Any]:
    """An MCP `Tool` (tools/list entry, without outputSchema), with the plain schema."""
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.parameters,
        "annotations": mcp_annotations(tool),
    }


def openai_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    return [openai_tool(tool) for tool in tools]


def anthropic_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    return [anthropic_tool(tool) for tool in tools]


def mcp_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    return [mcp_tool(tool) for tool in tools]
