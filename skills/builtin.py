"""The skills this package ships: compute jobs, logs, metrics, cluster."""

from __future__ import annotations

from skills.cluster import cluster_status
from skills.jobs import cancel_job, job_status, list_jobs, submit_job, wait_for_jobs
from skills.logs import read_logs
from skills.metric_sync import sync_metrics
from skills.metrics import fetch_metrics
from skills.registry import SkillRegistry

BUILTIN_SKILLS = (
    submit_job, job_status, list_jobs, cancel_job, wait_for_jobs, read_logs, fetch_metrics, sync_metrics,
    cluster_status,
)  # fmt: skip


def builtin_registry() -> SkillRegistry:
    """A new registry with the built-in skills; add your own to it (or `include` it in yours)."""
    registry = SkillRegistry()
    for fn in BUILTIN_SKILLS:
        registry.add(fn)
    return registry
