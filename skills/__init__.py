"""Typed tools for agents and people: one definition -> OpenAI tools, Anthropic tools, MCP, CLI.

A skill is a typed function `(ctx: SkillContext, args: <SkillInput>) -> <SkillOutput>` with
a docstring. Register it in a `SkillRegistry`; `builtin_registry()` holds the compute and
tracking skills, and other packages `include` it in their own registries. The MLflow binding,
log parsing and tag names live in the `tracking` package, below this one.
"""

from skills.bounds import bound_output, cut_marker, cut_middle, output_size
from skills.builtin import BUILTIN_SKILLS, builtin_registry
from skills.context import DEFAULT_MAX_OUTPUT_BYTES, SkillContext
from skills.exporters import (
    anthropic_tool,
    anthropic_tools,
    mcp_annotations,
    mcp_tool,
    mcp_tools,
    openai_tool,
    openai_tools,
)
from skills.models import MAX_INDEX, ErrorCode, Index, SkillError, SkillFailure, SkillInput, SkillOutput
from skills.registry import MAX_ARGUMENT_DEPTH, Skill, SkillRegistry, validation_error
from skills.schema import input_schema, strict_schema
from skills.tooldef import READ_ONLY, ToolDef, ToolHints

__all__ = [
    "BUILTIN_SKILLS",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "MAX_ARGUMENT_DEPTH",
    "MAX_INDEX",
    "READ_ONLY",
    "ErrorCode",
    "Index",
    "Skill",
    "SkillContext",
    "SkillError",
    "SkillFailure",
    "SkillInput",
    "SkillOutput",
    "SkillRegistry",
    "ToolDef",
    "ToolHints",
    "anthropic_tool",
    "anthropic_tools",
    "bound_output",
    "builtin_registry",
    "cut_marker",
    "cut_middle",
    "input_schema",
    "mcp_annotations",
    "mcp_tool",
    "mcp_tools",
    "openai_tool",
    "openai_tools",
    "output_size",
    "strict_schema",
    "validation_error",
]
