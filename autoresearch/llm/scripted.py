"""A model you write as a function: for tests, offline demos and the fake server.

`ScriptedProvider(fn)` calls `fn(messages, tools)` for every turn; `fn` returns text, tool
calls, a Message or a full LLMResponse. `ScriptedProvider.from_turns([...])` plays canned turns
in order. No network, no key; usage is estimated at ~4 characters per token.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from autoresearch.llm.errors import LLMError
from autoresearch.llm.messages import LLMResponse, Message, ModelStopReason, ToolCall, ToolChoice, Usage
from autoresearch.llm.provider import check_tool_choice
from skills.tooldef import ToolDef

Reply = str | ToolCall | Sequence[ToolCall] | Message | LLMResponse
"""What a script may return: text, one or more tool calls, an assistant Message, or everything."""

ScriptFn = Callable[[list[Message], list[ToolDef]], Reply]


def estimate_tokens(messages: Iterable[Message]) -> int:
    """A rough token count (~4 characters each) of the text, tool calls and results."""
    chars = 0
    for m in messages:
        chars += len(m.content)
        chars += sum(len(c.name) + len(c.arguments_json()) for c in m.tool_calls)
        chars += sum(len(r.content) for r in m.tool_results)
    return max(1, chars // 4)


def to_response(reply: Reply, *, model: str, input_tokens: int) -> LLMResponse:
    """A script's reply as an LLMResponse; usage is estimated unless the reply carries it."""
    if isinstance(reply, LLMResponse):
        return reply
    if isinstance(reply, str):
        message = Message.assistant(reply)
    elif isinstance(reply, ToolCall):
        message = Message.assistant(tool_calls=[reply])
    elif isinstance(reply, Message):
        message = reply
    else:
        message = Message.assistant(tool_calls=list(reply))
    stop = ModelStopReason.TOOL_USE if message.tool_calls else ModelStopReason.END_TURN
    usage = Usage(input_tokens=input_tokens, output_tokens=estimate_tokens([message]))
    return LLMResponse(message=message, stop_reason=stop, usage=usage, model=model)


class ScriptedProvider:
    """A Provider whose answers come from a Python function."""

    def __init__(self, fn: ScriptFn, *, model: str = "scripted", cost_per_call_usd: float = 0.0) -> None:
        self.fn = fn
        self.model = model
        self.cost_per_call_usd = cost_per_call_usd
        self.calls: list[list[Message]] = []
        """The messages of every call so far, for assertions."""

    def __repr__(self) -> str:
        return f"ScriptedProvider(model={self.model!r})"

    @classmethod
    def from_turns(
        cls, turns: Iterable[Reply], *, model: str = "scripted", cost_per_call_usd: float = 0.0
    ) -> ScriptedProvider:
        """Play `turns` in order, one per call; a call after the last one is an LLMError."""
        queue = list(turns)
        total = len(queue)

        def next_turn(messages: list[Message], tools: list[ToolDef]) -> Reply:
            if not queue:
                raise LLMError(f"the scripted model ran out of turns after {total}; add more turns to its script")
            return queue.pop(0)

        return cls(next_turn, model=model, cost_per_call_usd=cost_per_call_usd)

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDef] = (),
        *,
        tool_choice: ToolChoice = ToolChoice.AUTO,
        max_tokens: int = 4096,
    ) -> LLMResponse:
        check_tool_choice(tools, tool_choice)
        history = list(messages)
        self.calls.append(history)
        response = to_response(self.fn(history, list(tools)), model=self.model, input_tokens=estimate_tokens(history))
        if self.cost_per_call_usd and not response.usage.cost_usd:
            usage = response.usage.model_copy(update={"cost_usd": self.cost_per_call_usd})
            response = response.model_copy(update={"usage": usage})
        return response
