"""Anthropic Messages with tools, through the official `anthropic` SDK.

`base_url` has no `/v1` (the SDK adds it). System messages go to the `system` parameter;
tool results travel as `tool_result` blocks in a user turn.
"""

from __future__ import annotations

import json
from typing import Any

from autoresearch.llm.messages import Message, Role, ModelStopReason, ToolCall, ToolChoice
from autoresearch.llm.provider import SDKProvider
from skills.exporters import anthropic_tool
from skills.tooldef import ToolDef

_STOP = {
    "end_turn": ModelStopReason.END_TURN,
    "tool_use": ModelStopReason.TOOL_USE,
    "max_tokens": ModelStopReason.MAX_TOKENS,
    "model_context_window_exceeded": ModelStopReason.MAX_TOKENS,
    "stop_sequence": ModelStopReason.STOP_SEQUENCE,
    "refusal": ModelStopReason.REFUSAL,
}
_CHOICE = {ToolChoice.AUTO: "auto", ToolChoice.REQUIRED: "any", ToolChoice.NONE: "none"}


def _blocks(m: Message) -> list[dict[str, Any]]:
    if m.role is Role.TOOL:
        return [
            {"type": "tool_result", "tool_use_id": r.tool_call_id, "content": r.content, "is_error": r.is_error}
            for r in m.tool_results
        ]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    for c in m.tool_calls:
        # A call whose arguments did not parse is replayed with its raw text kept visible.
        arguments = c.arguments if isinstance(c.arguments, dict) else {"raw_arguments": c.arguments}
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments})
    return blocks


def anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system prompt, messages): consecutive turns of one role are merged into one."""
    system = "\n\n".join(m.content for m in messages if m.role is Role.SYSTEM)
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role is Role.SYSTEM:
            continue
        role = "assistant" if m.role is Role.ASSISTANT else "user"
        blocks = _blocks(m)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return system, out


def _tool_call(block: Any) -> ToolCall:
    value = block.input
    if isinstance(value, dict):
        return ToolCall(id=block.id, name=block.name, arguments=value)
    raw = value if isinstance(value, str) else json.dumps(value)
    return ToolCall.from_json(raw, name=block.name, id=block.id)


def parse_anthropic_message(msg: Any) -> tuple[Message, ModelStopReason, str, int, int]:
    """A Messages API response as (message, stop reason, model, input tokens, output tokens)."""
    text = "".join(b.text for b in msg.content if b.type == "text")
    calls = [_tool_call(b) for b in msg.content if b.type == "tool_use"]
    stop = _STOP.get(msg.stop_reason or "", ModelStopReason.OTHER)
    return Message.assistant(text, calls), stop, msg.model, msg.usage.input_tokens, msg.usage.output_tokens


class AnthropicProvider(SDKProvider):
    """A Claude model behind the Anthropic Messages API."""

    kind = "anthropic"

    def _client_for(self, api_key: str) -> tuple[Any, type[Exception], type[Exception]]:
        import anthropic

        client = anthropic.Anthropic(
            api_key=api_key, base_url=self.base_url, max_retries=0, timeout=self._retry.request_timeout_s
        )
        return client, anthropic.APIStatusError, anthropic.APIConnectionError

    def _send(
        self, messages: list[Message], tools: list[ToolDef], tool_choice: ToolChoice, max_tokens: int
    ) -> Any:
        system, wire = anthropic_messages(messages)
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": wire}
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = [anthropic_tool(t) for t in tools]
            kwargs["tool_choice"] = {"type": _CHOICE[tool_choice]}
        return self._client.messages.create(**kwargs)

    def _parse(self, raw: Any) -> tuple[Message, ModelStopReason, str, int, int]:
        return parse_anthropic_message(raw)
