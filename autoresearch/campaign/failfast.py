"""Failing fast on a broken setup: the first trials all failing the same way.

A command whose script does not exist, or an objective metric the log never prints, fails every
trial identically; running the whole budget only burns it. `repeated_failure` is the pure check
the runner makes after each verdict: when the last `budget.max_consecutive_failures` trials that
ended all failed the same way, and no trial of the campaign ever completed (or was pruned: its
metric was read), it returns the reason the campaign fails with.

"The same way" compares `failure_signature`s: the failure class, compute's classifier rule (when
the job failed), and the first error line with
what differs from job to job taken out (paths, such as each job's own wrapper script, ids and
numbers), so `/bin/sh: 19: .../job-983606f6ac.1.sh: pythn: not found` and the same line of
another job are one failure.

`fruitless` is the same judgement at the end of the budget: a campaign whose trials all failed
ends failed, never completed.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING

from autoresearch.campaign.states import TrialFailure, TrialState

if TYPE_CHECKING:
    from autoresearch.campaign.config import Campaign
    from autoresearch.campaign.records import TrialRecord

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
    TrialFailure.infra: (
        "the nodes fail: check `autoresearch compute status` and `autoresearch compute nodes` (health, and why each "
        "node last changed)"
    ),
}
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+[\w.-]*")
"""A file path (absolute or relative, with at least one separator)."""
_ID = re.compile(r"\b[0-9a-f]*\d[0-9a-f]*\b|\b\d[\w.]*")
"""A number, a hex id, or a token that starts with a digit (`0x1f`, `2.5e-3`, `19`)."""


def first_line(excerpt: str | None) -> str:
    """The first line of a trial's excerpt: its error (failed trials) or why it ended (cancelled)."""
    return (excerpt or "").strip().split("\n", 1)[0]


def failure_signature(trial: TrialRecord) -> tuple[TrialFailure | None, str | None, str]:
    """What two failed trials must share to count as the same failure: the class, the rule, and
    the first error line without paths and numbers (`<path>`, `N`)."""
    line = _PATH.sub("<path>", first_line(trial.log_excerpt))
    return trial.failure_class, trial.failure_rule, _ID.sub("N", line)


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
    if len({failure_signature(t) for t in last}) != 1:
        return None
    failure, line = last[-1].failure_class, first_line(last[-1].log_excerpt)
    check = (_CHECK.get(failure) if failure is not None else None) or "check the trials' logs (`autoresearch jobs logs JOB`)"
    check = check.format(cwd=campaign.cwd, metric=campaign.objective.metric)
    check += "" if check.endswith(("?", ".")) else "."
    numbers = ", ".join(str(t.number) for t in last)
    kind = failure.value if failure else "unknown"
    return (
        f"the setup looks broken: trials {numbers} all failed the same way ({kind}) and none completed: "
        f"{line!r}. Check: {check} Then fix the config file and run it again (`autoresearch run CONFIG.yaml`): "
        f"campaign {campaign.name} continues with the edited config (`autoresearch resume {campaign.name}` "
        f"would keep the one it ran with). budget.max_consecutive_failures is {limit}; 0 turns this check off."
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
