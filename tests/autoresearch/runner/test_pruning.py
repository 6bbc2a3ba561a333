"""Pruning: intermediate values reach the ledger, losers are pruned while their jobs run, and only then.

Deterministic under load: steps are slow enough (20 x 0.3 s) that the reader sees intermediate values
of every trial, and the assertions are the honest rule itself: a pruned trial's job was running
and was cancelled for it; a trial whose job ended on its own is never pruned.
"""

from __future__ import annotations

from autoresearch.campaign import Ledger, TrialState
from autoresearch.runner import run_campaign
from tests.autoresearch.runner.conftest import FAST, Background, campaign_jobs, campaign_of, synthetic_config, wait_until
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
        assert ledger.trial(t.number).prune_step == step, "the ask is recorded as data in the ledger"
        assert step < STEPS, "never pruned at its last step"
        assert max(logged) < STEPS, "a pruned trial is stopped before its last step"



def test_a_job_cancelled_by_hand_with_a_reason_that_reads_like_a_prune_is_a_cancel(compute_client, tracking):
    data = synthetic_config(tracking, steps=STEPS, step_seconds=0.3, budget={"max_trials": 1, "max_parallel": 1},
                            policy={"pruner": "median", "seed": 3})  # fmt: skip
    runner = Background(lambda: run_campaign(campaign_of(data), settings=FAST))
    job = wait_until(lambda: next((j for j in campaign_jobs(compute_client, data["name"]) if j.state.value == "running"),
                                  None), what="the first trial's job to run")  # fmt: skip
    compute_client.cancel(job.id, reason="trial 0 pruned at step 3: it looked bad to me")  # a person's words
    outcome = runner.join()

    first = Ledger.load(outcome.name).trial(0)
    assert (first.job_id, first.state) == (job.id, TrialState.cancelled), "a person's cancel is not a prune"
    assert first.prune_step is None
