"""Failing fast on a broken setup: the first trials all failing the same way.

A command whose script does not exist, or an objective metric the log never prints, fails every
trial identically; running the whole budget only burns it. `repeated_failure` is the pure check
the runner makes after each verdict: when the last `budget.max_consecutive_failures` trials that
ended all failed with the same class and the same first error line, and no trial of the
campaign ever completed (or was pruned: its metric was read), it returns the reason the
campaign fails with. `fruitless` is the same judgement at the end of the budget: a campaign whose
trials all failed ends failed, never completed.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.records import TrialFailure, TrialRecord, TrialState

_CHECK = {
    TrialFailure.user: "run `command` by hand in cwd {cwd}: does the script exist, do its arguments and imports work?",
    TrialFailure.no_metric: (
        "compare objective.metric {metric!r} with the names the log holds (above), or add a "
        "metrics.patterns regex with a group named {metric} for the line that prints it"
    ),
    TrialFailure.resource: "the trials run out of memory or another limit: check compute.gpus and the batch size",
    TrialFailure.timed_out: "every trial hits compute.time_limit_s: raise it, or shorten the training",
    TrialFailure.non_finite: "the objective is NaN or infinite from the start: check the search space (learning rates)",
    TrialFailure.bad_patch: "the proposed patches do not apply: check code.editable",
    TrialFailure.infra: "the nodes fail: check `autoresearch compute status` and `autoresearch nodes list`",
}


def first_line(excerpt: str | None) -> str:
    """The first line of a trial's excerpt: its error (failed trials) or why it ended (cancelled)."""
    return (excerpt or "").strip().split("\n", 1)[0]


def repeated_failure(campaign: Campaign, trials: list[TrialRecord], since: datetime | None = None) -> str | None:
    """Why the campaign must stop now (the same failure `max_consecutive_failures` times in a row
    with nothing completed), or None. `since`: only trials that ended after it count (a resumed
    campaign gets a fresh count)."""
    limit = campaign.budget.max_consecutive_failures
    if limit <= 0 or any(t.state in (TrialState.complete, TrialState.pruned) for t in trials):
        return None
    failed = [t for t in trials if t.state is TrialState.failed and (since is None or (t.ended_at and t.ended_at >= since))]
    failed.sort(key=lambda t: (t.ended_at.timestamp() if t.ended_at else 0.0, t.number))
    last = failed[-limit:]
    if len(last) < limit:
        return None
    signatures = {(t.failure_class, first_line(t.log_excerpt)) for t in last}
    if len(signatures) != 1:
        return None
    failure, line = signatures.pop()
    check = (_CHECK.get(failure) if failure is not None else None) or "check the trials' logs (`autoresearch jobs logs JOB`)"
    check = check.format(
        cwd=campaign.cwd, metric=campaign.objective.metric
    )
    numbers = ", ".join(str(t.number) for t in last)
    kind = failure.value if failure else "unknown"
    return (
        f"the setup looks broken: trials {numbers} all failed the same way ({kind}) and none completed: "
        f"{line!r}. Check: {check} Then `autoresearch resume {campaign.name}` (budget.max_consecutive_failures "
        f"is {limit}; 0 turns this check off)"
    )


def fruitless(campaign: Campaign, trials: list[TrialRecord], limit: str) -> str | None:
    """Why a campaign at a limit (`limit`: its text) fails instead of completing: no trial
    completed or was pruned, and at least one failed. None when it has a result, or nothing failed."""
    if any(t.state in (TrialState.complete, TrialState.pruned) for t in trials):
        return None
    failed = Counter(t.failure_class.value if t.failure_class else "unknown" for t in trials if t.state is TrialState.failed)
    if not failed:
        return None
    classes = ", ".join(f"{kind} {n}" for kind, n in failed.most_common())
    cancelled = sum(t.state is TrialState.cancelled for t in trials)
    others = f" and {cancelled} cancelled" if cancelled else ""
    return (
        f"{limit} with no result: every trial failed ({sum(failed.values())} failed: {classes}{others}). See why in "
        f"`autoresearch status {campaign.name}` and the jobs' logs (`autoresearch jobs logs JOB`); fix the cause, then "
        f"run the config again with a larger budget.max_trials (or --max-trials N)"
    )
