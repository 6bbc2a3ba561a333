"""The scripted model: a function or canned turns as a Provider, also served over the wire."""

from __future__ import annotations

import pytest

from autoresearch.llm import (
    AnthropicProvider,
    FakeLLMServer,
    LLMError,
    Message,
    OpenAIProvider,
    Provider,
    Role,
    ScriptedProvider,
    ModelStopReason,
    ToolCall,
    ToolResult,
)
from skills.tooldef import ToolDef

from tests.autoresearch.llm.conftest import FAST, KEY

LOOKUP = ToolDef(
    name="lookup", description="Look a thing up.", parameters={"type": "object", "properties": {"q": {"type": "string"}}}
)


def test_a_function_decides_each_turn_from_messages_and_tools():
    def model(messages, tools):
        if messages[-1].role is Role.TOOL:
            return f"answer: {messages[-1].tool_results[0].content}"
        return ToolCall(name=tools[0].name, arguments={"q": messages[-1].content})

    provider = ScriptedProvider(model)
    assert isinstance(provider, Provider)
    first = provider.complete([Message.user("lr?")], [LOOKUP])
    assert first.stop_reason is ModelStopReason.TOOL_USE and first.message.tool_calls[0].arguments == {"q": "lr?"}
    assert first.usage.input_tokens >= 1 and first.usage.cost_usd == 0
    call = first.message.tool_calls[0]
    final = provider.complete(
        [Message.user("lr?"), first.message, Message.tool(ToolResult(tool_call_id=call.id, content="3e-4"))], [LOOKUP]
    )
    assert final.message.content == "answer: 3e-4" and final.stop_reason is ModelStopReason.END_TURN
    assert len(provider.calls) == 2


def test_canned_turns_play_in_order_then_run_out_with_a_clear_error():
    provider = ScriptedProvider.from_turns(
        [
            [ToolCall(name="lookup", arguments={"q": "a"}), ToolCall(name="lookup", arguments={"q": "b"})],
            Message.assistant("thinking", [ToolCall(name="lookup", arguments={})]),
            "done",
        ]
    )
    assert len(provider.complete([Message.user("go")]).message.tool_calls) == 2
    assert provider.complete([Message.user("go")]).message.content == "thinking"
    assert provider.complete([Message.user("go")]).message.content == "done"
    with pytest.raises(LLMError, match="ran out of turns after 3"):
        provider.complete([Message.user("go")])


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_canned_turns_served_over_the_wire_to_the_real_sdk(kind):
    turns = ScriptedProvider.from_turns([ToolCall(name="lookup", arguments={"q": "best lr"}), "use 3e-4"])
    with FakeLLMServer.replaying(turns, api_key=KEY) as server:
        if kind == "openai":
            provider = OpenAIProvider("m", api_key=KEY, base_url=server.openai_base_url, retry=FAST)
        else:
            provider = AnthropicProvider("m", api_key=KEY, base_url=server.anthropic_base_url, retry=FAST)
        first = provider.complete([Message.user("what lr?")], [LOOKUP])
        call = first.message.tool_calls[0]
        second = provider.complete(
            [Message.user("what lr?"), first.message, Message.tool(ToolResult(tool_call_id=call.id, content="3e-4"))],
            [LOOKUP],
        )
    assert call.arguments == {"q": "best lr"} and second.message.content == "use 3e-4"
    # The scripted model saw the conversation as decoded by the server, tool result included.
    assert turns.calls[1][-1].tool_results[0].content == "3e-4"
