"""The tool loop: every call answered, invalid arguments sent back as errors (bounded), a cap on
tool calls after which only the finish tool is offered, required."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from autoresearch.campaign import Ledger
from autoresearch.llm import LLMResponse, Message, Role, ScriptedProvider, ToolCall, ToolChoice, run_tool_loop
from autoresearch.policy import AgentContext, agent_registry
from skills import SkillContext
from skills.tooldef import ToolDef

from tests.autoresearch.conftest import branin


class Recording:
    """A provider wrapper that keeps each call's tool names and tool choice."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.model = inner.model
        self.seen: list[tuple[list[str], ToolChoice]] = []

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolDef] = (), *,
                 tool_choice: ToolChoice = ToolChoice.AUTO, max_tokens: int = 4096) -> LLMResponse:  # fmt: skip
        self.seen.append(([t.name for t in tools], tool_choice))
        return self.inner.complete(messages, tools, tool_choice=tool_choice, max_tokens=max_tokens)


def context(home: Path, slots: int = 2) -> AgentContext:
    base = SkillContext.create(home=home)
    return AgentContext(home=base.home, tracking=base.tracking, ledger=Ledger.open(branin(), home), slots=slots)


def good(x1: float = 1.0) -> dict:
    return {"trials": [{"params": {"x1": x1, "x2": 2.0}, "hypothesis": "h", "expected_effect": "lower"}]}


def loop(provider, ctx: AgentContext, **limits):
    start = [Message.system("sys"), Message.user("Propose up to 2 new trial(s)")]
    return run_tool_loop(provider, start, agent_registry(), ctx, tools=["list_trials", "best_trials"],
                         finish="propose_trials", **limits)  # fmt: skip


def test_invalid_arguments_go_back_with_the_validation_message(home: Path) -> None:
    model = ScriptedProvider.from_turns([
        ToolCall(name="propose_trials", arguments={"trials": [{"params": {"x1": 99.0, "x2": 2.0, "lr": 1},
                                                                "hypothesis": "h", "expected_effect": "e"}]}),
        ToolCall(name="propose_trials", arguments={"trials": [{"params": {"x1": 1.0}}]}),
        ToolCall(name="propose_trials", arguments=good()),
    ])  # fmt: skip
    ctx = context(home)
    outcome = loop(model, ctx)

    assert outcome.finished and outcome.turns == 3 and outcome.invalid == 2 and outcome.tool_calls == 3
    first, second = (m.tool_results[0] for m in outcome.messages if m.role is Role.TOOL and m.tool_results[0].is_error)
    assert "x1=99.0 is outside [-5.0, 10.0]" in first.content and "lr is not in the search space" in first.content
    assert "hypothesis" in json.loads(second.content)["message"]  # pydantic: field required
    assert [p.params for p in ctx.proposals] == [{"x1": 1.0, "x2": 2.0}]


def test_malformed_json_and_unknown_tools_are_answered_and_recovered(home: Path) -> None:
    model = ScriptedProvider.from_turns([
        [ToolCall.from_json('{"k": 3', name="best_trials"), ToolCall(name="cancel_job", arguments={"job_id": "j"})],
        "I think x1=1 is good.",
        ToolCall(name="propose_trials", arguments=good()),
    ])  # fmt: skip
    provider = Recording(model)
    outcome = loop(provider, context(home))

    assert outcome.finished and outcome.invalid == 3
    results = outcome.messages[3].tool_results  # both calls of the first turn answered in one message
    assert "not usable (invalid JSON" in results[0].content and "no tool 'cancel_job'" in results[1].content
    assert outcome.messages[5] == Message.user("Finish this step by calling `propose_trials` (see its schema).")
    assert provider.seen[2][1] is ToolChoice.REQUIRED  # after a turn without a tool call


def test_cap_on_tool_calls_then_only_the_finish_tool_is_offered(home: Path) -> None:
    def chatty(messages: list[Message], tools: list[ToolDef]):
        if len(tools) > 1:
            return ToolCall(name="list_trials", arguments={})
        return ToolCall(name="propose_trials", arguments=good())

    provider = Recording(ScriptedProvider(chatty))
    outcome = loop(provider, context(home), max_tool_calls=2)

    assert outcome.finished and outcome.tool_calls == 3
    assert provider.seen[:2] == [(["list_trials", "best_trials", "propose_trials"], ToolChoice.AUTO)] * 2
    assert provider.seen[2] == (["propose_trials"], ToolChoice.REQUIRED)


def test_gives_up_after_the_invalid_bound(home: Path) -> None:
    empty = {"trials": [{"params": {}, "hypothesis": "h", "expected_effect": "e"}]}
    bad = ToolCall(name="propose_trials", arguments=empty)
    model = ScriptedProvider(lambda messages, tools: bad)
    ctx = context(home)
    outcome = loop(model, ctx, max_invalid=2)

    assert not outcome.finished and outcome.turns == 3 and ctx.proposals is None
    assert outcome.reason.startswith("gave up after 3 invalid tool calls; the last error:")
    assert "x1 is missing; x2 is missing" in outcome.reason


def test_too_many_trials_are_cut_to_fit_and_duplicates_refused(home: Path) -> None:
    two = {"trials": good(1.0)["trials"] + good(2.0)["trials"]}
    model = ScriptedProvider.from_turns([ToolCall(name="propose_trials", arguments=two)])
    ctx = context(home, slots=1)
    outcome = loop(model, ctx, max_invalid=0)
    assert outcome.finished and [p.params["x1"] for p in ctx.proposals] == [1.0]
    assert "got 2 trials but only 1 slot(s) were free: the first 1 were kept and trials[1:] dropped" in ctx.cut_note

    twice = {"trials": good(3.0)["trials"] * 2}
    model = ScriptedProvider.from_turns([ToolCall(name="propose_trials", arguments=twice)])
    outcome = loop(model, context(home), max_invalid=0)
    assert not outcome.finished and "trials[1]: the same params and code as an earlier trial" in outcome.reason


def test_without_a_finish_tool_the_text_answer_ends_the_loop_and_spent_calls_leave_no_tools(home: Path) -> None:
    """Chat's use: no finish tool; the model's text ends the turn; each answer is reported as it happens."""
    model = ScriptedProvider.from_turns([
        [ToolCall(name="list_trials", arguments={}), ToolCall(name="best_trials", arguments={})],
        "No trial has run yet.",
    ])  # fmt: skip
    provider = Recording(model)
    seen: list[tuple[str, bool]] = []
    start = [Message.system("sys"), Message.user("how is it going?")]
    outcome = run_tool_loop(provider, start, agent_registry(), context(home), tools=["list_trials", "best_trials"],
                            max_tool_calls=2, on_result=lambda call, result: seen.append((call.name, result.is_error)))
    assert outcome.finished and outcome.answer == "No trial has run yet." and outcome.tool_calls == 2
    assert seen == [("list_trials", False), ("best_trials", False)]
    assert provider.seen == [(["list_trials", "best_trials"], ToolChoice.AUTO), ([], ToolChoice.AUTO)]
