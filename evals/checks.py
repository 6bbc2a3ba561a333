"""Did a campaign end correctly? Pure checks on a snapshot of its ledger, jobs and job logs.

A campaign ends correctly when:
- it is completed and no trial is left proposed or running;
- no result is lost or duplicated: trial numbers are unique, no two trials share a job, every
  job of the campaign belongs to a trial, and every job that succeeded has a complete trial
  whose value is the last value the job printed;
- the reported best is the best complete trial;
- the trials counted against the budget exceed budget.max_trials by at most one slot (one trial).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field


class JobEnd(BaseModel):
    """One compute job of the campaign."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    job_id: str
    trial: int | None
    """The trial number in the job's labels."""
    state: str
    """The compute job state: succeeded, failed, cancelled ..."""
    last_value: float | None = None
    """The last objective value the job printed (its log), if any."""


class TrialEnd(BaseModel):
    """One trial as the ledger has it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    number: int
    state: str
    value: float | None = None
    job_id: str | None = None


class CampaignSnapshot(BaseModel):
    """Everything the checks look at, read once after the campaign ended."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    state: str
    """The campaign's state (completed, stopped, failed ...)."""
    mode: str = "min"
    max_trials: int
    trials: list[TrialEnd] = Field(default_factory=list)
    jobs: list[JobEnd] = Field(default_factory=list)
    reported_best: int | None = None
    """The trial number the campaign's status reports as best."""


def check_end(snap: CampaignSnapshot) -> list[str]:
    """The problems with how the campaign ended; empty when it ended correctly."""
    problems = []
    if snap.state != "completed":
        problems.append(f"campaign state is {snap.state}, not completed")
    stuck = [t.number for t in snap.trials if t.state in ("proposed", "running")]
    if stuck:
        problems.append(f"trials still proposed/running: {stuck}")
    numbers = [t.number for t in snap.trials]
    if len(set(numbers)) != len(numbers):
        problems.append("duplicate trial numbers")
    job_ids = [t.job_id for t in snap.trials if t.job_id]
    if len(set(job_ids)) != len(job_ids):
        problems.append("two trials share a job")
    by_trial = {t.number: t for t in snap.trials}
    owners = {t.job_id: t for t in snap.trials if t.job_id}
    for job in snap.jobs:
        trial = owners.get(job.job_id)
        if trial is None:
            problems.append(f"job {job.job_id} (trial label {job.trial}) belongs to no trial: a duplicate launch")
            continue
        if job.state == "succeeded":
            if trial.state != "complete":
                problems.append(f"job {job.job_id} succeeded but trial {trial.number} is {trial.state}: a lost result")
            elif job.last_value is None or trial.value is None or not math.isclose(
                job.last_value, trial.value, rel_tol=1e-9, abs_tol=1e-9
            ):
                problems.append(f"trial {trial.number} value {trial.value} != its job's last value {job.last_value}")
    complete = [t for t in snap.trials if t.state == "complete" and t.value is not None]
    if complete:
        pick = min if snap.mode == "min" else max
        best = pick(complete, key=lambda t: t.value if t.value is not None else math.nan)
        reported = by_trial.get(snap.reported_best) if snap.reported_best is not None else None
        if reported is None or reported.value != best.value:
            problems.append(
                f"reported best is trial {snap.reported_best}, but the best complete trial is {best.number}"
            )
    elif snap.reported_best is not None:
        problems.append(f"reported best trial {snap.reported_best} though no trial completed")
    counted = sum(t.state != "cancelled" for t in snap.trials)
    if counted > snap.max_trials + 1:
        problems.append(f"{counted} trials counted against a budget of {snap.max_trials} (more than one slot over)")
    return problems
