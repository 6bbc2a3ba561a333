"""What an ended attempt means for its job: the retry, requeue and final-state rules.

A pure function, so the rules are testable without processes:

- An attempt the daemon asked to stop ends with the stop's outcome, whatever its exit
  code (a job that saves a checkpoint on SIGTERM and exits 0 was still preempted):
  preempt/shutdown -> preempted, requeued; cancel -> cancelled; quarantine ->
  infra_failed, requeued away from that node; hang (no log output for the job's
  `progress_timeout_s`) -> infra_failed, classified (rule `hang`) and requeued on another
  node on the infra budget, like an infra failure; timeout -> timed_out, retried like a
  user failure while retries remain (with backoff), else the job fails.
- Otherwise: exit 0 -> succeeded; unknown exit (process vanished) -> lost, requeued;
  non-zero -> classified: infra -> infra_failed, requeued on another node while the
  host's infra budget lasts; user or resource -> failed, retried with exponential
  backoff and jitter while `max_retries` lasts.
- Preempted, lost and quarantined attempts never spend a retry.
- A job whose cancel was requested is cancelled instead of being requeued; its final
  reason is the reason given with the request.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from compute.records import AttemptOutcome, FailureClass, JobState

MAX_BACKOFF_S = 3600.0


class AttemptStopReason(str, enum.Enum):
    """Why the daemon asked an attempt to stop."""

    preempt = "preempt"
    cancel = "cancel"
    timeout = "timeout"
    shutdown = "shutdown"
    quarantine = "quarantine"
    hang = "hang"
    """Its log did not grow for the job's `progress_timeout_s`."""
    member_failed = "member_failed"
    """A gang member exited non-zero: the others are stopped; the attempt ends as that member did."""


@dataclass(frozen=True)
class Ending:
    """The attempt's outcome and what becomes of its job."""

    outcome: AttemptOutcome
    job_state: JobState
    reason: str
    failure_class: FailureClass | None = None
    retry_spent: bool = False
    infra_retry_spent: bool = False
    not_before: float = 0.0
    exclude_node: str | None = None


@dataclass(frozen=True)
class JobBudget:
    """The job's retry counters and settings at the moment its attempt ended."""

    retries_used: int
    max_retries: int
    infra_retries_used: int
    max_infra_retries: int
    backoff_s: float
    cancel_requested: str | None = None
    """The reason given with a cancel request; None when no cancel was requested."""
    progress_timeout_s: float | None = None
    """The job's hang timeout (named in the reason of a hang stop); None: no hang detection."""


def hang_reason(progress_timeout_s: float | None) -> str:
    """Why an attempt was stopped as hung: `no log output for 30 s (progress_timeout_s=30); stopped as hung`."""
    if progress_timeout_s is None:
        return "no log output for its progress_timeout_s; stopped as hung"
    return f"no log output for {progress_timeout_s:g} s (progress_timeout_s={progress_timeout_s:g}); stopped as hung"


def backoff_delay(base_s: float, retries_used: int, jitter: float) -> float:
    """base * 2^retries_used, scaled by `jitter` in [0.5, 1.5), capped at an hour."""
    return min(MAX_BACKOFF_S, base_s * (2**retries_used) * jitter)


def decide_ending(
    *,
    number: int,
    node: str,
    stop: AttemptStopReason | None,
    exit_code: int | None,
    classify: Callable[[], FailureClass],
    budget: JobBudget,
    now: float,
    jitter: float,
) -> Ending:
    if stop is AttemptStopReason.member_failed:
        stop = None  # the attempt ends as its first failed member did (node, exit code, class)
    ending = _decide(number, node, stop, exit_code, classify, budget, now, jitter)
    if budget.cancel_requested is not None and ending.job_state == JobState.pending:
        return Ending(ending.outcome, JobState.cancelled,
                      f"attempt {number} {ending.outcome.value}; cancelled: {_cancel_reason(budget)}",
                      ending.failure_class)
    return ending


def _cancel_reason(budget: JobBudget) -> str:
    return budget.cancel_requested or "cancelled by request"


def _decide(number: int, node: str, stop: AttemptStopReason | None, exit_code: int | None,
            classify: Callable[[], FailureClass], budget: JobBudget, now: float, jitter: float) -> Ending:
    code = f"exit code {exit_code}" if exit_code is not None else "no exit code"
    if stop in (AttemptStopReason.preempt, AttemptStopReason.shutdown):
        why = "preempted for higher-priority work" if stop == AttemptStopReason.preempt else "daemon shut down"
        return Ending(AttemptOutcome.preempted, JobState.pending, f"attempt {number} {why}; requeued with its checkpoint dir")
    if stop == AttemptStopReason.cancel:
        return Ending(AttemptOutcome.cancelled, JobState.cancelled, _cancel_reason(budget))
    if stop == AttemptStopReason.quarantine:
        return Ending(AttemptOutcome.infra_failed, JobState.pending,
                      f"attempt {number} stopped: node {node} was quarantined; requeued elsewhere",
                      FailureClass.infra, exclude_node=node)
    if stop == AttemptStopReason.hang:
        classify()  # its verdict (rule `hang`) goes into the excerpt and counts against the node
        what = f"on node {node}: {hang_reason(budget.progress_timeout_s)}"
        return _infra_failure(number, node, what, FailureClass.infra, budget)
    if stop == AttemptStopReason.timeout:
        return _user_failure(AttemptOutcome.timed_out, f"attempt {number} hit its time limit", None, budget, now, jitter)
    if exit_code is None:
        return Ending(AttemptOutcome.lost, JobState.pending, f"attempt {number} lost (process gone, no exit status); requeued")
    if exit_code == 0:
        return Ending(AttemptOutcome.succeeded, JobState.succeeded, f"attempt {number} exited 0")
    failure = classify()
    if failure == FailureClass.infra:
        return _infra_failure(number, node, f"failed on node {node} ({code}, infra)", failure, budget)
    return _user_failure(AttemptOutcome.failed, f"attempt {number} failed ({code}, {failure.value})", failure,
                         budget, now, jitter)


def _infra_failure(number: int, node: str, what: str, failure: FailureClass, budget: JobBudget) -> Ending:
    if budget.infra_retries_used < budget.max_infra_retries:
        return Ending(AttemptOutcome.infra_failed, JobState.pending,
                      f"attempt {number} {what}; requeued on another node "
                      f"(infra retry {budget.infra_retries_used + 1} of {budget.max_infra_retries})",
                      failure, infra_retry_spent=True, exclude_node=node)
    return Ending(AttemptOutcome.infra_failed, JobState.failed, f"attempt {number} {what}; infra retries used up",
                  failure)


def _user_failure(outcome: AttemptOutcome, what: str, failure: FailureClass | None, budget: JobBudget,
                  now: float, jitter: float) -> Ending:
    if budget.retries_used < budget.max_retries:
        delay = backoff_delay(budget.backoff_s, budget.retries_used, jitter)
        return Ending(outcome, JobState.pending,
                      f"{what}; retry {budget.retries_used + 1} of {budget.max_retries} in {delay:.1f}s",
                      failure, retry_spent=True, not_before=now + delay)
    tail = f"; no retries left (max_retries={budget.max_retries})" if budget.max_retries else ""
    return Ending(outcome, JobState.failed, what + tail, failure)
