"""Pruning: intermediate values reach the ledger, losers are pruned while their jobs run, and only then.

Deterministic under load: steps are slow enough (20 x 0.3 s) that the reader sees intermediate values
of every trial, and the assertions are the honest rule itself: a pruned trial's job was running
and was cancelled for it; a trial whose job ended on its own is never pruned.
"""

from __future__ import annotations

from autoresearch.campaign import Ledger, TrialState
from autoresearch.runner import run_campaign
from tests.autoresearch.runner.conftest import FAST, campaign_of, synthetic_config
from tracking import PRUNE_REASON_TAG, PRUNED_AT_STEP_TAG, mlflow_client

STEPS = 20


def test_the_median_pruner_stops_losing_trials_and_their_jobs_are_cancelled(compute_client, tracking):
    data = synthetic_config(tracking, steps=STEPS, step_seconds=0.3, budget={"max_trials": 12, "max_parallel": 3},
                            policy={"pruner": "median", "sampler": "random", "seed": 3})  # fmt: skip
    outcome = run_campaign(campaign_of(data), settings=FAST)

    trials = outcome.status.trials
    assert {t.state for t in trials} <= {TrialState.complete, TrialState.pruned}
    pruned = [t for t in trials if t.state is TrialState.pruned]
    assert pruned, [(t.number, t.state, t.value) for t in trials]
    mlflow = mlflow_client(tracking)
    ledger = Ledger.load(outcome.name)
    for t in trials:
        job = compute_client.get(t.job_id)
        run = mlflow.get_run(t.mlflow_run_id)
        if t.state is TrialState.complete:
            assert job.state.value == "succeeded"  # never pruned after its job ended
            assert PRUNED_AT_STEP_TAG not in run.data.tags and run.info.status == "FINISHED"
            continue
        assert job.state.value == "cancelled", "only a running job is pruned: it is stopped for it"
        step = int(run.data.tags[PRUNED_AT_STEP_TAG])
        assert job.state_reason.startswith(f"trial {t.number} pruned at step {step}: the median pruner")
        assert run.data.tags[PRUNE_REASON_TAG] == job.state_reason and run.info.status == "KILLED"
        assert any("pruned at step" in e.reason for e in compute_client.events(job_id=t.job_id))
        logged = [m.step for m in mlflow.get_metric_history(t.mlflow_run_id, "objective")]
        assert step in logged and step in ledger.trial(t.number).intermediate_values
        assert step < STEPS, "never pruned at its last step"
        assert max(logged) < STEPS, "a pruned trial is stopped before its last step"

