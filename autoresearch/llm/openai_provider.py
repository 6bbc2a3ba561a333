"""OpenAI Chat Completions with tools, through the official `openai` SDK.

Also any OpenAI-compatible server (vLLM, Ollama, LM Studio) through `base_url` (or the
SDK's OPENAI_BASE_URL), which ends in `/v1`.
"""

from __future__ import annotations

from typing import Any

from autoresearch.llm.messages import Message, Role, ModelStopReason, ToolCall, ToolChoice
from autoresearch.llm.provider import SDKProvider
from skills.exporters import openai_tool
from skills.tooldef import ToolDef

_STOP = {
    "stop": ModelStopReason.END_TURN,
    "tool_calls": ModelStopReason.TOOL_USE,
    "function_call": ModelStopReason.TOOL_USE,
    "length": ModelStopReason.MAX_TOKENS,
    "content_filter": ModelStopReason.REFUSAL,
}


def token_limit_param(base_url: str) -> str:
    """api.openai.com wants `max_completion_tokens` (its reasoning models refuse `max_tokens`);
    compatible servers (vLLM, Ollama, LM Studio, llama.cpp) all accept `max_tokens`."""
    return "max_completion_tokens" if "api.openai.com" in base_url else "max_tokens"


def openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages as Chat Completions messages (one `tool` message per result)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role is Role.TOOL:
            for r in m.tool_results:
                content = f"ERROR: {r.content}" if r.is_error else r.content
                out.append({"role": "tool", "tool_call_id": r.tool_call_id, "content": content})
        elif m.role is Role.ASSISTANT and m.tool_calls:
            calls = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json()}}
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": m.content or None, "tool_calls": calls})
        else:
            out.append({"role": m.role.value, "content": m.content})
    return out


def parse_openai_completion(completion: Any) -> tuple[Message, ModelStopReason, str, int, int]:
    """A ChatCompletion as (message, stop reason, model, input tokens, output tokens)."""
    choice = completion.choices[0]
    calls = [
        ToolCall.from_json(tc.function.arguments or "", name=tc.function.name, id=tc.id or None)
        for tc in choice.message.tool_calls or []
        if getattr(tc, "function", None) is not None
    ]
    # Some compatible servers say "stop" while returning tool calls.
    stop = ModelStopReason.TOOL_USE if calls else _STOP.get(choice.finish_reason or "", ModelStopReason.OTHER)
    usage = completion.usage
    return (
        Message.assistant(choice.message.content or "", calls),
        stop,
        completion.model,
        (usage.prompt_tokens or 0) if usage else 0,
        (usage.completion_tokens or 0) if usage else 0,
    )


class OpenAIProvider(SDKProvider):
    """A model behind the OpenAI Chat Completions API (or a compatible server)."""

    kind = "openai"

    def _client_for(self, api_key: str) -> tuple[Any, type[Exception], type[Exception]]:
        import openai

        client = openai.OpenAI(
            api_key=api_key, base_url=self.base_url, max_retries=0, timeout=self._retry.request_timeout_s
        )
        return client, openai.APIStatusError, openai.APIConnectionError

    def _send(
        self, messages: list[Message], tools: list[ToolDef], tool_choice: ToolChoice, max_tokens: int
    ) -> Any:
        limit = token_limit_param(str(self._client.base_url))
        kwargs: dict[str, Any] = {"model": self.model, "messages": openai_messages(messages), limit: max_tokens}
        if tools:
            kwargs["tools"] = [openai_tool(t) for t in tools]
            kwargs["tool_choice"] = tool_choice.value
        return self._client.chat.completions.create(**kwargs)

    def _parse(self, raw: Any) -> tuple[Message, ModelStopReason, str, int, int]:
        return parse_openai_completion(raw)
