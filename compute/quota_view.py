"""What the quota rules read (compute/quota.py): the pending job, running attempt and config they
see (protocols the scheduler's records fit), a project (`ProjectView`), how a reclaim orders its
victims (`VictimOrder`), and which running attempts are borrowed (`borrowed_attempts`)."""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Protocol, TypeVar


class _Job(Protocol):
    """What the rules read of a pending job (compute.scheduler.PendingJob)."""

    @property
    def job_id(self) -> str: ...
    @property
    def gpus(self) -> int: ...
    @property
    def project(self) -> str: ...
    @property
    def preemptible(self) -> bool: ...
    @property
    def borrowed_only(self) -> bool: ...
    @property
    def priority(self) -> int: ...
    @property
    def excluded_nodes(self) -> frozenset[str]: ...
    @property
    def nodes(self) -> int: ...
    @property
    def cpus(self) -> float: ...


def demand(job: _Job) -> int:
    """The GPUs a job holds in all: `gpus` on each of its `nodes` (a gang counts whole)."""
    return job.gpus * job.nodes


class _Attempt(Protocol):
    """What the rules read of a running attempt (compute.scheduler.RunningAttempt)."""

    @property
    def job_id(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def node(self) -> str: ...
    @property
    def gpus(self) -> tuple[int, ...]: ...
    @property
    def priority(self) -> int: ...
    @property
    def preemptible(self) -> bool: ...
    @property
    def started_at(self) -> float: ...
    @property
    def stopping(self) -> bool: ...
    @property
    def project(self) -> str: ...
    @property
    def borrowed_only(self) -> bool: ...
    @property
    def checkpoint_at(self) -> float | None: ...
    @property
    def cpus(self) -> float: ...


class _Config(Protocol):
    """What the rules read of compute.scheduler.SchedulerConfig."""

    @property
    def min_runtime_s(self) -> float: ...
    @property
    def usage_half_life_s(self) -> float: ...
    @property
    def reclaim_order(self) -> VictimOrder: ...
    @property
    def preempt_scan(self) -> int: ...
    @property
    def preempt_candidates(self) -> int: ...


A = TypeVar("A", bound=_Attempt)
J = TypeVar("J", bound=_Job)


@dataclass(frozen=True, slots=True)
class ProjectView:
    """A project as the scheduler sees it."""

    name: str
    quota_gpus: int
    """GPUs guaranteed to its jobs."""
    weight: float = 1.0
    """Its share of idle capacity relative to other borrowing projects."""
    borrow: bool = True
    """Its jobs may run beyond the quota on idle GPUs (preemptible there)."""
    lend: bool = True
    """Other projects may borrow its unused quota (and give it back when it needs it)."""
    usage: float = 0.0
    """Borrowed GPU-seconds, decayed with the half-life (fair share)."""
    quota_cpus: float | None = None
    """The most CPUs (`resources.cpus`) its running attempts may hold at once, GPU jobs' included (a
    ceiling, never lent or borrowed); None: no limit."""


class VictimOrder(str, enum.Enum):
    """Which borrowed attempts a reclaim stops first."""

    checkpoint = "checkpoint"
    """Least progress lost: the most recent checkpoint (else the most recent start) first."""
    newest = "newest"
    """The most recently started first (ignores checkpoints; a baseline for benchmarks/fleet_sim.py)."""


def _unknown(name: str) -> ProjectView:
    return ProjectView(name, 0)


def borrowed_attempts(running: Iterable[_Attempt], projects: dict[str, ProjectView]) -> set[tuple[str, int]]:
    """(job id, attempt) of every borrowed attempt (see compute/quota.py's module doc)."""
    by_project: dict[str, list[_Attempt]] = defaultdict(list)
    borrowed: set[tuple[str, int]] = set()
    for a in running:
        if a.borrowed_only:
            borrowed.add((a.job_id, a.attempt))
        else:
            by_project[a.project].append(a)
    for name, attempts in by_project.items():
        left = projects.get(name, _unknown(name)).quota_gpus
        if sum(map(len, map(attrgetter("gpus"), attempts))) <= left:
            continue  # all of it fits in the quota
        # by priority (highest first), then started, then job id: two stable sorts on C keys
        attempts.sort(key=attrgetter("started_at", "job_id"))
        attempts.sort(key=attrgetter("priority"), reverse=True)
        for a in attempts:
            if len(a.gpus) <= left:
                left -= len(a.gpus)
            else:
                borrowed.add((a.job_id, a.attempt))
    return borrowed
