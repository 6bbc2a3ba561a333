"""The scheduling decision as a pure function: no processes, no store, no clock.

`schedule(pending, running, nodes, now, config)` returns which pending jobs to start
where, and which running attempts to preempt. The daemon calls it on every tick and
carries the decision out; tests and benchmarks call it directly.

Rules, in order:

1. Order. Pending jobs are ordered by *effective* priority, then FIFO (`seq`).
   Effective priority = priority + aging: a job gains one point per
   `config.aging_s` seconds waited, capped at `config.aging_cap` points, so a
   low-priority job is never starved by an endless stream of slightly higher
   ones. Aging orders the queue only; preemption compares *base* priorities, so an
   aged job never preempts work of a higher class.
2. Gang placement. All GPUs of a job come from one node. Among nodes that fit, the
   one with the fewest free slots left after placement wins (best fit), then name.
3. Reservation (anti-starvation for big jobs). When the first job in order cannot
   start, the node it is waiting for is reserved: no job of lower order starts there
   (other nodes still backfill). Each blocked job reserves at most one node, and
   only for as many slots as it needs, so small jobs keep backfilling elsewhere.
4. Backfill. Jobs later in the order start in free slots that no earlier blocked job
   reserved.
5. Preemption. A blocked job with base priority p may preempt running attempts
   that are preemptible, have base priority < p, and have run at least
   `config.min_runtime_s` (no flapping). On each node it picks the fewest victims,
   taking lowest priority first and, within a priority, the most recently started;
   it chooses the node that needs the fewest victims (then lowest victim priority).
   Slots of attempts already stopping count as soon free: a job covered by them
   waits and preempts nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


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


@dataclass(frozen=True, slots=True)
class NodeView:
    """A node as the scheduler sees it."""

    name: str
    gpus: tuple[int, ...]
    """All GPU indices (slots) of the node."""
    schedulable: bool = True
    """False for quarantined or cordoned nodes: no new work goes there."""


@dataclass(frozen=True, slots=True)
class Placement:
    """Start `job_id` on `node` with these GPU indices."""

    job_id: str
    node: str
    gpus: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Preemption:
    """Stop this attempt to make room for `for_job`."""

    job_id: str
    attempt: int
    node: str
    for_job: str


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    min_runtime_s: float = 10.0
    """An attempt younger than this is never preempted (prevents flapping)."""
    aging_s: float = 60.0
    """Seconds of waiting per point of aging."""
    aging_cap: int = 25
    """The most points aging may add (one named class)."""


@dataclass(frozen=True, slots=True)
class Decision:
    start: list[Placement] = field(default_factory=list)
    preempt: list[Preemption] = field(default_factory=list)
