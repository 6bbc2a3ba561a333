"""Provider-neutral conversation records: what we send to a model and what comes back.

Each provider maps these to and from its own wire format; nothing above the provider layer
sees an SDK type.
"""

from __future__ import annotations

import json
import uuid
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Role(str, Enum):
    """Who a message is from."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class ModelStopReason(str, Enum):
    """Why the model stopped producing output."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    REFUSAL = "refusal"
    OTHER = "other"


class ToolChoice(str, Enum):
    """Whether the model may, must, or must not call a tool in this turn."""

    AUTO = "auto"
    REQUIRED = "required"
    NONE = "none"


class ToolCall(BaseModel):
    """One tool call the model asked for."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=lambda: f"call_{uuid.uuid4().hex[:16]}")
    """The provider's id for this call; the matching ToolResult carries it back."""
    name: str
    """The tool's name, as in its ToolDef."""
    arguments: dict[str, Any] | str
    """The decoded JSON object, or the raw text when it did not decode to an object."""
    parse_error: str | None = None
    """Why `arguments` is raw text (invalid JSON, not an object); None when it is a dict."""

    @model_validator(mode="after")
    def _error_iff_raw(self) -> ToolCall:
        if isinstance(self.arguments, str) != (self.parse_error is not None):
            raise ValueError("parse_error must be set exactly when arguments is the raw string")
        return self

    @classmethod
    def from_json(cls, raw: str, *, name: str, id: str | None = None) -> ToolCall:
        """Decode the arguments a model produced; bad JSON becomes a parse error, not an exception."""
        ident = {"id": id} if id else {}
        try:
            value = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return cls(name=name, arguments=raw, parse_error=f"invalid JSON: {exc}", **ident)
        if not isinstance(value, dict):
            kind = type(value).__name__
            return cls(name=name, arguments=raw, parse_error=f"expected a JSON object, got {kind}", **ident)
        return cls(name=name, arguments=value, **ident)

    def arguments_json(self) -> str:
        """The arguments as the JSON text a provider expects (raw text is sent back unchanged)."""
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


class ToolResult(BaseModel):
    """What running a tool call returned, sent back to the model."""

    model_config = ConfigDict(frozen=True)

    tool_call_id: str
    """The `id` of the ToolCall this answers."""
    content: str
    """The tool's output (usually JSON text), or the error the model should act on."""
    is_error: bool = False
    """True when the call failed (bad arguments, a skill error)."""


class Message(BaseModel):
    """One turn of a conversation."""

    model_config = ConfigDict(frozen=True)

    role: Role
    """Who speaks."""
    content: str = ""
    """The text of the turn (may be empty for a turn that only calls tools)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls the assistant made in this turn (assistant only)."""
    tool_results: tuple[ToolResult, ...] = ()
    """Results of earlier tool calls (tool role only)."""

    @model_validator(mode="after")
    def _parts_match_role(self) -> Message:
        if self.tool_calls and self.role is not Role.ASSISTANT:
            raise ValueError(f"only assistant messages carry tool_calls, not {self.role.value}")
        if self.tool_results and self.role is not Role.TOOL:
            raise ValueError(f"only tool messages carry tool_results, not {self.role.value}")
        if self.role is Role.TOOL and not self.tool_results:
            raise ValueError("a tool message needs at least one tool result")
        return self

    @classmethod
    def system(cls, text: str) -> Message:
        return cls(role=Role.SYSTEM, content=text)

    @classmethod
    def user(cls, text: str) -> Message:
        return cls(role=Role.USER, content=text)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: tuple[ToolCall, ...] | list[ToolCall] = ()) -> Message:
        return cls(role=Role.ASSISTANT, content=text, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, *results: ToolResult) -> Message:
        return cls(role=Role.TOOL, tool_results=results)


class Usage(BaseModel):
    """Tokens a call used and what they cost."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    """Prompt tokens billed."""
    output_tokens: int = 0
    """Completion tokens billed."""
    cost_usd: float = 0.0
    """Cost from the price table; 0 when the price is unknown."""
    price_known: bool = True
    """False when the model is not in the price table, so `cost_usd` is not a real cost."""


class LLMResponse(BaseModel):
    """The model's answer to one `complete` call."""

    model_config = ConfigDict(frozen=True)

    message: Message
    """The assistant turn: text and/or tool calls."""
    stop_reason: ModelStopReason
    """Why generation stopped."""
    usage: Usage = Usage()
    """Tokens and cost of this call."""
    model: str
    """The model that answered, as the provider named it."""
    latency_s: float = 0.0
    """Wall time of the successful attempt, in seconds."""
    attempts: int = 1
    """How many HTTP attempts the call took (retries included)."""
