"""Skills over compute jobs: submit, status, list, cancel, wait."""

from __future__ import annotations

import os
import time
from typing import Annotated, Any

from pydantic import Field

from compute.records import Job, JobState
from compute.spec import JobRequest, JobSpec
from skills.context import SkillContext
from skills.models import Index, SkillFailure, SkillInput, SkillOutput
from skills.views import AttemptView, JobSummary, compute_errors, tracking_errors, visible_job, withheld
from tracking import EXPERIMENT_LABEL, RUN_LABEL, create_job_run, tag_run_with_job

JobId = Annotated[str, Field(min_length=1, max_length=100)]


class MlflowRunRequest(SkillInput):
    """Tie the job to a new MLflow run."""

    experiment: Annotated[str, Field(min_length=1, max_length=500)]
    """Experiment name; created if absent."""
    run_name: str | None = None
    """Run name; default: the job name."""


class SubmitJobInput(SkillInput, JobRequest):
    """The command, and every setting of `compute.JobRequest` (gpus, nodes, cpus, memory_gb,
    launcher, priority, preemptible, project, borrowed_only, retries, limits, image), declared there once."""

    argv: list[str] | str
    """The command, as a list (`["python", "train.py", "--lr", "0.01"]`); a string only with shell=true."""
    shell: bool = False
    """Run argv (one string) through `sh -c`."""
    name: Annotated[str, Field(min_length=1, max_length=200)] = "job"
    """A human-readable name."""
    cwd: str | None = None
    """Working directory; relative paths resolve against the server's directory."""
    env: dict[str, str] = {}
    """Extra environment variables (stored and shown as given: no credentials here)."""
    secret_env: list[str] = []
    """Names of credentials the job needs (e.g. HF_TOKEN), passed from the compute daemon's
    environment; only the names are stored, and read_logs redacts their values."""
    labels: dict[str, str] = {}
    """Key/value labels, filterable in list_jobs."""
    idempotency_key: str | None = None
    """Submitting again with the same key returns the existing job."""
    data: dict[str, str] = {}
    """Datasets, name -> path (relative paths resolve against the server's directory): each is
    AR_DATA_<NAME> in the job's environment, mounted read-only at /data/<name> in a container."""
    mlflow: MlflowRunRequest | None = None
    """Create an MLflow run for the job: it gets MLFLOW_TRACKING_URI/EXPERIMENT_ID/RUN_ID, so
    `mlflow.start_run()` in the script logs into that run, and `key: value` lines it prints
    are read by fetch_metrics (and logged into the run by sync_metrics)."""


class SubmitJobOutput(SkillOutput):
    job: JobSummary
    existing: bool = False
    """True when idempotency_key matched a job submitted before; nothing new was started."""
    mlflow_run_id: str | None = None
    mlflow_experiment_id: str | None = None


def submit_job(ctx: SkillContext, args: SubmitJobInput) -> SubmitJobOutput:
    """Submit a job (a command with resources and a priority) to the compute queue.

    Returns at once with the job id; use job_status or wait_for_jobs to follow it.
    """
    env, labels, binding = dict(args.env), dict(args.labels), None
    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    spec_fields: dict[str, Any] = dict(
        args.spec_fields(),
        name=args.name,
        argv=args.argv,
        shell=args.shell,
        cwd=cwd,
        idempotency_key=args.idempotency_key,
        data={name: os.path.abspath(path) for name, path in args.data.items()},
        secret_env=args.secret_env,
    )
    JobSpec(**spec_fields, env=env, labels=labels)  # bad arguments fail before a run is made
    if args.mlflow is not None:
        request = args.mlflow
        with tracking_errors(ctx):
            binding = create_job_run(ctx.tracker, request.experiment, request.run_name or args.name, home=ctx.home)
        env.update(binding.env)
        labels.update(binding.labels)
    submitted_at = time.time()
    try:
        with compute_errors():
            job = ctx.client.submit(JobSpec(**spec_fields, env=env, labels=labels))
    except SkillFailure:
        if binding is not None:
            with tracking_errors(ctx):
                ctx.tracker.delete_run(binding.run_id)  # no job will log into it
        raise
    # An idempotency_key hit returns a job created before this call (same host clock).
    existing = job.created_at < submitted_at
    if binding is not None:
        with tracking_errors(ctx):
            if existing and job.spec.labels.get(RUN_LABEL) != binding.run_id:
                ctx.tracker.delete_run(binding.run_id)  # the earlier submission has its own run
            else:
                tag_run_with_job(ctx.tracker, binding.run_id, job.id)
    return SubmitJobOutput(
        job=JobSummary.of(job),
        existing=existing,
        mlflow_run_id=job.spec.labels.get(RUN_LABEL),
        mlflow_experiment_id=job.spec.labels.get(EXPERIMENT_LABEL),
    )


class JobIdInput(SkillInput):
    job_id: JobId
    """The job id, e.g. job-3f9a2c1b7d."""


