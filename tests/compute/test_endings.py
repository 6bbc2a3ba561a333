"""The pure rules that turn an ended attempt into an outcome and the job's next state."""

from __future__ import annotations

import pytest

from compute import AttemptOutcome, FailureClass, JobState
from compute.endings import JobBudget, AttemptStopReason, backoff_delay, decide_ending


def end(stop=None, exit_code=1, failure=FailureClass.user, retries=(0, 0), infra=(0, 3), cancel=None):
    return decide_ending(
        number=1, node="local", stop=stop, exit_code=exit_code, classify=lambda: failure,
        budget=JobBudget(retries[0], retries[1], infra[0], infra[1], backoff_s=2.0, cancel_requested=cancel),
        now=1000.0, jitter=1.0,
    )


@pytest.mark.parametrize("code", [0, 1, -15, None])
def test_a_stopped_attempt_takes_the_outcome_of_its_stop_whatever_its_exit_code(code):
    assert (end(AttemptStopReason.preempt, code).outcome, end(AttemptStopReason.preempt, code).job_state) == (
        AttemptOutcome.preempted, JobState.pending)
    assert end(AttemptStopReason.cancel, code).job_state == JobState.cancelled
    assert end(AttemptStopReason.timeout, code).outcome == AttemptOutcome.timed_out


def test_preemption_lost_and_quarantine_spend_no_retry():
    for ending in (end(AttemptStopReason.preempt, 0), end(None, None), end(AttemptStopReason.quarantine, -9)):
        assert ending.job_state == JobState.pending
        assert not ending.retry_spent and not ending.infra_retry_spent
    assert end(None, None).outcome == AttemptOutcome.lost
    assert end(AttemptStopReason.quarantine, -9).exclude_node == "local"


def test_user_failure_retries_with_exponential_backoff_until_the_budget_is_spent():
    first = end(exit_code=3, retries=(0, 2))
    second = end(exit_code=3, retries=(1, 2))
    last = end(exit_code=3, retries=(2, 2))
    assert first.retry_spent and first.not_before == 1000.0 + 2.0
    assert second.not_before == 1000.0 + 4.0
    assert (last.job_state, last.outcome) == (JobState.failed, AttemptOutcome.failed)
    assert "no retries left (max_retries=2)" in last.reason
    assert backoff_delay(2.0, 30, 1.0) == 3600.0


def test_timeout_retries_while_retries_remain():
    assert end(AttemptStopReason.timeout, -15, retries=(0, 1)).job_state == JobState.pending
    assert end(AttemptStopReason.timeout, -15, retries=(1, 1)).job_state == JobState.failed


def test_infra_failures_requeue_elsewhere_on_the_infra_budget():
    ending = end(exit_code=1, failure=FailureClass.infra, infra=(0, 1))
    assert (ending.outcome, ending.job_state, ending.exclude_node) == (
        AttemptOutcome.infra_failed, JobState.pending, "local")
    assert ending.infra_retry_spent and not ending.retry_spent
    assert end(exit_code=1, failure=FailureClass.infra, infra=(1, 1)).job_state == JobState.failed


@pytest.mark.parametrize("code", [0, -15, -9])
def test_a_hung_attempt_is_an_infra_failure_requeued_on_the_infra_budget_whatever_its_exit_code(code):
    asked: list[bool] = []
    ending = decide_ending(
        number=1, node="local", stop=AttemptStopReason.hang, exit_code=code,
        classify=lambda: asked.append(True) or FailureClass.infra,
        budget=JobBudget(0, 2, 0, 3, backoff_s=2.0, progress_timeout_s=30.0), now=1000.0, jitter=1.0,
    )
    assert asked, "the classifier is asked, so the excerpt names rule hang"
    assert (ending.outcome, ending.job_state, ending.failure_class, ending.exclude_node) == (
        AttemptOutcome.infra_failed, JobState.pending, FailureClass.infra, "local")
    assert ending.infra_retry_spent and not ending.retry_spent
    assert "no log output for 30 s (progress_timeout_s=30); stopped as hung; requeued" in ending.reason
    spent = end(AttemptStopReason.hang, -15, infra=(3, 3))
    assert (spent.job_state, spent.outcome) == (JobState.failed, AttemptOutcome.infra_failed)
    assert "infra retries used up" in spent.reason


def test_a_requested_cancel_wins_over_a_requeue():
    ending = end(AttemptStopReason.preempt, 0, cancel="pruned at step 4")
    assert (ending.outcome, ending.job_state) == (AttemptOutcome.preempted, JobState.cancelled)
    assert ending.reason == "attempt 1 preempted; cancelled: pruned at step 4"
    assert end(None, 0, cancel="pruned at step 4").job_state == JobState.succeeded


def test_a_cancelled_job_keeps_the_reason_given_with_the_request():
    assert end(AttemptStopReason.cancel, -15, cancel="pruned at step 4").reason == "pruned at step 4"
