"""CampaignStatus JSON, the budget check, and how many trials to propose."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, UTC
from pathlib import Path

from autoresearch.campaign import (
    BudgetUsed,
    CampaignState,
    Ledger,
    Proposal,
    CampaignStopReason,
    TrialFailure,
    campaign_status,
    free_slots,
    stop_reason,
)
from autoresearch.campaign import CampaignPaths
from autoresearch.runner.lock import CampaignLock
from tests.autoresearch.campaign.conftest import make_campaign


def _ledger(tmp_path: Path, **overrides: object) -> Ledger:
    ledger = Ledger.open(make_campaign(tmp_path, **overrides))
    for x in (0.0, 1.0, 2.0, 3.0, -1.0):
        ledger.admit(Proposal(params={"x": x, "y": 1, "kind": "a"}))
    for n in range(4):
        ledger.mark_launched(n, f"job-{n:010d}")
    ledger.set_mlflow_run(0, "run0")
    ledger.complete(0, 5.0, gpu_seconds=1800)
    ledger.complete(1, 2.0, gpu_seconds=1800)
    ledger.fail(2, TrialFailure.user, log_excerpt="Traceback ...", gpu_seconds=3600)
    return ledger


def test_status_json_has_exactly_the_documented_fields(home: Path, tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, objective={"metric": "loss", "mode": "min"})
    ledger.cancel(4, "stopped by a person")
    ledger.add_llm_cost(1.5)

    with CampaignLock(CampaignPaths(ledger.folder)):  # a live runner holds it (else: interrupted)
        data = json.loads(campaign_status(ledger).model_dump_json())

    assert set(data) == {
        "name",
        "state",
        "state_reason",
        "budget_used",
        "best_trial",
        "runner_up",
        "separable",
        "trials",
        "tracking_pending",
        "tracking_writer_pid",
        "holdout",
    }
    assert (data["tracking_pending"], data["tracking_writer_pid"]) == (0, None)
    assert data["holdout"] is None  # no objective.holdout  # no MLflow write waits
    assert set(data["budget_used"]) == {"trials", "gpu_hours", "real_gpus", "llm_usd", "elapsed"}
    assert data["budget_used"]["real_gpus"] is False  # not recorded as physical GPUs: slot-hours
    fields = {"number", "state", "params", "value", "job_id", "mlflow_run_id", "failure_class", "reason",
              "confirms", "mean", "sd", "n", "suspect", "suspect_reason", "nodes", "suspect_rerun_of",
              "waiting_reason"}
    assert all(set(t) == fields for t in data["trials"])
    assert (data["trials"][2]["failure_class"], data["trials"][2]["reason"]) == ("user", "Traceback ...")
    assert data["trials"][4]["reason"] == "stopped by a person" and data["trials"][0]["reason"] is None
    assert (data["name"], data["state"]) == ("toy", "running")
    assert data["budget_used"]["trials"] == 4  # the cancelled trial does not count
    assert data["budget_used"]["gpu_hours"] == 2.0 and data["budget_used"]["llm_usd"] == 1.5
    assert data["budget_used"]["elapsed"] >= 0
    assert data["best_trial"]["number"] == 1 and data["best_trial"]["value"] == 2.0  # mode: min
    assert (data["best_trial"]["mean"], data["best_trial"]["sd"], data["best_trial"]["n"]) == (2.0, None, 1)
    assert (data["runner_up"], data["separable"]) == (0, False)  # no confirmation measured the noise
    assert [t["state"] for t in data["trials"]] == ["complete", "complete", "failed", "running", "cancelled"]
    assert data["trials"][0]["job_id"] == "job-0000000000" and data["trials"][0]["mlflow_run_id"] == "run0"
    assert data["trials"][0]["params"] == {"x": 0.0, "y": 1, "kind": "a"}


def test_elapsed_stops_when_the_campaign_ends(home: Path, tmp_path: Path) -> None:
    ledger = _ledger(tmp_path)
    ledger.set_state(CampaignState.stopped, "person said stop")
    later = datetime.now(UTC) + timedelta(hours=5)
    status = campaign_status(ledger, now=later)
    assert status.state is CampaignState.stopped
    assert status.budget_used.elapsed < 3600


def test_stop_reason_checks_each_limit(tmp_path: Path) -> None:
    start = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
    campaign = make_campaign(
        tmp_path,
        objective={"metric": "score", "mode": "max", "target": 9.5},
        budget={"max_trials": 10, "max_gpu_hours": 2, "max_llm_usd": 1, "deadline": "2026-11-30T23:00:00+00:00"},
    )

    def used(trials: int = 3, gpu: float = 0.5, usd: float = 0.1) -> BudgetUsed:
        return BudgetUsed(trials=trials, gpu_hours=gpu, llm_usd=usd, elapsed=60)

    assert stop_reason(campaign, used(), 9.0, start, now=start) is None
    assert stop_reason(campaign, used(), 9.5, start, now=start) is CampaignStopReason.target_reached
    assert stop_reason(campaign, used(trials=10), 9.0, start, now=start) is CampaignStopReason.max_trials
    assert stop_reason(campaign, used(gpu=2.0), 9.0, start, now=start) is CampaignStopReason.max_gpu_hours
    assert stop_reason(campaign, used(usd=1.0), None, start, now=start) is CampaignStopReason.max_llm_usd
    assert stop_reason(campaign, used(), 9.0, start, now=start + timedelta(hours=3)) is CampaignStopReason.deadline


def test_free_slots_counts_unlaunched_trials_and_the_trial_budget(home: Path, tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, budget={"max_trials": 6, "max_parallel": 3})
    # trial 3 running, trial 4 proposed but not launched: one slot of three is free
    assert free_slots(ledger.campaign, ledger.trials()) == 1
    ledger.complete(3, 1.0)
    assert free_slots(ledger.campaign, ledger.trials()) == 1  # 5 of 6 trials used
    ledger.cancel(4)
    assert free_slots(ledger.campaign, ledger.trials()) == 2  # cancelled trials give their budget back
