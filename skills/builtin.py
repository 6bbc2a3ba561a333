"""The skills this package ships: compute jobs, logs, metrics, cluster."""

from __future__ import annotations

from skills.cluster import cluster_status
from skills.jobs import cancel_job, job_status, list_jobs, submit_job, wait_for_jobs
from skills.logs import read_logs
from skills.metric_sync import sync_metrics
from skills.metrics import fetch_metrics
from skills.registry import SkillRegistry
from skills.tooldef import READ_ONLY, ToolHints

BUILTIN_SKILLS = (
    submit_job, job_status, list_jobs, cancel_job, wait_for_jobs, read_logs, fetch_metrics, sync_metrics,
    cluster_status,
)  # fmt: skip

_HINTS = {
    # A new job each call unless idempotency_key is given; stops nothing.
    submit_job: ToolHints(destructive=False, idempotent=False),
    # Stops a running job; cancelling again does nothing more.
    cancel_job: ToolHints(destructive=True, idempotent=True),
    # Writes the job's log points into its MLflow run and ends the run, never twice.
    sync_metrics: ToolHints(destructive=False, idempotent=True),
}


def builtin_registry() -> SkillRegistry:
    """A new registry with the built-in skills; add your own to it (or `include` it in yours)."""
    registry = SkillRegistry()
    for fn in BUILTIN_SKILLS:
        registry.add(fn, hints=_HINTS.get(fn, READ_ONLY))
    return registry
