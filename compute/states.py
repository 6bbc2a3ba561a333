"""The states and outcomes of jobs, attempts and nodes: plain enums, no pydantic (the CLI's fast
path reads them; `compute.records` re-exports them beside the records that use them)."""

from __future__ import annotations

import enum


class JobState(str, enum.Enum):
    """Where a job is in its life. `succeeded`, `failed` and `cancelled` are final."""

    pending = "pending"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def final(self) -> bool:
        return self in (JobState.succeeded, JobState.failed, JobState.cancelled)


class AttemptOutcome(str, enum.Enum):
    """How one execution of a job ended."""

    succeeded = "succeeded"
    failed = "failed"
    """The command failed in user code (or for lack of a resource): spends a retry."""
    infra_failed = "infra_failed"
    """The node or its GPUs failed: retried on another node on the infra budget."""
    preempted = "preempted"
    """Stopped for higher-priority work: requeued, spends nothing."""
    timed_out = "timed_out"
    cancelled = "cancelled"
    lost = "lost"
    """The process vanished with no exit status (daemon or node died): requeued."""


class FailureClass(str, enum.Enum):
    """Why a failed attempt failed, from its exit code, signal and log tail."""

    infra = "infra"
    user = "user"
    resource = "resource"


class NodeState(str, enum.Enum):
    """Whether a node takes new work."""

    active = "active"
    quarantined = "quarantined"
    """Taken out by a health probe or repeated infra failures; returns after passing probes."""
    cordoned = "cordoned"
    """Taken out by a person (`compute cordon`); returns on `uncordon` after a passing probe."""


class HealthStatus(str, enum.Enum):
    ok = "ok"
    degraded = "degraded"
    critical = "critical"
