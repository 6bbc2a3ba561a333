"""Steering over MCP: `autoresearch mcp --campaign NAME` serves one tool per steering command, generated
from the command models, with chat's checks and acknowledgements; driven by the real MCP client over
stdio against a live runner process."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from autoresearch.campaign import CampaignState, Ledger, TrialState
from autoresearch.chat import ChatError, ChatSession
from autoresearch.steering import SENT_BY_PEOPLE, read_messages
from tests.autoresearch.chat.conftest import start_runner  # noqa: F401 - the fixture
from tests.autoresearch.runner.conftest import synthetic_config, wait_until
from tests.skills.test_mcp import mcp_server
from tracking import TrackingConfig

STEERING = ["pause", "resume", "stop", "note", "set_budget", "set_space", "set_priority", "try_trial", "cancel_trial",
            "approve", "deny"]  # fmt: skip


def test_an_agent_pauses_changes_the_budget_tries_a_point_resumes_and_stops_over_mcp(
    compute_home: Path, tracking: TrackingConfig, start_runner: Any  # noqa: F811
) -> None:
    data = synthetic_config(tracking, steps=4, step_seconds=0.1, budget={"max_trials": 400, "max_parallel": 2})
    name = data["name"]
    runner = start_runner(data)
    wait_until(lambda: any(t.state is TrialState.running for t in Ledger.load(name).trials()), what="a running trial")
    server = mcp_server(compute_home, tracking, "--campaign", name)

    async def session() -> None:
        async with Client(server, read_timeout_seconds=120) as client:

            async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
                result = await client.call_tool(tool, arguments)
                return result.is_error, json.loads(result.content[0].text)

            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert [n for n in tools if n in STEERING] == STEERING == [
                re.sub(r"(?<!^)(?=[A-Z])", "_", c.__name__).lower() for c in SENT_BY_PEOPLE]
            assert tools["set_budget"].input_schema["required"] == ["changes"]
            assert tools["stop"].annotations.destructive_hint and not tools["pause"].annotations.destructive_hint

            failed, paused = await call("pause", {"reason": "checking the data"})
            assert not failed and paused["text"].startswith("queued #1 pause: no new trials"), paused
            wait_until(lambda: Ledger.load(name).state is CampaignState.paused, what="the pause")

            failed, error = await call("set_budget", {"changes": {"max_trails": 20}})  # as chat says it
            with pytest.raises(ChatError) as in_chat:
                ChatSession(name).set_budget({"max_trails": 20})
            assert failed and error["message"] == str(in_chat.value), error
            assert "budget has no field 'max_trails' (did you mean 'max_trials'?)" in error["message"]
            failed, error = await call("pause", {"resaon": "typo"})  # a field the command lacks
            assert failed and (error["error"], error["field"]) == ("invalid_arguments", "resaon"), error
            failed, error = await call("cancel_trial", {"trial": -1})
            assert failed and error["field"] == "trial", error

            failed, budget = await call("set_budget", {"changes": {"max_trials": 300}})
            assert not failed and "budget.max_trials: 400 -> 300" in budget["text"], budget
            failed, space = await call("set_space", {"params": {"x1": [0, 2]}})
            assert not failed and "search_space.x1: float [-5, 10] -> float [0, 2]" in space["text"], space
            failed, tried = await call("try_trial", {"params": {"x1": 1.5, "x2": 2.5}, "rationale": "from the agent"})
            assert not failed and tried["text"].startswith(f"queued #{space['message_id'] + 1} try x1=1.5 x2=2.5")
            failed, resumed = await call("resume", {})
            assert not failed, resumed
            wait_until(lambda: any(t.rationale == "from the agent" for t in Ledger.load(name).trials()),
                       what="the tried trial after resume")  # fmt: skip
            campaign = Ledger.load(name).campaign
            assert campaign.budget.max_trials == 300 and campaign.search_space["x1"].high == 2

            failed, stopped = await call("stop", {"reason": "enough"})
            assert not failed, stopped

    asyncio.run(session())
    assert runner.wait() == 0
    ledger = Ledger.load(name)
    assert ledger.state is CampaignState.stopped and ledger.state_reason == "enough"
    messages = read_messages(name)
    assert [(m.kind, m.author) for m in messages] == [
        ("pause", "mcp"), ("budget", "mcp"), ("space", "mcp"), ("try", "mcp"), ("resume", "mcp"), ("stop", "mcp")]
    assert all(m.handled_at is not None for m in messages)
