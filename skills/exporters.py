"""One small mapping function per consumer, from the provider-neutral `ToolDef`."""

from __future__ import annotations

from typing import Any

from skills.tooldef import ToolDef


def openai_tool(tool: ToolDef) -> dict[str, Any]:
    """An OpenAI Chat Completions tool (`ChatCompletionToolParam`), strict where the schema allows."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": tool.strict,
        },
    }


def anthropic_tool(tool: ToolDef) -> dict[str, Any]:
    """An Anthropic Messages tool (`ToolParam`)."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def openai_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    return [openai_tool(tool) for tool in tools]


def anthropic_tools(tools: list[ToolDef]) -> list[dict[str, Any]]:
    return [anthropic_tool(tool) for tool in tools]
