"""How a trial's value is read (`objective.aggregate`) and the pruner's settings (`policy.pruner` as
a mapping), on real campaigns: a job of ours prints a known curve, the compute daemon runs it, the
runner reads its log, the ledger (an Optuna study) and MLflow record what it decided.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import optuna
import pytest

from autoresearch.campaign import CampaignPaths, Ledger, TrialState
from autoresearch.runner import run_campaign
from tests.autoresearch.runner.conftest import FAST, campaign_of
from tracking import PRUNED_AT_STEP_TAG, VALUE_TAG, TrackingConfig, mlflow_client

JOBS = Path(__file__).resolve().parent / "jobs"


def curve_config(tracking: TrackingConfig, curve: str, *, aggregate: str = "last", pruner: Any = "none",
                 other: tuple[str, str] = ("", ""), step_seconds: float = 0.0, linger: float = 0.0,
                 trials: int = 1, parallel: int = 1) -> dict[str, Any]:  # fmt: skip
    """A campaign whose trials print `curve` (trials in other[0] print other[1]); objective: min."""
    return {
        "name": f"curve-{uuid.uuid4().hex[:8]}",
        "command": ["python", "curve_job.py", "--trial", "{trial}", "--x", "{x}", "--curve", curve,
                    "--other-trials", other[0], "--other-curve", other[1], "--step-seconds", str(step_seconds),
                    "--linger", str(linger)],
        "cwd": str(JOBS),
        "objective": {"metric": "objective", "mode": "min", "aggregate": aggregate},
        "search_space": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
        "budget": {"max_trials": trials, "max_parallel": parallel},
        "policy": {"kind": "optuna", "seed": 1, "pruner": pruner},
        "tracking": {"uri": tracking.tracking_uri},
    }  # fmt: skip


@pytest.mark.parametrize(("aggregate", "value", "running"), [
    ("last", 2.0, {1: 5.0, 2: 1.0, 3: 3.0, 4: 2.0}),
    ("best", 1.0, {1: 5.0, 2: 1.0, 3: 1.0, 4: 1.0}),
    ("mean_last:2", 2.5, {1: 5.0, 2: 3.0, 3: 2.0, 4: 2.5}),
])  # fmt: skip
def test_a_trials_value_is_the_aggregate_of_its_points(compute_client, tracking, aggregate, value, running):
    # a median pruner with 5 startup trials never prunes this lone trial, but sees its intermediate values
    data = curve_config(tracking, "5,1,3,2", aggregate=aggregate, pruner="median")

    outcome = run_campaign(campaign_of(data), settings=FAST)

    (trial,) = outcome.status.trials
    assert trial.state is TrialState.complete and trial.value == value
    assert outcome.status.best_trial is not None and outcome.status.best_trial.value == value
    ledger = Ledger.load(outcome.name)
    assert ledger.trial(trial.number).intermediate_values == running, "the pruner sees the value as of each step"
    study = optuna.load_study(study_name=outcome.name, storage=f"sqlite:///{CampaignPaths.of(outcome.name).ledger_db}")
    assert study.trials[0].value == value
    run = mlflow_client(tracking).get_run(trial.mlflow_run_id)
    assert float(run.data.tags[VALUE_TAG]) == value
    logged = [m.value for m in mlflow_client(tracking).get_metric_history(trial.mlflow_run_id, "objective")]
    assert sorted(logged) == [1.0, 2.0, 3.0, 5.0], "MLflow keeps every point as printed"


def test_a_campaign_without_a_pruner_records_its_learning_curve(compute_client, tracking):
    """The ledger holds each trial's intermediate values with `pruner: none` too (the report's and
    the dashboard's learning curves read them there)."""
    data = curve_config(tracking, "5,1,3,2", aggregate="best")

    outcome = run_campaign(campaign_of(data), settings=FAST)

    (trial,) = outcome.status.trials
    assert trial.state is TrialState.complete and trial.value == 1.0
    assert Ledger.load(outcome.name).trial(trial.number).intermediate_values == {1: 5.0, 2: 1.0, 3: 1.0, 4: 1.0}


def test_best_respects_the_mode(compute_client, tracking):
    data = curve_config(tracking, "5,1,3,2", aggregate="best")
    data["objective"]["mode"] = "max"

    outcome = run_campaign(campaign_of(data), settings=FAST)

    assert [t.value for t in outcome.status.trials] == [5.0]


def _pruned_at(tracking: TrackingConfig, trial) -> int:
    return int(mlflow_client(tracking).get_run(trial.mlflow_run_id).data.tags[PRUNED_AT_STEP_TAG])


def test_no_trial_is_pruned_before_warmup_steps(compute_client, tracking):
    # trial 1 is worse than trial 0 at every step, from step 1: the pruner waits for step 4
    data = curve_config(tracking, "1,1,1,1,1,1,1,1", other=("1", "9,9,9,9,9,9,9,9"), step_seconds=0.3, trials=2,
                        pruner={"kind": "median", "startup_trials": 1, "warmup_steps": 4})  # fmt: skip

    outcome = run_campaign(campaign_of(data), settings=FAST)

    first, second = outcome.status.trials
    assert first.state is TrialState.complete and second.state is TrialState.pruned
    assert _pruned_at(tracking, second) >= 4
    assert compute_client.get(second.job_id).state.value == "cancelled"


def test_no_trial_is_pruned_before_startup_trials_completed(compute_client, tracking):
    # trials 1 and 3 are worse at every step; only trial 3 comes after 2 completed trials
    data = curve_config(tracking, "1,1,1,1,1,1", other=("1,3", "9,9,9,9,9,9"), step_seconds=0.3, trials=4,
                        pruner={"kind": "median", "startup_trials": 2})  # fmt: skip

    outcome = run_campaign(campaign_of(data), settings=FAST)

    states = [t.state for t in outcome.status.trials]
    assert states == [TrialState.complete, TrialState.complete, TrialState.complete, TrialState.pruned]
    assert outcome.status.trials[1].value == 9.0


def test_a_trial_is_never_pruned_at_its_last_step(compute_client, tracking):
    # Trial 5 equals the others until its last step, where it is worse; its job has printed that
    # step and is ending (a 3 s teardown) when the runner reads it: not a prune, its result.
    data = curve_config(tracking, "1,1,1,0.5", other=("5", "1,1,1,5"), step_seconds=0.2, linger=3.0, trials=6,
                        parallel=5, pruner="median")  # fmt: skip

    outcome = run_campaign(campaign_of(data), settings=FAST)

    last = outcome.status.trials[5]
    assert [t.state for t in outcome.status.trials] == [TrialState.complete] * 6
    assert last.value == 5.0 and compute_client.get(last.job_id).state.value == "succeeded"
    assert PRUNED_AT_STEP_TAG not in mlflow_client(tracking).get_run(last.mlflow_run_id).data.tags
