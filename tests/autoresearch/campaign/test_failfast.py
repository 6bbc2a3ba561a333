"""`repeated_failure`: when the first trials all fail the same way, the campaign stops."""

from __future__ import annotations

from datetime import datetime, timedelta, UTC

from autoresearch.campaign import Campaign, TrialFailure, TrialRecord, TrialState, fruitless, repeated_failure

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _campaign(limit: int = 3) -> Campaign:
    return Campaign.model_validate({
        "name": "toy", "command": ["python", "train.py"], "objective": {"metric": "loss", "mode": "min"},
        "search_space": {"x": {"type": "float", "low": 0, "high": 1}},
        "budget": {"max_trials": 20, "max_consecutive_failures": limit},
    }, context={"check_paths": False})  # fmt: skip


def _trial(n: int, state: TrialState = TrialState.failed, line: str = "ModuleNotFoundError: No module named 'tqdm'",
           failure: TrialFailure | None = TrialFailure.user) -> TrialRecord:
    return TrialRecord(number=n, state=state, params={"x": 0.5}, failure_class=failure if state is TrialState.failed else None,
                       log_excerpt=f"{line}\njob job-{n}: attempt 1 failed\nTraceback ...", ended_at=T0 + timedelta(minutes=n))  # fmt: skip


def test_three_identical_failures_with_nothing_completed_stop_the_campaign() -> None:
    reason = repeated_failure(_campaign(), [_trial(0), _trial(1), _trial(2)])
    assert reason is not None
    assert "trials 0, 1, 2 all failed the same way (user)" in reason and "No module named 'tqdm'" in reason
    assert "run `command` by hand" in reason and "autoresearch resume toy" in reason


def test_fewer_failures_other_failures_a_completed_trial_or_a_zero_limit_go_on() -> None:
    campaign = _campaign()
    assert repeated_failure(campaign, [_trial(0), _trial(1)]) is None
    assert repeated_failure(campaign, [_trial(0), _trial(1, line="RuntimeError: CUDA out of memory"), _trial(2)]) is None
    assert repeated_failure(campaign, [_trial(0), _trial(1), _trial(2, failure=TrialFailure.resource)]) is None
    assert repeated_failure(campaign, [_trial(0, TrialState.complete), _trial(1), _trial(2), _trial(3)]) is None
    assert repeated_failure(campaign, [_trial(0, TrialState.pruned), _trial(1), _trial(2), _trial(3)]) is None
    assert repeated_failure(_campaign(0), [_trial(n) for n in range(5)]) is None


def test_only_failures_since_the_runner_started_count() -> None:
    trials = [_trial(n) for n in range(4)]
    assert repeated_failure(_campaign(), trials, since=T0 + timedelta(minutes=2)) is None  # 2 and 3 only
    assert repeated_failure(_campaign(2), trials, since=T0 + timedelta(minutes=2)) is not None


def test_a_limit_reached_with_failures_only_is_fruitless() -> None:
    campaign = _campaign()
    reason = fruitless(campaign, [_trial(0), _trial(1, failure=TrialFailure.no_metric), _trial(2, TrialState.cancelled)],
                       "budget.max_trials (3) reached")
    assert reason is not None and reason.startswith("budget.max_trials (3) reached with no result: every trial failed")
    assert "(2 failed: user 1, no_metric 1 and 1 cancelled)" in reason and "autoresearch status toy" in reason
    assert fruitless(campaign, [_trial(0), _trial(1, TrialState.complete)], "x") is None
    assert fruitless(campaign, [_trial(0), _trial(1, TrialState.pruned)], "x") is None
    assert fruitless(campaign, [_trial(0, TrialState.cancelled)], "x") is None
    assert fruitless(campaign, [], "x") is None
