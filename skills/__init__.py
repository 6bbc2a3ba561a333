"""Typed tools for agents and people: one definition -> OpenAI tools, Anthropic tools, MCP, CLI.

A skill is a typed function `(ctx: SkillContext, args: <SkillInput>) -> <SkillOutput>` with
a docstring. Register it in a `SkillRegistry`; `builtin_registry()` holds the compute and
tracking skills, and other packages `include` it in their own registries.
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
from skills.logmetrics import (
    DEFAULT_PATTERN,
    STEP_PATTERN,
    MetricPoint,
    ParseResult,
    ParserState,
    log_points,
    parse_metrics,
    sync_log_metrics,
)
from skills.models import ErrorCode, SkillError, SkillFailure, SkillInput, SkillOutput
from skills.registry import MAX_ARGUMENT_DEPTH, Skill, SkillRegistry, validation_error
from skills.schema import input_schema, strict_schema
from skills.tooldef import READ_ONLY, ToolDef, ToolHints
from skills.tracking import (
    EXPERIMENT_LABEL,
    JOB_TAG,
    RUN_LABEL,
    RunBinding,
    TrackingConfig,
    create_job_run,
    ensure_experiment,
    finish_run,
    mlflow_client,
    resolve_tracking,
    tag_run_with_job,
)

__all__ = [
    "BUILTIN_SKILLS",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_PATTERN",
    "EXPERIMENT_LABEL",
    "JOB_TAG",
    "MAX_ARGUMENT_DEPTH",
    "READ_ONLY",
    "RUN_LABEL",
    "STEP_PATTERN",
    "ErrorCode",
    "MetricPoint",
    "ParseResult",
    "ParserState",
    "RunBinding",
    "Skill",
    "SkillContext",
    "SkillError",
    "SkillFailure",
    "SkillInput",
    "SkillOutput",
    "SkillRegistry",
    "ToolDef",
    "ToolHints",
    "TrackingConfig",
    "anthropic_tool",
    "anthropic_tools",
    "bound_output",
    "builtin_registry",
    "create_job_run",
    "cut_marker",
    "cut_middle",
    "ensure_experiment",
    "finish_run",
    "input_schema",
    "log_points",
    "mcp_annotations",
    "mcp_tool",
    "mcp_tools",
    "mlflow_client",
    "openai_tool",
    "openai_tools",
    "output_size",
    "parse_metrics",
    "resolve_tracking",
    "strict_schema",
    "sync_log_metrics",
    "tag_run_with_job",
    "validation_error",
]
