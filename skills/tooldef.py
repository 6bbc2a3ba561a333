"""The provider-neutral definition of a tool, generated once per skill.

Each consumer (OpenAI, Anthropic, MCP, the CLI) maps this record to its own format in
one small function of its own.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ToolDef(BaseModel):
    """A tool as a model sees it: a name, what it does, and a JSON Schema for its input."""

    model_config = ConfigDict(frozen=True)

    name: str
    """snake_case, unique in a registry (e.g. `submit_job`)."""
    description: str
    """What the tool does and when to use it (the skill's docstring)."""
    parameters: dict[str, Any]
    """JSON Schema (draft 2020-12 subset) of the input object."""
    strict: bool = False
    """The schema meets OpenAI's strict-mode rules (all properties required,
    additionalProperties false), so it may be sent with strict=True."""
