"""The one tool-calling loop: the policy's steps (propose, replan) and chat's plain language.

The model gets the conversation and the tools; every tool call of a turn runs through the skill
registry and is answered in one tool message (the skill's output, or the error the model should
act on). The loop ends in one of two ways, by the caller's choice:

- with a *finish* tool (`propose_trials`, `write_research_log`): when that tool accepts its
  arguments. A turn with no tool call is sent back as an error, and the next turn must call one.
- without one (chat): when the model answers in text; that text is `LoopOutcome.answer`.

Bounds: at most `max_tool_calls` calls; once they are spent only the finish tool is offered,
with tool_choice=required (without a finish tool, no tool is offered and the model must answer).
Invalid calls (arguments that are not JSON, that fail validation, a finish tool that refuses
them, an unknown tool, a finish step's turn with no tool call) go back to the model as errors;
after more than `max_invalid` of them the loop gives up and says why. At most `max_turns` model
calls (default: enough for every call and every invalid one). Provider errors (LLMUnavailable,
BudgetExceeded, LLMError) propagate to the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from autoresearch.llm.messages import Message, ToolCall, ToolChoice, ToolResult
from autoresearch.llm.provider import Provider
from skills import ErrorCode, SkillContext, SkillError, SkillRegistry

log = logging.getLogger("autoresearch.llm.toolloop")

_INVALID = {ErrorCode.invalid_json, ErrorCode.invalid_arguments, ErrorCode.unknown_skill}

Render = Callable[[BaseModel], str]
"""A skill's output (or `SkillError`) -> the text the model gets (and chat shows)."""


class LoopOutcome(BaseModel):
    """How a conversation with tools ended."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    finished: bool
    """The finish tool accepted its arguments (without a finish tool: the model answered in text)."""
    reason: str = ""
    """Why the loop gave up (empty when finished)."""
    answer: str = ""
    """The model's final text, when the loop has no finish tool."""
    turns: int
    """Model calls made."""
    tool_calls: int
    """Tool calls answered."""
    invalid: int
    """Invalid calls and tool-less turns sent back as errors."""
    messages: list[Message]
    """The whole conversation, the model's turns and the tool results included."""


def as_json(output: BaseModel) -> str:
    """The default rendering: the output's JSON, defaults left out."""
    return output.model_dump_json(exclude_defaults=True)


def run_tool_loop(
    provider: Provider,
    messages: Sequence[Message],
    registry: SkillRegistry,
    ctx: SkillContext,
    *,
    tools: Sequence[str] | None = None,
    finish: str | None = None,
    max_tool_calls: int = 20,
    max_invalid: int = 3,
    max_turns: int | None = None,
    max_tokens: int = 4096,
    render: Render = as_json,
    on_result: Callable[[ToolCall, ToolResult], None] | None = None,
) -> LoopOutcome:
    """Talk to the model until it finishes (see the module docstring) or a bound is reached.

    `tools`: the registry's skills offered (default: all of them); `render`: how an output reads
    to the model; `on_result`: called with each call and its answer as it happens."""
    names = [*dict.fromkeys([*(registry.names() if tools is None else tools), *([finish] if finish else [])])]
    missing = [name for name in names if name not in registry]
    if missing:
        raise ValueError(f"tools {missing} are not in the registry ({', '.join(registry.names())})")
    offered = [registry.get(name).tooldef for name in names]  # type: ignore[union-attr]
    last_offer = [registry.get(finish).tooldef] if finish else []  # type: ignore[union-attr]
    history = list(messages)
    calls = invalid = turns = 0
    force = False
    last_error = ""

    def outcome(finished: bool, reason: str = "", answer: str = "") -> LoopOutcome:
        return LoopOutcome(finished=finished, reason=reason, answer=answer, turns=turns, tool_calls=calls,
                           invalid=invalid, messages=history)  # fmt: skip

    while turns < (max_turns if max_turns is not None else max_tool_calls + max_invalid + 2):
        spent = calls >= max_tool_calls
        reply = provider.complete(
            history,
            last_offer if spent else offered,
            tool_choice=ToolChoice.REQUIRED if finish and (spent or force) else ToolChoice.AUTO,
            max_tokens=max_tokens,
        )
        turns += 1
        history.append(reply.message)
        if not reply.message.tool_calls:
            if finish is None:
                return outcome(True, answer=reply.message.content.strip())
            invalid += 1
            force = True
            last_error = "answered without calling a tool"
            history.append(Message.user(f"Finish this step by calling `{finish}` (see its schema)."))
        else:
            results = []
            finished = False
            for call in reply.message.tool_calls:
                allowed = ([finish] if finish else []) if calls >= max_tool_calls else names
                result, accepted, bad = _answer(call, allowed, finished, registry, ctx, finish, render)
                calls += 1
                finished = finished or accepted
                if bad:
                    invalid += 1
                    last_error = result.content
                results.append(result)
                if on_result is not None:
                    on_result(call, result)
            history.append(Message.tool(*results))
            if finished:
                return outcome(True)
        if invalid > max_invalid:
            return outcome(False, f"gave up after {invalid} invalid tool calls; the last error: {last_error[:600]}")
    if finish is None:
        return outcome(False, f"stopped after {turns} rounds of tool calls")
    return outcome(False, f"the model did not call {finish} successfully within {turns} turns")


def _answer(
    call: ToolCall,
    allowed: list[str],
    finished: bool,
    registry: SkillRegistry,
    ctx: SkillContext,
    finish: str | None,
    render: Render,
) -> tuple[ToolResult, bool, bool]:
    """(the result for `call`, whether it finished the step, whether it was invalid)."""

    def error(text: str, bad: bool = True) -> tuple[ToolResult, bool, bool]:
        log.debug("tool %s refused: %s", call.name, text)
        return ToolResult(tool_call_id=call.id, content=text, is_error=True), False, bad

    if call.parse_error is not None:
        return error(
            f"the arguments of {call.name} were not usable ({call.parse_error}); send one JSON object "
            "that matches the tool's schema"
        )
    if call.name not in allowed:
        listed = f"call one of: {', '.join(allowed)}" if allowed else "answer in text"
        return error(f"no tool {call.name!r} now; {listed}")
    if finished:
        return error(f"{finish} was already accepted in this turn; this call was ignored", bad=False)
    output = registry.call(call.name, call.arguments, ctx)
    content = render(output)
    if isinstance(output, SkillError):
        bad = call.name == finish or output.error in _INVALID
        log.debug("tool %s failed: %s", call.name, output.message)
        return ToolResult(tool_call_id=call.id, content=content, is_error=True), False, bad
    log.debug("tool %s ok", call.name)
    return ToolResult(tool_call_id=call.id, content=content), call.name == finish, False
