"""LLMPolicy against a real ledger, through the real OpenAI and Anthropic SDKs and the fake server:
propose and replan rounds, the research log feeding the next propose, recovery from a malformed
tool call, a 429 then success, unavailability propagating, usage in the ledger and MLflow."""

from __future__ import annotations

import logging
from pathlib import Path

import optuna
import pytest

from autoresearch.campaign import Ledger
from autoresearch.llm import FaultKind, LLMUnavailable, Role
from autoresearch.policy import LLMPolicy, PolicyContext, ReplanAction
from skills import SkillContext
from tracking import mlflow_client

from tests.autoresearch.conftest import FAST, KEY, Researcher, branin, complete_all

POINTS = [{"x1": 1.0, "x2": 2.0}, {"x1": 3.0, "x2": 3.0}, {"x1": 9.0, "x2": 2.5}, {"x1": 3.1, "x2": 2.2}]


def make_policy(ledger: Ledger, provider, tracking) -> LLMPolicy:
    context = SkillContext.create(home=ledger.path.parents[2], tracking_uri=tracking.tracking_uri)
    return LLMPolicy(ledger, provider, skill_context=context)


def branin_value(params: dict) -> float:
    return (params["x1"] - 3.0) ** 2 + (params["x2"] - 2.5) ** 2


def test_rounds_through_the_sdk(sdk, home: Path, tracking, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    researcher = Researcher(POINTS)
    provider, server = sdk(researcher)
    ledger = Ledger.open(branin(name=f"rounds-{provider.kind}", tracking={"uri": tracking.tracking_uri}), home)
    policy = make_policy(ledger, provider, tracking)

    first = policy.propose(PolicyContext.from_ledger(ledger), 2)
    assert [p.params for p in first] == POINTS[:2] and all(p.hypothesis and p.expected_effect for p in first)
    for proposal in first:
        ledger.admit(proposal)
    complete_all(ledger, branin_value)
    decision = policy.replan(PolicyContext.from_ledger(ledger, steering=["focus on x1 near 3"]))
    assert decision.action is ReplanAction.continue_ and decision.notes.startswith("Learned: round 1: #0 complete")
    ledger.append_note(decision.notes)
    second = policy.propose(PolicyContext.from_ledger(ledger), 2)
    assert [p.params for p in second] == POINTS[2:]

    # The model read best_trials, and its result came back before it proposed.
    tool_turn = researcher.requests[4].messages[-1]
    assert tool_turn.role is Role.TOOL and '"number":1' in tool_turn.tool_results[0].content
    # Replan saw the steering message; the next propose saw the research log entry.
    replan_prompt = researcher.requests[2].messages[1].content
    assert "write_research_log" in {t.name for t in researcher.requests[2].tools}
    assert "focus on x1 near 3" in replan_prompt
    assert "Learned: round 1" in researcher.requests[3].messages[1].content
    assert all(r.status == 200 for r in server.requests) and len(server.requests) == 5

    usage = ledger.facts().llm_usage
    assert usage["by_node"]["propose"]["calls"] == 4 and usage["by_node"]["replan"]["calls"] == 1
    assert ledger.llm_usd == pytest.approx(usage["total"]["cost_usd"]) and ledger.llm_usd > 0
    client = mlflow_client(tracking)
    run = client.get_run(ledger.facts().llm_run_id).data
    assert run.metrics["llm.node.propose.calls"] == 4 and run.params["llm.api_key_env"] == "AR_TEST_POLICY_KEY"
    stored = optuna.load_study(study_name=ledger.campaign.name, storage=ledger.storage_url).user_attrs
    dumped = str(stored) + str(run.params) + str(run.tags) + caplog.text
    assert KEY not in dumped


def test_malformed_tool_call_is_recovered(sdk, home: Path, tracking) -> None:
    researcher = Researcher(POINTS, read_first=False)
    provider, server = sdk(researcher)
    ledger = Ledger.open(branin(name=f"malformed-{provider.kind}"), home)
    policy = make_policy(ledger, provider, tracking)
    server.inject(FaultKind.MALFORMED_TOOL_ARGS)

    proposals = policy.propose(PolicyContext.from_ledger(ledger), 1)

    assert [p.params for p in proposals] == POINTS[:1]
    error = researcher.requests[1].messages[-1].tool_results[0]
    assert "arguments of propose_trials were not usable" in error.content


def test_rate_limit_then_success(sdk, home: Path, tracking) -> None:
    provider, server = sdk(Researcher(POINTS, read_first=False))
    ledger = Ledger.open(branin(name=f"limited-{provider.kind}"), home)
    policy = make_policy(ledger, provider, tracking)
    server.inject(FaultKind.RATE_LIMIT, retry_after="0")

    assert [p.params for p in policy.propose(PolicyContext.from_ledger(ledger), 1)] == POINTS[:1]
    assert [r.status for r in server.requests] == [429, 200]


def test_unavailable_provider_propagates(sdk, home: Path, tracking) -> None:
    provider, server = sdk(Researcher(POINTS))
    ledger = Ledger.open(branin(name=f"down-{provider.kind}"), home)
    policy = make_policy(ledger, provider, tracking)
    server.inject(FaultKind.SERVER_ERROR, times=FAST.max_attempts, status=503)

    with pytest.raises(LLMUnavailable, match=r"3 attempt\(s\) .* HTTP 503") as info:
        policy.propose(PolicyContext.from_ledger(ledger), 2)
    assert KEY not in str(info.value)
    assert ledger.trials() == [] and [r.status for r in server.requests] == [503] * 3
