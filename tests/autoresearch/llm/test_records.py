"""Messages, tool calls, prices and retry-after parsing: the pure parts."""

from __future__ import annotations

from datetime import datetime, UTC

import pytest
from pydantic import ValidationError

from autoresearch.llm import (
    DEFAULT_PRICES,
    Message,
    ModelPrice,
    ToolCall,
    ToolResult,
    anthropic_tool,
    openai_tool,
    parse_retry_after,
)
from autoresearch.llm.anthropic_provider import anthropic_messages
from autoresearch.llm.openai_provider import openai_messages
from skills.tooldef import ToolDef


@pytest.mark.parametrize(
    ("raw", "expected", "error"),
    [
        ('{"lr": 0.1, "opt": {"name": "adam"}}', {"lr": 0.1, "opt": {"name": "adam"}}, None),
        ("", {}, None),
        ('{"lr": 0.1', None, "invalid JSON"),
        ("[1, 2]", None, "expected a JSON object, got list"),
        ('"text"', None, "expected a JSON object, got str"),
    ],
)
def test_tool_call_from_json(raw, expected, error):
    call = ToolCall.from_json(raw, name="t", id="c1")
    assert call.id == "c1"
    if error is None:
        assert call.arguments == expected and call.parse_error is None
    else:
        assert call.arguments == raw and error in call.parse_error
        assert call.arguments_json() == raw  # sent back to the model unchanged


def test_tool_call_parse_error_must_match_raw_arguments():
    with pytest.raises(ValidationError, match="parse_error"):
        ToolCall(name="t", arguments="{bad")
    with pytest.raises(ValidationError, match="parse_error"):
        ToolCall(name="t", arguments={}, parse_error="x")


def test_messages_refuse_parts_that_do_not_fit_their_role():
    with pytest.raises(ValidationError, match="only assistant"):
        Message(role="user", tool_calls=[ToolCall(name="t", arguments={})])
    with pytest.raises(ValidationError, match="at least one tool result"):
        Message(role="tool")
    msg = Message.assistant("hi")
    with pytest.raises(ValidationError):
        msg.content = "changed"  # frozen


def test_anthropic_mapping_merges_consecutive_user_turns_and_lifts_the_system_prompt():
    call = ToolCall(id="t1", name="f", arguments={"a": 1})
    system, wire = anthropic_messages(
        [
            Message.system("rules"),
            Message.user("go"),
            Message.assistant("calling", [call]),
            Message.tool(ToolResult(tool_call_id="t1", content="done")),
            Message.user("and now?"),
        ]
    )
    assert system == "rules"
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    assert [b["type"] for b in wire[2]["content"]] == ["tool_result", "text"]


def test_openai_mapping_replays_raw_arguments_and_one_message_per_result():
    bad = ToolCall.from_json('{"a": ', name="f", id="t1")
    wire = openai_messages(
        [
            Message.assistant(tool_calls=[bad, ToolCall(id="t2", name="f", arguments={})]),
            Message.tool(ToolResult(tool_call_id="t1", content="x"), ToolResult(tool_call_id="t2", content="y")),
        ]
    )
    assert wire[0]["content"] is None and wire[0]["tool_calls"][0]["function"]["arguments"] == '{"a": '
    assert [(m["role"], m["tool_call_id"]) for m in wire[1:]] == [("tool", "t1"), ("tool", "t2")]


def test_tool_mapping_keeps_the_schema_and_strict_flag():
    schema = {
        "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": False
    }
    plain = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    tool = ToolDef(name="f", description="d", parameters=plain, strict_parameters=schema)
    assert openai_tool(tool) == {
        "type": "function", "function": {"name": "f", "description": "d", "parameters": schema, "strict": True}
    }
    # the strict form is OpenAI's only: Anthropic gets the plain schema, without a strict flag
    assert anthropic_tool(tool) == {"name": "f", "description": "d", "input_schema": plain}
    loose = tool.model_copy(update={"strict_parameters": None})
    assert openai_tool(loose) == {"type": "function", "function": {"name": "f", "description": "d", "parameters": plain}}


def test_price_lookup_accepts_dated_snapshots_only():
    assert DEFAULT_PRICES.lookup("claude-sonnet-4-5-20250929") == DEFAULT_PRICES.prices["claude-sonnet-4-5"]
    assert DEFAULT_PRICES.lookup("gpt-4.1-mini-2025-04-14") == DEFAULT_PRICES.prices["gpt-4.1-mini"]
    assert DEFAULT_PRICES.lookup("gpt-4.1-mini") != DEFAULT_PRICES.lookup("gpt-4.1")
    assert DEFAULT_PRICES.lookup("gpt-5-pro") is None  # a different model, not a snapshot of gpt-5


def test_price_overrides_and_unknown_models():
    table = DEFAULT_PRICES.with_overrides({"my-vllm-model": {"input_per_mtok": 0.5, "output_per_mtok": 1.0}})
    usage = table.usage("my-vllm-model", 2_000_000, 1_000_000)
    assert usage.cost_usd == pytest.approx(2.0) and usage.price_known
    assert table.lookup("gpt-4o") == ModelPrice(input_per_mtok=2.5, output_per_mtok=10.0)
    unknown = table.usage("mystery", 10, 10)
    assert unknown.cost_usd == 0 and not unknown.price_known


def test_parse_retry_after_forms():
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"retry-after": "7"}) == 7
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    assert parse_retry_after({"retry-after": "Mon, 30 Nov 2026 12:00:30 GMT"}, now=now) == 30
    assert parse_retry_after({"retry-after": "Mon, 30 Nov 2026 11:00:00 GMT"}, now=now) == 0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
