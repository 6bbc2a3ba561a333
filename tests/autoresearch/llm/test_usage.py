"""Usage per call / node / campaign, the LLM budget, and logging it through a tracker on a real MLflow store."""

from __future__ import annotations

import pytest

from autoresearch.llm import (
    BudgetExceeded,
    FakeLLMServer,
    LLMResponse,
    LLMSettings,
    Message,
    ModelPrice,
    OpenAIProvider,
    PriceTable,
    ScriptedProvider,
    ModelStopReason,
    Usage,
    UsageMeter,
    log_llm_settings,
    log_usage,
)
from tracking import MlflowTracker, RunNotFound, resolve_tracking

from tests.autoresearch.llm.conftest import FAST, KEY

PRICES = PriceTable(prices={"priced-model": ModelPrice(input_per_mtok=2.0, output_per_mtok=10.0)})


def _billed(req):
    """Every answer bills 1000 input and 500 output tokens: $0.007 at PRICES."""
    return LLMResponse(
        message=Message.assistant("ok"),
        stop_reason=ModelStopReason.END_TURN,
        usage=Usage(input_tokens=1000, output_tokens=500),
        model=req.model,
    )


@pytest.fixture
def billed_server():
    with FakeLLMServer(_billed, api_key=KEY) as server:
        yield server


def _provider(server, model="priced-model"):
    return OpenAIProvider(model, api_key=KEY, base_url=server.openai_base_url, retry=FAST, prices=PRICES)


def test_meter_counts_per_call_node_model_and_campaign(billed_server):
    meter = UsageMeter()
    provider = meter.wrap(_provider(billed_server), node="propose")
    provider.complete([Message.user("a")])
    provider.complete([Message.user("b")])
    provider.with_node("replan").complete([Message.user("c")])
    meter.wrap(_provider(billed_server, "unpriced"), node="replan").complete([Message.user("d")])

    report = meter.report()
    assert report.total.calls == 4 and report.total.input_tokens == 4000
    assert report.total.cost_usd == pytest.approx(0.021)
    assert report.total.unknown_price_calls == 1
    assert report.by_node["propose"].calls == 2 and report.by_node["propose"].cost_usd == pytest.approx(0.014)
    assert report.by_node["replan"].calls == 2 and report.by_node["replan"].unknown_price_calls == 1
    assert set(report.by_model) == {"priced-model", "unpriced"}
    assert [c.node for c in meter.calls()] == ["propose", "propose", "replan", "replan"]


def test_budget_stops_calls_before_they_are_made(billed_server):
    meter = UsageMeter(max_usd=0.01)
    provider = meter.wrap(_provider(billed_server), node="propose")
    provider.complete([Message.user("a")])  # spent 0.007
    provider.complete([Message.user("b")])  # spent 0.014: over, but already made
    with pytest.raises(BudgetExceeded) as err:
        provider.complete([Message.user("c")])
    assert len(billed_server.requests) == 2
    assert err.value.spent_usd == pytest.approx(0.014) and err.value.budget_usd == 0.01
    assert "max_llm_usd" in str(err.value)


def test_budget_spans_a_resume(billed_server):
    first = UsageMeter(max_usd=0.01)
    first.wrap(_provider(billed_server)).complete([Message.user("a")])
    first.wrap(_provider(billed_server)).complete([Message.user("b")])
    saved = first.report().model_dump_json()

    resumed = UsageMeter(max_usd=0.01, start=type(first.report()).model_validate_json(saved))
    with pytest.raises(BudgetExceeded):
        resumed.wrap(_provider(billed_server)).complete([Message.user("c")])
    assert resumed.calls() == [] and resumed.report().total.calls == 2


def test_scripted_model_can_carry_a_cost_for_offline_budget_runs():
    meter = UsageMeter(max_usd=0.25)
    provider = meter.wrap(ScriptedProvider(lambda m, t: "ok", cost_per_call_usd=0.1))
    for _ in range(3):
        provider.complete([Message.user("x")])
    with pytest.raises(BudgetExceeded):
        provider.complete([Message.user("x")])


@pytest.fixture(scope="module")
def mlflow_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlflow")
    tracker = MlflowTracker(resolve_tracking(str(root / "mlflow.db")))
    return tracker, tracker.experiment("llm-usage")


def test_usage_is_flushed_to_mlflow_once_per_call(billed_server, mlflow_run):
    tracker, exp = mlflow_run
    client = tracker.client
    run_id = tracker.create_run(exp)
    meter = UsageMeter()
    provider = meter.wrap(_provider(billed_server), node="propose")
    provider.complete([Message.user("a")])
    provider.complete([Message.user("b")])
    assert log_usage(tracker, run_id, meter) == 2
    provider.with_node("replan").complete([Message.user("c")])
    assert log_usage(tracker, run_id, meter) == 1

    per_call = client.get_metric_history(run_id, "llm.call.cost_usd")
    assert sorted(m.step for m in per_call) == [0, 1, 2]
    assert all(m.value == pytest.approx(0.007) for m in per_call)
    latest = client.get_run(run_id).data.metrics
    assert latest["llm.cost_usd"] == pytest.approx(0.021) and latest["llm.calls"] == 3
    assert latest["llm.node.propose.cost_usd"] == pytest.approx(0.014)
    assert latest["llm.node.replan.input_tokens"] == 1000
    assert latest["llm.unknown_price_calls"] == 0


def test_llm_params_name_the_key_variable_never_the_key(mlflow_run, monkeypatch):
    tracker, exp = mlflow_run
    run_id = tracker.create_run(exp)
    monkeypatch.setenv("MY_KEY_VAR", KEY)  # not named like a secret: redaction must come from the URL pattern
    settings = LLMSettings(
        provider="openai", model="gpt-4.1-mini", base_url=f"http://proxy/v1?key={KEY}", api_key_env="MY_KEY_VAR"
    )
    log_llm_settings(tracker, run_id, settings)
    params = tracker.get_run(run_id).params
    assert params["llm.api_key_env"] == "MY_KEY_VAR" and params["llm.model"] == "gpt-4.1-mini"
    assert KEY not in str(params) and "[REDACTED]" in params["llm.base_url"]


def test_a_failed_flush_loses_no_calls(billed_server, mlflow_run):
    tracker, exp = mlflow_run
    meter = UsageMeter()
    meter.wrap(_provider(billed_server)).complete([Message.user("a")])
    with pytest.raises(RunNotFound):
        log_usage(tracker, "0" * 32, meter)  # no such run
    run_id = tracker.create_run(exp)
    assert log_usage(tracker, run_id, meter) == 1
    assert len(tracker.metric_history(run_id, "llm.call.cost_usd")) == 1
