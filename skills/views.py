"""Compact views of compute records for skill outputs, and the compute error mapping."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import BaseModel, ConfigDict

from compute.records import AttemptOutcome, FailureClass, Job, JobState
from compute.priority import priority_name
from skills.context import SkillContext
from skills.models import ErrorCode, SkillFailure
from tracking import CAMPAIGN_LABEL, HOLDOUT_OF_LABEL, RUN_LABEL, RunNotFound, TrackingError

JOB_ID_HINT = "Job ids look like job-3f9a2c1b7d; list_jobs shows them"


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class JobSummary(_View):
    """One job in a line: what a list or a status check needs."""

    id: str
    """The job id (`job-` + 10 hex chars)."""
    name: str
    state: JobState
    priority: int
    """0-100; see `priority_class`."""
    priority_class: str
    """The named class (idle, low, normal, high, urgent; `normal+5` in between)."""
    gpus: int
    """GPU slots the job asks for (per node)."""
    nodes: int = 1
    """Distinct nodes the job spans (a gang when more than 1)."""
    node: str | None = None
    """Node of the latest attempt."""
    attempts: int = 0
    """Attempts so far (preemptions and infra faults make new ones)."""
    exit_code: int | None = None
    """Exit code of the latest finished attempt (negative: killed by that signal)."""
    failure_class: FailureClass | None = None
    """For a failed latest attempt: infra, user or resource."""
    state_reason: str = ""
    """Why it is in its state."""
    waiting_reason: str | None = None
    """For a pending job: why it has not started (the scheduler's last pass), e.g. `node local-0 is cordoned`."""
    queue_position: int | None = None
    """For a pending job: its place among the waiting jobs (1 = next; 0 while in retry backoff)."""
    estimated_start: float | None = None
    """For a pending job: the earliest Unix time it could start, from running jobs' time limits; None if unknown."""
    labels: dict[str, str] = {}
    mlflow_run_id: str | None = None
    """The MLflow run the job logs into, if it was tied to one."""
    created_at: float
    updated_at: float

    @classmethod
    def of(cls, job: Job) -> JobSummary:
        last = job.last_attempt
        return cls(
            id=job.id,
            name=job.spec.name,
            state=job.state,
            priority=job.priority,
            priority_class=priority_name(job.priority),
            gpus=job.spec.resources.gpus,
            nodes=job.spec.resources.nodes,
            node=last.node if last else None,
            attempts=len(job.attempts),
            exit_code=last.exit_code if last else None,
            failure_class=last.failure_class if last else None,
            state_reason=job.state_reason,
            waiting_reason=job.waiting_reason,
            queue_position=job.queue_position,
            estimated_start=job.estimated_start,
            labels=job.spec.labels,
            mlflow_run_id=job.spec.labels.get(RUN_LABEL),
            created_at=job.created_at,
            updated_at=job.updated_at,
        )


class AttemptView(_View):
    """One execution of a job."""

    number: int
    node: str
    gpus: list[int]
    started_at: float
    ended_at: float | None = None
    outcome: AttemptOutcome | None = None
    """None while running."""
    exit_code: int | None = None
    failure_class: FailureClass | None = None
    stop_reason: str | None = None
    """Why it was asked to stop (preempt, cancel, timeout, shutdown, quarantine, hang), if it was."""


def withheld(job: Job) -> bool:
    """A hidden holdout's evaluation job (`HOLDOUT_OF_LABEL`): no skill shows it, so no agent reads the
    evaluation it is judged on (docs/results.md, "A hidden holdout")."""
    return HOLDOUT_OF_LABEL in job.spec.labels


def visible_job(ctx: SkillContext, job_id: str, field: str = "job_id") -> Job:
    """The job `job_id`; a withheld one (`withheld`) is refused, saying why and where people see it."""
    with compute_errors(field):
        job = ctx.client.get(job_id)
    if withheld(job):
        campaign = job.spec.labels.get(CAMPAIGN_LABEL, "its campaign")
        raise SkillFailure(
            ErrorCode.failed,
            f"job {job_id} is the hidden holdout evaluation of trial {job.spec.labels[HOLDOUT_OF_LABEL]} of {campaign}: "
            "its command, state and log are withheld from every tool, so the policy cannot fit the holdout; "
            f"people see its result in `autoresearch status {campaign}` or the report (its log: "
            f"`autoresearch jobs logs {job_id}`)",
            field=field,
        )
    return job


@contextmanager
def compute_errors(field: str = "job_id") -> Iterator[None]:
    """Turn compute errors into typed skill failures (unknown job -> not_found on `field`)."""
    from compute.errors import ComputeError, DaemonNotRunning, JobNotFound

    try:
        yield
    except JobNotFound as exc:
        raise SkillFailure(ErrorCode.not_found, f"no job {exc.job_id!r}. {JOB_ID_HINT}", field=field) from exc
    except DaemonNotRunning as exc:
        raise SkillFailure(ErrorCode.unavailable, str(exc)) from exc
    except ComputeError as exc:  # refused requests (cwd missing, more GPUs than a node has ...)
        raise SkillFailure(ErrorCode.failed, str(exc)) from exc


@contextmanager
def tracking_errors(ctx: SkillContext) -> Iterator[None]:
    """Turn an unknown run into `not_found` and a failing tracking store into `unavailable` naming the store."""
    try:
        yield
    except RunNotFound as exc:
        raise SkillFailure(ErrorCode.not_found, str(exc), field="run_id") from exc
    except TrackingError as exc:
        raise SkillFailure(
            ErrorCode.unavailable,
            f"the MLflow tracking store {ctx.tracking.tracking_uri} failed: {exc}; check that it is "
            "reachable, or pass another one (--tracking-uri / MLFLOW_TRACKING_URI)",
        ) from exc
