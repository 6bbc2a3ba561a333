"""The sync_metrics skill: log the metrics a job printed into its MLflow run, and end the run.

This skill writes, so it is not among the tools the LLM policy is offered (its read tools never
write; see skills/metrics.py). People (CLI) and outside agents (MCP) call it explicitly.
"""

from __future__ import annotations

from pathlib import Path

from skills.context import SkillContext
from skills.jobs import JobId
from skills.metrics import rules_of, run_of_job
from skills.models import SkillInput, SkillOutput
from skills.views import tracking_errors
from tracking import RUN_LABEL, LogSync, finish_run


class SyncMetricsInput(SkillInput):
    job_id: JobId
    """A job submitted with `mlflow`: its printed metrics go into its run."""


class SyncMetricsOutput(SkillOutput):
    run_id: str
    """The job's MLflow run."""
    job_id: str
    log_points_added: int
    """Points read from the job's logs into the run by this call (each printed line is logged once)."""
    run_ended: bool
    """Whether this call ended the run (the job ended and its script had not ended the run)."""
    status: str
    """The run's MLflow status after the call: RUNNING, FINISHED, FAILED, KILLED."""


def sync_metrics(ctx: SkillContext, args: SyncMetricsInput) -> SyncMetricsOutput:
    """Write into a job's MLflow run the `key: value` and JSON lines the job printed that the run lacks
    (read as its campaign reads them, for a campaign's job), and end the run (FINISHED, FAILED or
    KILLED) if the job has ended and its script did not."""
    job = run_of_job(ctx, args.job_id)
    run_id = job.spec.labels[RUN_LABEL]
    with tracking_errors(ctx):
        sync = LogSync(ctx.tracker, run_id, rules_of(job))
        logs = {a.number: Path(a.log_path) for a in job.attempts}
        added, states = 0, None
        while sync.states != states:  # each pass reads at most `MAX_READ_BYTES` more of a log
            states = dict(sync.states)
            added += sync.sync(logs, final=job.state.final, skip_logged=True)
        last = job.last_attempt
        ended = job.state.final and finish_run(ctx.tracker, run_id, job.state.value, last.ended_at if last else None)
        status = ctx.tracker.get_run(run_id).status.value
    return SyncMetricsOutput(run_id=run_id, job_id=job.id, log_points_added=added, run_ended=ended, status=status)
