"""The scheduling pass's records: what it reads (pending jobs, running attempts, nodes, settings)
and what it decides (placements, preemptions, waiting reasons). `compute.scheduler.schedule`
decides; the daemon, compute/testing/fleet.py and the benchmarks build these."""

from __future__ import annotations

from dataclasses import dataclass, field

from compute.quota_view import VictimOrder
from compute.project_defaults import DEFAULT_PROJECT
from compute.waiting import WaitEntry


@dataclass(frozen=True, slots=True)
class PendingJob:
    """A job waiting to start."""

    job_id: str
    priority: int
    """Base priority 0-100."""
    gpus: int
    """GPU slots it needs, all on one node."""
    seq: int
    """Submission order (FIFO within a priority)."""
    queued_at: float
    """When it (re)entered the queue; aging counts from here."""
    excluded_nodes: frozenset[str] = frozenset()
    """Nodes it must not run on (e.g. where it just had an infra failure)."""
    nodes: int = 1
    """Distinct nodes it spans, `gpus` on each (a gang when more than 1)."""
    project: str = DEFAULT_PROJECT
    """Whose quota it runs under (compute/quota.py)."""
    preemptible: bool = True
    """Only preemptible jobs may borrow beyond their project's quota."""
    borrowed_only: bool = False
    """It always runs borrowed, never inside its project's quota."""
    cpus: float = 1.0
    """CPUs it needs on its node (`resources.cpus`): counted where nodes count CPUs, for jobs without GPUs."""


@dataclass(frozen=True, slots=True)
class RunningAttempt:
    """An attempt holding slots on a node."""

    job_id: str
    attempt: int
    node: str
    gpus: tuple[int, ...]
    """The GPU indices it holds."""
    priority: int
    preemptible: bool
    started_at: float
    stopping: bool = False
    """A stop (preemption, cancel, timeout) was already requested: its slots free soon."""
    project: str = DEFAULT_PROJECT
    borrowed_only: bool = False
    checkpoint_at: float | None = None
    """When it last touched its checkpoint dir ($AR_CHECKPOINT_DIR); None: never (reclaim victim choice)."""
    cpus: float = 0.0
    """CPUs it holds on its node (`resources.cpus`), which jobs without GPUs cannot use meanwhile."""


@dataclass(frozen=True, slots=True)
class NodeView:
    """A node as the scheduler sees it."""

    name: str
    gpus: tuple[int, ...]
    """All GPU indices (slots) of the node."""
    schedulable: bool = True
    """False for quarantined or cordoned nodes: no new work goes there."""
    unavailable: str = ""
    """Why it is not schedulable (`cordoned`, `quarantined` ...), for waiting reasons."""
    cpus: float | None = None
    """CPUs of the node (`Node.cpus`); None: not counted, jobs without GPUs are not limited there."""


@dataclass(slots=True)
class Placement:
    """Start `job_id` on `node` with these GPU indices. (Decision records are not frozen: a pass
    builds thousands, and a frozen dataclass costs 4x as much to construct.)"""

    job_id: str
    node: str
    gpus: tuple[int, ...]
    members: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """For a gang: (node, GPU indices) of every member in rank order (rank 0 is `node`, `gpus`)."""
    borrowed: bool = False
    """It runs on idle GPUs beyond its project's quota (preemptible by any project reclaiming its quota)."""


@dataclass(slots=True)
class Preemption:
    """Stop this attempt to make room for `for_job`."""

    job_id: str
    attempt: int
    node: str
    for_job: str
    reclaim_for: str = ""
    """The project taking its quota back from this borrowed attempt ("": a priority preemption)."""


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    min_runtime_s: float = 10.0
    """An attempt younger than this is never preempted (prevents flapping)."""
    aging_s: float = 60.0
    """Seconds of waiting per point of aging."""
    aging_cap: int = 25
    """The most points aging may add (one named class)."""
    preempt_candidates: int = 8
    """How many workable nodes a blocked job compares when choosing whom to preempt."""
    preempt_scan: int = 256
    """How many nodes with victims a blocked job looks at, at most, per pass."""
    preempt_max_victims: int = 512
    """How many attempts one pass may plan to stop (preemptions and reclaims), at most (0: no limit).
    Once reached, blocked jobs wait (`preempt_limit`) for the next pass, which sees the attempts
    stopping for the jobs ahead as soon free: a burst of urgent work preempts in waves a tick apart,
    no pass stops half the fleet at once, and a pass over 10k blocked jobs stays within
    milliseconds (Slurm bounds its passes the same way). A job left waiting so holds no slots:
    smaller jobs may backfill free ones meanwhile."""
    usage_half_life_s: float = 3600.0
    """Half-life of the borrowed usage that fair share weighs (projects only)."""
    reclaim_order: VictimOrder = VictimOrder.checkpoint
    """Which borrowed attempts a reclaim stops first (projects only)."""


@dataclass(frozen=True, slots=True)
class Decision:
    start: list[Placement] = field(default_factory=list)
    preempt: list[Preemption] = field(default_factory=list)
    waiting: dict[str, WaitEntry] = field(default_factory=dict)
    """job id -> why it did not start (`compute.waiting.describe`), for every pending job not in `start`."""


def effective_priority(job: PendingJob, now: float, config: SchedulerConfig) -> float:
    """Base priority plus aging (capped); orders the queue, never decides preemption."""
    waited = max(0.0, now - job.queued_at)
    return job.priority + min(float(config.aging_cap), waited / config.aging_s)
