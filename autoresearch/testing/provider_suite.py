"""What every LLM provider must do, with its real SDK client, against the fake wire server.

A test module subclasses `ProviderSuite` and provides a fixture `harness`, parametrized over the
providers: called with a script (FakeRequest -> Reply), it starts a
`FakeLLMServer` and returns a `Harness` whose `provider()` is the provider under test pointed
at it (`kind` names the wire: `openai` or `anthropic`). The suite covers text turns, tool
calls and results, schemas reaching the wire unchanged, retries (429 with Retry-After, 5xx,
529, timeouts), refused connections, malformed tool arguments, bad requests, usage and cost.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field

import pytest
from pydantic import BaseModel

from autoresearch.llm import (
    AnthropicProvider,
    FakeLLMServer,
    FakeRequest,
    FaultKind,
    LLMError,
    LLMResponse,
    LLMUnavailable,
    Message,
    ModelPrice,
    OpenAIProvider,
    PriceTable,
    RetryPolicy,
    SDKProvider,
    Role,
    ModelStopReason,
    ToolCall,
    ToolChoice,
    ToolResult,
    Usage,
)
from skills.tooldef import ToolDef

__all__ = ["FAST", "GET_METRIC", "KEY", "Harness", "ProviderSuite", "text_or_tool"]

KEY = "sk-test-7f3c9a1e5b2d4c6f8a0b"
"""The key the fake server expects. Shaped like a real one so the pattern redaction is exercised too."""

FAST = RetryPolicy(
    max_attempts=4, initial_wait_s=0.001, max_wait_s=0.01, jitter_s=0.001, max_total_s=60, request_timeout_s=20
)
"""Tiny waits, generous request timeout (2 shared cores)."""


@dataclass
class Harness:
    """One provider kind against one fake server, with a sleep recorder."""

    kind: str
    server: FakeLLMServer
    sleeps: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        time.sleep(seconds)

    def provider(
        self,
        model: str = "test-model",
        *,
        api_key: str = KEY,
        retry: RetryPolicy = FAST,
        prices: PriceTable | None = None,
    ) -> SDKProvider:
        cls = OpenAIProvider if self.kind == "openai" else AnthropicProvider
        url = self.server.openai_base_url if self.kind == "openai" else self.server.anthropic_base_url
        extra = {"prices": prices} if prices is not None else {}
        return cls(
            model, api_key=api_key, base_url=url, api_key_env="TEST_LLM_KEY", retry=retry, sleep=self.sleep, **extra
        )


GET_METRIC = ToolDef(
    name="get_metric",
    description="Latest value of a metric of a trial.",
    parameters={
        "type": "object",
        "properties": {"trial": {"type": "integer"}, "name": {"type": "string"}},
        "required": ["trial", "name"],
    },
)


def text_or_tool(req: FakeRequest):
    """Call get_metric when tools are offered; answer with the tool result once it arrives."""
    last = req.messages[-1]
    if last.role is Role.TOOL:
        return f"trial 3 reached {last.tool_results[0].content}"
    if req.tools:
        return ToolCall(name="get_metric", arguments={"trial": 3, "name": "val_loss"})
    return "hello from " + req.wire


class _Range(BaseModel):
    low: float
    high: float
    log: bool = False


class _SuggestArgs(BaseModel):
    param: str
    range: _Range | None = None
    tags: list[str] = []


class ProviderSuite:
    """What every provider does with its real SDK client against the fake wire server, one test each, on the `harness` fixture."""

    def test_plain_text_turn(self, harness):
        h = harness(text_or_tool)
        reply = h.provider().complete([Message.system("Be brief."), Message.user("hi")])
        assert reply.message.role is Role.ASSISTANT
        assert reply.message.content == f"hello from {h.kind}"
        assert reply.stop_reason is ModelStopReason.END_TURN
        assert reply.attempts == 1 and reply.model == "test-model"
        seen = h.server.requests[0]
        body = json.loads(seen.body)
        if h.kind == "anthropic":  # system prompt goes to its own parameter
            assert body["system"] == "Be brief." and [m["role"] for m in body["messages"]] == ["user"]
        else:
            assert [m["role"] for m in body["messages"]] == ["system", "user"]

    def test_tool_call_round_trip(self, harness):
        h = harness(text_or_tool)
        provider = h.provider()
        history = [Message.user("How is trial 3 doing?")]
        first = provider.complete(history, [GET_METRIC])
        assert first.stop_reason is ModelStopReason.TOOL_USE
        (call,) = first.message.tool_calls
        assert call.name == "get_metric" and call.arguments == {"trial": 3, "name": "val_loss"}
        assert call.parse_error is None

        history += [first.message, Message.tool(ToolResult(tool_call_id=call.id, content="0.42"))]
        final = provider.complete(history, [GET_METRIC])
        assert final.message.content == "trial 3 reached 0.42"
        assert final.stop_reason is ModelStopReason.END_TURN
        # The server saw the call and its result, linked by id, in its own wire format.
        decoded = h.server.requests[-1]
        body = json.loads(decoded.body)
        if h.kind == "openai":
            assert body["messages"][1]["tool_calls"][0]["id"] == call.id
            assert body["messages"][2] == {"role": "tool", "tool_call_id": call.id, "content": "0.42"}
        else:
            assert body["messages"][1]["content"][0]["type"] == "tool_use"
            assert body["messages"][2]["content"][0] == {
                "type": "tool_result", "tool_use_id": call.id, "content": "0.42", "is_error": False
            }

    def test_tool_error_result_reaches_the_model(self, harness):
        seen: list[FakeRequest] = []

        def script(req: FakeRequest):
            seen.append(req)
            return "noted"

        h = harness(script)
        call = ToolCall(id="call_1", name="get_metric", arguments={"trial": 9, "name": "x"})
        h.provider().complete(
            [
                Message.user("go"),
                Message.assistant(tool_calls=[call]),
                Message.tool(ToolResult(tool_call_id="call_1", content="no trial 9", is_error=True)),
            ],
            [GET_METRIC],
        )
        result = seen[0].messages[-1].tool_results[0]
        if h.kind == "anthropic":
            assert result.is_error and result.content == "no trial 9"
        else:  # Chat Completions has no error flag: the text says it
            assert result.content == "ERROR: no trial 9"

    def test_tooldef_schema_with_nested_and_optional_fields_reaches_the_wire_unchanged(self, harness):
        h = harness(lambda req: ToolCall(name="suggest", arguments={"param": "lr", "range": {"low": 1e-4, "high": 0.1}}))
        schema = _SuggestArgs.model_json_schema()
        assert "$defs" in schema and "anyOf" in json.dumps(schema)  # nested model, optional field
        tools = [
            ToolDef(name="suggest", description="Suggest a range.", parameters=schema),
            ToolDef(name="strict_tool", description="Strict.", parameters={"type": "object", "properties": {}},
                    strict_parameters={"type": "object", "properties": {}, "required": [], "additionalProperties": False}),
        ]
        reply = h.provider().complete([Message.user("go")], tools, tool_choice=ToolChoice.REQUIRED)

        body = json.loads(h.server.requests[0].body)
        if h.kind == "openai":
            assert body["tools"][0] == {
                "type": "function",
                "function": {"name": "suggest", "description": "Suggest a range.", "parameters": schema},
            }
            assert body["tools"][1]["function"]["strict"] is True
            assert body["tools"][1]["function"]["parameters"]["additionalProperties"] is False
            assert body["tool_choice"] == "required"
        else:
            assert body["tools"][0] == {"name": "suggest", "description": "Suggest a range.", "input_schema": schema}
            # Anthropic gets the plain schema and no strict flag: the strict form is OpenAI's only
            assert body["tools"][1] == {"name": "strict_tool", "description": "Strict.",
                                        "input_schema": {"type": "object", "properties": {}}}
            assert body["tool_choice"] == {"type": "any"}
        assert reply.message.tool_calls[0].arguments == {"param": "lr", "range": {"low": 1e-4, "high": 0.1}}

    def test_rate_limit_with_retry_after_is_waited_out_then_succeeds(self, harness):
        h = harness(text_or_tool)
        h.server.inject(FaultKind.RATE_LIMIT, times=2, retry_after="0.05")
        reply = h.provider().complete([Message.user("hi")])
        assert reply.message.content == f"hello from {h.kind}"
        assert reply.attempts == 3
        assert [r.status for r in h.server.requests] == [429, 429, 200]
        # Backoff alone would be <= 0.011 s here: each wait honoured the server's 0.05 s.
        assert len(h.sleeps) == 2 and all(s >= 0.05 for s in h.sleeps)

    def test_retry_after_beyond_the_time_budget_gives_up_at_once_with_the_hint(self, harness):
        h = harness(text_or_tool)
        h.server.inject(FaultKind.RATE_LIMIT, times=1, retry_after="3600")
        with pytest.raises(LLMUnavailable) as err:
            h.provider().complete([Message.user("hi")])
        assert err.value.status == 429 and err.value.retry_after_s == 3600
        assert "asked to wait 3600s" in str(err.value)
        assert len(h.server.requests) == 1 and h.sleeps == []

    def test_a_run_of_500s_exhausts_retries_and_raises_unavailable(self, harness):
        h = harness(text_or_tool)
        h.server.inject(FaultKind.SERVER_ERROR, times=10)
        with pytest.raises(LLMUnavailable) as err:
            h.provider(retry=FAST.model_copy(update={"max_attempts": 3})).complete([Message.user("hi")])
        assert err.value.status == 500 and err.value.attempts == 3
        assert [r.status for r in h.server.requests] == [500, 500, 500]
        message = str(err.value)
        assert "3 attempt(s)" in message and "pause" in message and "autoresearch resume" in message

    def test_overloaded_529_is_retried(self, harness):
        h = harness(text_or_tool)
        h.server.inject(FaultKind.SERVER_ERROR, times=1, status=529)
        assert h.provider().complete([Message.user("hi")]).attempts == 2

    def test_a_slow_response_times_out_and_is_retried(self, harness):
        h = harness(text_or_tool)
        h.server.inject(FaultKind.SLOW, times=1, delay_s=30)
        patient = FAST.model_copy(update={"request_timeout_s": 1.0, "max_attempts": 6})
        reply = h.provider(retry=patient).complete([Message.user("hi")])
        assert reply.message.content == f"hello from {h.kind}"
        assert reply.attempts >= 2

    def test_connection_refused_is_unavailable_without_status(self, harness):
        h = harness(text_or_tool)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cls = OpenAIProvider if h.kind == "openai" else AnthropicProvider
        url = f"http://127.0.0.1:{port}" + ("/v1" if h.kind == "openai" else "")
        provider = cls("m", api_key=KEY, base_url=url, retry=FAST.model_copy(update={"max_attempts": 2}), sleep=h.sleep)
        with pytest.raises(LLMUnavailable) as err:
            provider.complete([Message.user("hi")])
        assert err.value.status is None and err.value.attempts == 2

    def test_malformed_tool_arguments_become_a_parse_error_not_an_exception(self, harness):
        h = harness(text_or_tool)
        h.server.inject(FaultKind.MALFORMED_TOOL_ARGS)
        reply = h.provider().complete([Message.user("go")], [GET_METRIC])
        (call,) = reply.message.tool_calls
        assert call.name == "get_metric"
        assert isinstance(call.arguments, str) and call.parse_error
        assert "invalid JSON" in call.parse_error

    def test_bad_request_is_not_retried(self, harness):
        def broken(req):
            raise RuntimeError("script bug")

        h = harness(broken)
        with pytest.raises(LLMError) as err:
            h.provider().complete([Message.user("hi")])
        assert not isinstance(err.value, LLMUnavailable)
        assert err.value.status == 400 and "script bug" in str(err.value)
        assert len(h.server.requests) == 1

    def test_usage_and_cost_come_from_the_wire_and_the_price_table(self, harness):
        h = harness(
            lambda req: LLMResponse(
                message=Message.assistant("ok"),
                stop_reason=ModelStopReason.END_TURN,
                usage=Usage(input_tokens=1000, output_tokens=500),
                model=req.model,
            )
        )
        prices = PriceTable(prices={"priced-model": ModelPrice(input_per_mtok=2.0, output_per_mtok=10.0)})
        priced = h.provider("priced-model-20260101", prices=prices).complete([Message.user("hi")])
        assert priced.usage.input_tokens == 1000 and priced.usage.output_tokens == 500
        assert priced.usage.cost_usd == pytest.approx(0.007) and priced.usage.price_known
        unknown = h.provider("llama3.1:8b", prices=prices).complete([Message.user("hi")])
        assert unknown.usage.cost_usd == 0 and not unknown.usage.price_known
        assert unknown.usage.output_tokens == 500

    def test_required_tool_choice_without_tools_is_refused_before_any_request(self, harness):
        h = harness(text_or_tool)
        with pytest.raises(ValueError, match="needs at least one tool"):
            h.provider().complete([Message.user("hi")], [], tool_choice=ToolChoice.REQUIRED)
        assert h.server.requests == []

    def test_retry_policy_bounds_are_validated(self):
        with pytest.raises(ValueError):
            RetryPolicy(max_attempts=0)
