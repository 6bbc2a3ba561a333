"""The provider-neutral definition of a tool, generated once per skill.

Each consumer (OpenAI, Anthropic, MCP, the CLI) maps this record to its own format in
one small function of `skills.exporters`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ToolHints(BaseModel):
    """What calling a tool does to the world; exported as MCP tool annotations."""

    model_config = ConfigDict(frozen=True)

    read_only: bool = False
    """The tool changes nothing (MCP `readOnlyHint`)."""
    destructive: bool = True
    """A call may undo or stop existing work (MCP `destructiveHint`); meaningless when read_only."""
    idempotent: bool = False
    """Calling again with the same arguments has no further effect (MCP `idempotentHint`)."""


READ_ONLY = ToolHints(read_only=True, destructive=False, idempotent=True)
"""The hints of a tool that only reads."""


class ToolDef(BaseModel):
    """A tool as a model sees it: a name, what it does, and a JSON Schema for its input."""

    model_config = ConfigDict(frozen=True)

    name: str
    """snake_case, unique in a registry (e.g. `submit_job`)."""
    description: str
    """What the tool does and when to use it (the skill's docstring)."""
    parameters: dict[str, Any]
    """Plain JSON Schema (draft 2020-12 subset) of the input object: optional fields are optional.
    What MCP and Anthropic receive."""
    strict_parameters: dict[str, Any] | None = None
    """The same schema in OpenAI's strict-mode form (every property required, optional ones
    nullable, additionalProperties false); None where the schema cannot be made strict."""
    hints: ToolHints = ToolHints()
    """Whether a call reads, changes or stops work (MCP annotations)."""

    @property
    def strict(self) -> bool:
        """OpenAI may be sent this tool with strict=True (a strict form exists)."""
        return self.strict_parameters is not None