class JobStatusOutput(SkillOutput):
    job: JobSummary
    argv: list[str] | str
    cwd: str | None = None
    attempt_history: list[AttemptView] = []
    """Every attempt, oldest first."""
    log_excerpt: str | None = None
    """For a failed latest attempt: the last lines of its log (read_logs shows more)."""
    checkpoint_dir: str


def job_status(ctx: SkillContext, args: JobIdInput) -> JobStatusOutput:
    """Show one job: state, attempts (node, GPUs, outcome, exit code), why it failed."""
    job = visible_job(ctx, args.job_id)
    last = job.last_attempt
    return JobStatusOutput(
        job=JobSummary.of(job),
        argv=job.spec.argv,
        cwd=job.spec.cwd,
        attempt_history=[AttemptView.model_validate(a.model_dump()) for a in job.attempts],
        log_excerpt=last.log_excerpt if last else None,
        checkpoint_dir=job.checkpoint_dir,
    )


class ListJobsInput(SkillInput):
    states: list[JobState] | None = None
    """Only jobs in these states (e.g. ["pending", "running"])."""
    labels: dict[str, str] | None = None
    """Only jobs carrying all these labels."""
    min_priority: Annotated[int, Field(ge=0, le=100)] | None = None
    max_priority: Annotated[int, Field(ge=0, le=100)] | None = None
    offset: Index = 0
    """Skip this many (newest first); use the previous page's next_offset."""
    limit: Annotated[int, Field(ge=1, le=500)] = 50


class ListJobsOutput(SkillOutput):
    jobs: list[JobSummary]
    """Newest first."""
    next_offset: int | None = None
    """Offset of the next page; None on the last page."""


def list_jobs(ctx: SkillContext, args: ListJobsInput) -> ListJobsOutput:
    """List jobs, newest first, filtered by state, labels and priority; paginated by offset/limit."""
    shown: list[Job] = []
    position, next_offset = args.offset, None  # offsets count the daemon's jobs, withheld ones included
    with compute_errors():
        while next_offset is None:
            page = ctx.client.list(
                states=args.states,
                labels=args.labels,
                min_priority=args.min_priority,
                max_priority=args.max_priority,
                limit=args.limit + 1,
                offset=position,
            )
            for job in page:
                if not withheld(job):
                    if len(shown) == args.limit:
                        next_offset = position
                        break
                    shown.append(job)
                position += 1
            if len(page) <= args.limit:
                break
    return ListJobsOutput(jobs=[JobSummary.of(job) for job in shown], next_offset=next_offset)


class CancelJobInput(JobIdInput):
    reason: Annotated[str, Field(max_length=500)] = ""
    """Recorded as the job's state reason."""


class CancelJobOutput(SkillOutput):
    job: JobSummary
    already_final: bool = False
    """The job had already ended; nothing was cancelled."""


def cancel_job(ctx: SkillContext, args: CancelJobInput) -> CancelJobOutput:
    """Cancel a job: a pending one at once, a running one by SIGTERM, grace period, SIGKILL."""
    before = visible_job(ctx, args.job_id)
    with compute_errors():
        job = before if before.state.final else ctx.client.cancel(args.job_id, reason=args.reason)
    return CancelJobOutput(job=JobSummary.of(job), already_final=before.state.final)


class WaitForJobsInput(SkillInput):
    job_ids: Annotated[list[JobId], Field(min_length=1, max_length=200)]
    """The jobs to watch."""
    timeout_s: Annotated[float, Field(ge=0, le=600)] = 60.0
    """Return after this long even if nothing changed."""
    since: dict[str, JobState] | None = None
    """The states you last saw (job id -> state); default: their states now."""


class WaitForJobsOutput(SkillOutput):
    changed: list[JobSummary]
    """Jobs whose state differs from `since`; empty on timeout."""
    states: dict[str, JobState]
    """Current state of every watched job (pass it back as `since`)."""
    timed_out: bool
    all_final: bool
    """Every watched job has ended (succeeded, failed or cancelled)."""


def wait_for_jobs(ctx: SkillContext, args: WaitForJobsInput) -> WaitForJobsOutput:
    """Block until any of the listed jobs changes state, or until timeout_s passes."""
    watched = [visible_job(ctx, i, field="job_ids") for i in args.job_ids]
    with compute_errors(field="job_ids"):
        if args.since is None:
            since = {job.id: job.state.value for job in watched}
        else:
            since = {job_id: state.value for job_id, state in args.since.items()}
        changed = ctx.client.wait_for_change(args.job_ids, since=since, timeout=args.timeout_s)
        changed_ids = {job.id for job in changed}
        current = {job.id: job.state for job in changed}
        for job_id in args.job_ids:
            if job_id not in changed_ids:
                current[job_id] = ctx.client.get(job_id).state
    return WaitForJobsOutput(
        changed=[JobSummary.of(job) for job in changed],
        states={job_id: current[job_id] for job_id in args.job_ids},
        timed_out=not changed,
        all_final=all(current[job_id].final for job_id in args.job_ids),
    )
