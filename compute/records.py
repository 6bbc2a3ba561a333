"""Typed records the compute store hands out: jobs, attempts, nodes, events (their enums: compute/states.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from compute.spec import JobSpec
from compute.states import AttemptOutcome, FailureClass, HealthStatus, JobState, NodeState
from compute.waiting import WaitKind


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)


class AttemptMember(_Record):
    """One member of a multi-node attempt (a gang): its node, GPUs and log."""

    rank: int
    """Node rank (AR_NODE_RANK); rank 0 hosts MASTER_ADDR."""
    node: str
    gpus: list[int]
    log_path: str
    """This member's own stdout/stderr log (`jobs logs ID --rank R`)."""


class Attempt(_Record):
    """One execution of a job."""

    job_id: str
    """The job this attempt belongs to."""
    number: int
    """1 for the first attempt, then 2, 3 ..."""
    node: str
    """The node it was placed on."""
    gpus: list[int]
    """GPU indices on that node (CUDA_VISIBLE_DEVICES)."""
    started_at: float
    """Unix time the process was started."""
    ended_at: float | None = None
    """Unix time it ended; None while running."""
    outcome: AttemptOutcome | None = None
    """How it ended; None while running."""
    exit_code: int | None = None
    """Process exit code; negative for death by signal (-15 is SIGTERM)."""
    failure_class: FailureClass | None = None
    """For failed attempts: infra, user or resource."""
    failure_rule: str | None = None
    """For failed attempts: the classifier's rule that matched (`command_not_found`, `unrecognized` ...)."""
    log_excerpt: str | None = None
    """For failed attempts: the last lines of the log, for whoever reads it next."""
    log_path: str
    """The attempt's combined stdout/stderr log."""
    pid: int | None = None
    """The process (group leader) id while it runs."""
    stop_reason: str | None = None
    """Why the daemon asked it to stop (preempt, cancel, timeout, shutdown, quarantine, hang, member_failed), if it did."""
    members: list[AttemptMember] = []
    """For a multi-node job: every member in rank order (rank 0 is `node`, `gpus`, `log_path`)."""


class Job(_Record):
    """A submitted job and its current state."""

    id: str
    """Looks like `job-3f9a2c1b7d`."""
    spec: JobSpec
    state: JobState
    priority: int
    """Current priority (0-100); starts as spec.priority, may be changed later."""
    created_at: float
    updated_at: float
    state_reason: str = ""
    """Why it is in its state (the reason of the last state change)."""
    retries_used: int = 0
    """User-failure retries spent (of spec.max_retries)."""
    infra_retries_used: int = 0
    """Infra-failure retries spent (of the host's infra retry budget)."""
    checkpoint_dir: str
    """AR_CHECKPOINT_DIR, kept across attempts: spec.checkpoint_dir, else one directory per job."""
    not_before: float = 0.0
    """Backoff: the job will not start before this Unix time."""
    attempts: list[Attempt] = []
    """All attempts so far, oldest first."""
    waiting_kind: WaitKind | None = None
    """For a pending job: the kind of reason it waits (set by the daemon's last scheduling pass)."""
    waiting_reason: str | None = None
    """For a pending job: why it waits, e.g. `needs 4 GPUs on one node; the largest free block is 2
    (local-1)`, `node local-0 is cordoned`, `behind 3 higher-priority job(s)`, `held for job-ab12
    (reservation)`, `not before 12:03:10 (retry backoff)`. None before the daemon's first pass."""
    queue_position: int | None = None
    """For a pending job: its 1-based place among the waiting jobs in scheduling order (0 in backoff)."""
    estimated_start: float | None = None
    """For a pending job: the earliest Unix time a block of GPUs it fits frees, from running attempts'
    time limits; None when no running attempt it waits for has a time limit. A bound, not a promise."""

    @property
    def last_attempt(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None


class Node(_Record):
    """A host, or a virtual slice of one, with GPU slots and a health state."""

    name: str
    gpus: list[int]
    """GPU indices (slots) this node owns."""
    state: NodeState = NodeState.active
    health: HealthStatus = HealthStatus.ok
    reason: str = ""
    """The reason of the last state or health change."""
    virtual: bool = False
    """Its slots have no physical GPU behind them (a host without GPUs, or a slice of one for tests
    and fault drills)."""
    last_probe_at: float | None = None
    address: str = ""
    """Backend-specific address (the Ray node id for the ray backend)."""
    cpus: float | None = None
    """CPUs its jobs may use (Ray's `CPU` resource, or `--cpus-per-node`): jobs without GPUs are placed by
    their `resources.cpus` against it, spread over the nodes with the most free; None: not counted."""


class Event(_Record):
    """One row of the event log: every state change writes one, with its reason."""

    id: int
    ts: float
    kind: str
    """submitted, started, ended, preempt_requested, cancelled, requeued, probe, quarantined ..."""
    reason: str = ""
    job_id: str | None = None
    attempt: int | None = None
    node: str | None = None
    data: dict[str, Any] = {}


__all__ = ["Attempt", "AttemptOutcome", "Event", "FailureClass", "HealthStatus", "Job", "JobState", "Node", "NodeState"]
