"""Plain-language chat: a model's tool calls become the same typed actions as the slash
commands (same validation, same inbox messages), through a ScriptedProvider and through the
real OpenAI SDK against the fake server. Without a model, plain language is refused politely.
Changes posted while no runner runs are applied when it starts."""

from __future__ import annotations

from autoresearch.campaign import CampaignState, Ledger
from autoresearch.chat import ChatSession, Conversation, chat_provider, parse
from autoresearch.llm import FakeLLMServer, ScriptedProvider, ToolCall
from autoresearch.runner import run_campaign
from autoresearch.steering import SetSpace, read_messages
from tests.autoresearch.runner.conftest import FAST, campaign_of, synthetic_config


def test_model_tool_calls_are_the_slash_actions_and_apply_when_the_runner_starts(compute_client, tracking):
    data = synthetic_config(tracking, budget={"max_trials": 3, "max_parallel": 3})
    name = data["name"]
    Ledger.open(campaign_of(data))  # the campaign exists; no runner attached
    offline = Conversation(ChatSession(name))
    assert "no LLM is configured" in offline.handle("narrow x1 please")[0]

    model = ScriptedProvider.from_turns([
        ToolCall(name="set_space", arguments={"params": {"x1": [5, 1]}}),
        ToolCall(name="set_space", arguments={"params": {"x1": [0, 2]}}),
        "I narrowed x1 to [0, 2].",
    ])  # fmt: skip
    chat = Conversation(ChatSession(name, author="carol"), model)
    lines = chat.handle("only search x1 between 0 and 2")
    assert lines[0].startswith('[set_space {"params":{"x1":[5,1]}}] error: search_space.x1: high')
    assert "queued #1 search_space.x1: float [-5, 10] -> float [0, 2] (no runner is attached" in lines[1]
    assert lines[-1] == "I narrowed x1 to [0, 2]."
    refused = model.calls[1][-1].tool_results[0]
    assert refused.is_error and "must be greater than low" in refused.content  # the model saw why

    slash_name, slash_args = parse("/space x2=1..3")
    assert slash_name == "set_space" and chat.handle("/space x2=1..3")[0].startswith("queued #2 search_space.x2")
    messages = read_messages(name)
    assert [(m.kind, m.command, m.author) for m in messages] == [
        ("space", SetSpace(params={"x1": [0, 2]}), "carol"),
        ("space", SetSpace(params={"x2": [1, 3]}), "carol"),
    ]

    outcome = run_campaign(campaign_of(data), settings=FAST)  # starts after the messages: applies them first
    assert outcome.state is CampaignState.completed
    assert all(0 <= t.params["x1"] <= 2 and 1 <= t.params["x2"] <= 3 for t in outcome.status.trials)
    assert Ledger.load(name).campaign.search_space["x1"].high == 2  # kept for status, resume and chat
    assert all(m.outcome and m.outcome.startswith("search_space.") for m in read_messages(name))


def test_the_same_actions_through_the_openai_sdk_and_the_fake_server(compute_client, tracking, monkeypatch):
    data = synthetic_config(tracking)
    name = data["name"]
    Ledger.open(campaign_of(data))
    script = ScriptedProvider.from_turns([
        ToolCall(name="best", arguments={}),
        [ToolCall(name="pause", arguments={"reason": "checking"}),
         ToolCall(name="set_budget", arguments={"changes": {"max_trials": 9}})],
        "Nothing has completed yet; I paused the campaign and set max_trials to 9.",
    ])  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeLLMServer.replaying(script) as server:
        provider = chat_provider(campaign_of(data), "openai:gpt-fake", server.openai_base_url)
        assert provider is not None
        lines = Conversation(ChatSession(name), provider).handle("what's the best so far? then pause, and 9 trials max")
    assert lines[0] == "[best {}] best: no complete trial yet"
    assert lines[1].startswith('[pause {"reason":"checking"}] queued #1 pause')
    assert "budget.max_trials: 4 -> 9" in lines[2]
    assert lines[-1].startswith("Nothing has completed yet")
    assert [m.kind for m in read_messages(name)] == ["pause", "budget"]
    assert chat_provider(campaign_of(data)) is None  # no provider in the config: slash commands only
