"""LLM usage as metrics and params of the campaign's `llm-policy` run."""

from __future__ import annotations

from tracking import (
    CAMPAIGN_TAG,
    ROLE_TAG,
    InMemoryTracker,
    llm_usage_run,
    log_llm_params,
    log_llm_usage,
)


def test_usage_names_per_call_campaign_and_node() -> None:
    tracker = InMemoryTracker()
    run_id = llm_usage_run(tracker, "exp", "branin")
    run = tracker.get_run(run_id)
    assert (run.name, run.tags[CAMPAIGN_TAG], run.tags[ROLE_TAG]) == ("llm-policy", "branin", "llm-policy")
    call = {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.5, "latency_s": 1.5, "attempts": 1, "model": 0}
    log_llm_usage(tracker, run_id, calls=[(0, call), (1, call)], totals={"calls": 2, "cost_usd": 1.0},
                  by_node={"propose step": {"calls": 2}}, step=2)  # fmt: skip
    assert [(m.step, m.value) for m in tracker.metric_history(run_id, "llm.call.cost_usd")] == [(0, 0.5), (1, 0.5)]
    metrics = tracker.get_run(run_id).metrics
    assert metrics["llm.calls"] == 2 and metrics["llm.cost_usd"] == 1.0 and metrics["llm.node.propose_step.calls"] == 2
    assert "llm.call.model" not in metrics  # only the call fields are logged
    log_llm_params(tracker, run_id, {"model": "m", "api_key_env": "OPENAI_API_KEY"})
    assert tracker.get_run(run_id).params == {"llm.model": "m", "llm.api_key_env": "OPENAI_API_KEY"}
