"""Pruning: intermediate values reach the ledger, losers are pruned and their jobs cancelled."""

from __future__ import annotations

from autoresearch.campaign import TrialState
from autoresearch.runner import run_campaign
from tracking import mlflow_client
from tests.autoresearch.runner.conftest import FAST, campaign_of, synthetic_config


def test_the_median_pruner_stops_losing_trials_and_their_jobs_are_cancelled(compute_client, tracking):
    data = synthetic_config(tracking, steps=20, step_seconds=0.1, budget={"max_trials": 14, "max_parallel": 3},
                            policy={"pruner": "median", "sampler": "random", "seed": 3})  # fmt: skip
    outcome = run_campaign(campaign_of(data), settings=FAST)

    trials = outcome.status.trials
    pruned = [t for t in trials if t.state is TrialState.pruned]
    assert pruned, [(t.number, t.state, t.value) for t in trials]
    assert {t.state for t in trials} <= {TrialState.complete, TrialState.pruned}
    compute_client.wait([t.job_id for t in pruned], timeout=60)
    mlflow = mlflow_client(tracking)
    cancelled = 0
    for t in pruned:
        job = compute_client.get(t.job_id)
        assert any("pruned at step" in e.reason for e in compute_client.events(job_id=t.job_id))
        assert mlflow.get_run(t.mlflow_run_id).info.status == "KILLED"
        if job.state.value == "succeeded":
            continue  # on a loaded machine the job may end in the moment between the verdict and the cancel
        assert job.state.value == "cancelled"
        cancelled += 1
        steps = [m.step for m in mlflow.get_metric_history(t.mlflow_run_id, "objective")]
        assert max(steps) < 20, "a pruned trial's job is stopped before its last step"
    assert cancelled >= 1, "at least one pruned trial's job is cancelled mid-run"
