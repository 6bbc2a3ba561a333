"""`repeated_failure`: when the first trials all fail the same way, the campaign stops."""

from __future__ import annotations

import re
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


def test_the_same_error_in_each_jobs_own_wrapper_script_is_one_failure() -> None:
    """The shell names each job's own wrapper (and its line number): those are not the failure."""
    lines = ["/bin/sh: 19: /home/u/.autoresearch/compute/run/job-983606f6ac.1.sh: pythn: not found",
             "/home/u/.autoresearch/compute/run/job-f3e3c0764f.1.sh: 19: pythn: not found",
             "/home/u/.autoresearch/compute/run/job-0a1b2c3d4e.2.sh: 23: pythn: not found"]  # fmt: skip
    dash = [_trial(n, line=lines[n % 2 + 1]) for n in range(3)]
    assert repeated_failure(_campaign(), dash) is not None
    files = [_trial(n, line=f"FileNotFoundError: [Errno 2] No such file: '/runs/trial-{n}/data.bin'") for n in range(3)]
    assert repeated_failure(_campaign(), files) is not None
    assert repeated_failure(_campaign(), [_trial(0, line=lines[0]), _trial(1, line="pythn: not found"),
                                          _trial(2, line="bash: 1: ython: not found")]) is None  # fmt: skip
    ruled = [_trial(n).model_copy(update={"failure_rule": rule}) for n, rule in enumerate(["a", "a", "b"])]
    assert repeated_failure(_campaign(), ruled) is None  # compute's classifier told them apart
    assert repeated_failure(_campaign(), ruled[:2] + [ruled[0].model_copy(update={"number": 2})]) is not None


def test_the_advice_names_commands_that_exist_and_reads_as_sentences() -> None:
    import click

    from autoresearch.cli import _register, app

    _register()
    root = app
    ctx = click.Context(root)
    for failure in TrialFailure:
        reason = repeated_failure(_campaign(), [_trial(n, failure=failure) for n in range(3)])
        assert reason is not None and re.search(r"[.?] Then ", reason) and ".. " not in reason and "  " not in reason
        assert "`autoresearch run CONFIG.yaml`" in reason  # resume keeps the old config: the advice says so
        for named in re.findall(r"`autoresearch ([a-z-]+(?: [a-z-]+)?)", reason):
            group, _, sub = named.partition(" ")
            command = root.get_command(ctx, group)  # type: ignore[attr-defined]
            assert command is not None, named
            if sub and isinstance(command, click.Group):
                assert command.get_command(ctx, sub) is not None, named


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
