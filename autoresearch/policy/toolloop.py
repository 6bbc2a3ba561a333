"""The tool-calling loop of one policy step (propose or replan).

The model gets the conversation and the step's tools; every tool call of a turn is answered
in one tool message (skill output as JSON, or the error the model should act on). The step
ends when the *finish* tool (`propose_trials`, `write_research_log`) accepts its arguments.

Bounds: at most `max_tool_calls` calls; once they are spent only the finish tool is offered,
with tool_choice=required. Invalid calls (arguments that are not JSON, that fail validation,
a finish tool that refuses them, an unknown tool, a turn with no tool call) go back to the
model as errors; after more than `max_invalid` of them the loop gives up and says why.
Provider errors (LLMUnavailable, BudgetExceeded, LLMError) propagate to the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from autoresearch.llm import Message, Provider, ToolCall, ToolChoice, ToolResult
from skills import ErrorCode, SkillContext, SkillError, SkillRegistry

log = logging.getLogger("autoresearch.policy")

_INVALID = {ErrorCode.invalid_json, ErrorCode.invalid_arguments, ErrorCode.unknown_skill}


class LoopOutcome(BaseModel):
    """How a step's conversation ended."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    finished: bool
    """The finish tool accepted its arguments."""
    reason: str = ""
    """Why the loop gave up (empty when finished)."""
    turns: int
    """Model calls made."""
    tool_calls: int
    """Tool calls answered."""
    invalid: int
    """Invalid calls and tool-less turns sent back as errors."""
    messages: list[Message]
    """The whole conversation, the model's turns and the tool results included."""


def run_tool_loop(
    provider: Provider,
    messages: Sequence[Message],
    registry: SkillRegistry,
    ctx: SkillContext,
    *,
    tools: Sequence[str],
    finish: str,
    max_tool_calls: int = 20,
    max_invalid: int = 3,
    max_tokens: int = 4096,
) -> LoopOutcome:
    """Talk to the model until `finish` accepts its arguments or a bound is reached."""
    names = [*dict.fromkeys([*tools, finish])]
    missing = [name for name in names if name not in registry]
    if missing:
        raise ValueError(f"tools {missing} are not in the registry ({', '.join(registry.names())})")
    offered = [registry.get(name).tooldef for name in names]  # type: ignore[union-attr]
    finish_only = [registry.get(finish).tooldef]  # type: ignore[union-attr]
    history = list(messages)
    calls = invalid = turns = 0
    force = False
    last_error = ""
    while turns < max_tool_calls + max_invalid + 2:
        spent = calls >= max_tool_calls
        reply = provider.complete(
            history,
            finish_only if spent else offered,
            tool_choice=ToolChoice.REQUIRED if spent or force else ToolChoice.AUTO,
            max_tokens=max_tokens,
        )
        turns += 1
        history.append(reply.message)
        if not reply.message.tool_calls:
            invalid += 1
            force = True
            last_error = "answered without calling a tool"
            history.append(Message.user(f"Finish this step by calling `{finish}` (see its schema)."))
        else:
            results = []
            finished = False
            for call in reply.message.tool_calls:
                allowed = [finish] if calls >= max_tool_calls else names
                result, accepted, bad = _answer(call, allowed, finished, registry, ctx, finish)
                calls += 1
                finished = finished or accepted
                if bad:
                    invalid += 1
                    last_error = result.content
                results.append(result)
            history.append(Message.tool(*results))
            if finished:
                return LoopOutcome(finished=True, turns=turns, tool_calls=calls, invalid=invalid, messages=history)
        if invalid > max_invalid:
            reason = f"gave up after {invalid} invalid tool calls; the last error: {last_error[:600]}"
            return LoopOutcome(
                finished=False, reason=reason, turns=turns, tool_calls=calls, invalid=invalid, messages=history
            )
    reason = f"the model did not call {finish} successfully within {turns} turns"
    return LoopOutcome(finished=False, reason=reason, turns=turns, tool_calls=calls, invalid=invalid, messages=history)


def _answer(
    call: ToolCall, allowed: list[str], finished: bool, registry: SkillRegistry, ctx: SkillContext, finish: str
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
        return error(f"no tool {call.name!r} now; call one of: {', '.join(allowed)}")
    if finished:
        return error(f"{finish} was already accepted in this turn; this call was ignored", bad=False)
    output = registry.call(call.name, call.arguments, ctx)
    content = output.model_dump_json(exclude_defaults=True)
    if isinstance(output, SkillError):
        bad = call.name == finish or output.error in _INVALID
        log.debug("tool %s failed: %s", call.name, output.message)
        return ToolResult(tool_call_id=call.id, content=content, is_error=True), False, bad
    log.debug("tool %s ok", call.name)
    return ToolResult(tool_call_id=call.id, content=content), call.name == finish, False
