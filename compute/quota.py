"""Projects in the scheduling pass: guaranteed quotas, borrowing of idle GPUs, reclaim, fair share.

Pure, like compute/scheduler.py, which calls it at three points when projects are configured
(with none, `schedule` never builds a `QuotaPass` and behaves exactly as without projects):

1. Order. Each project's pending jobs, in the pass's order (effective priority, then FIFO),
   fill what is left of its quota (`quota_gpus` minus its guaranteed attempts): those that fit
   are *guaranteed*, the rest *borrowing* (and every `borrowed_only` job). All guaranteed jobs
   come first; borrowing jobs follow by fair share: the project with the lowest
   `(recent borrowed GPUs + borrowed GPUs now + GPUs of its borrowing jobs ahead) / weight`
   first, where recent borrowed GPUs = decayed borrowed GPU-seconds (`ProjectView.usage`,
   half-life `SchedulerConfig.usage_half_life_s`) / (half-life / ln 2), i.e. the average over
   the recent past. Jobs of projects not configured belong to a project with quota 0.
2. Idle GPUs. A guaranteed job may take any free slot. A borrowing job may take idle GPUs only
   while its project borrows (`borrow`), it is preemptible, and the idle GPUs left after what
   the projects' quotas hold back cover it: a project that does not lend (`lend` off) holds its
   whole unused quota; a lending project holds what its guaranteed pending jobs need.
3. Victims. A guaranteed job that does not fit reclaims borrowed attempts first, of any
   project and regardless of their priority or age, taking the ones that lose the least
   progress (GPUs x time since their last checkpoint, else since they started), on the node
   that loses least. Priority preemption (the scheduler's rule 5) then only takes attempts of
   the job's own project: guaranteed work of another project is never preempted.

An attempt is *borrowed* when it is `borrowed_only`, or when its project's attempts, taken by
priority then oldest first, already fill the quota without it (`borrowed_attempts`).
"""

from __future__ import annotations

import enum
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Generic, Protocol, TypeVar

from compute.waiting import KIND, WaitEntry, WaitKind


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


class VictimOrder(str, enum.Enum):
    """Which borrowed attempts a reclaim stops first."""

    checkpoint = "checkpoint"
    """Least progress lost: the most recent checkpoint (else the most recent start) first."""
    newest = "newest"
    """The most recently started first (ignores checkpoints; a baseline for benchmarks/fleet_sim.py)."""


def _unknown(name: str) -> ProjectView:
    return ProjectView(name, 0)


def borrowed_attempts(running: Iterable[_Attempt], projects: dict[str, ProjectView]) -> set[tuple[str, int]]:
    """(job id, attempt) of every borrowed attempt (see the module doc)."""
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


def lost_progress(a: _Attempt, now: float) -> float:
    """GPU-seconds of work a stop now throws away: since its last checkpoint in this attempt, else its start."""
    since = a.started_at if a.checkpoint_at is None else max(a.started_at, a.checkpoint_at)
    return max(1, len(a.gpus)) * max(0.0, now - since)


class QuotaPass(Generic[A]):
    """Quota bookkeeping of one scheduling pass (the three points of the module doc)."""

    def __init__(
        self,
        running: Sequence[A],
        projects: Sequence[ProjectView],
        idle: int,
        now: float,
        config: _Config,
    ) -> None:
        self.projects = {p.name: p for p in projects}
        self.now = now
        borrowed = borrowed_attempts(running, self.projects)
        self.used: dict[str, int] = defaultdict(int)
        """Guaranteed GPUs in use per project (their attempts, and the pass's guaranteed jobs)."""
        self.borrowing_now: dict[str, int] = defaultdict(int)
        self.reclaimable: dict[str, list[A]] = defaultdict(list)
        """node -> borrowed attempts not stopping yet, least progress lost first."""
        self.own: dict[str, dict[str, list[A]]] = defaultdict(lambda: defaultdict(list))
        """project -> node -> its attempts that priority preemption may stop, lowest priority then newest first."""
        self.taken: set[int] = set()
        """`id()` of the attempts earlier plans of this pass took (the same objects as in `running`)."""
        own, used, min_runtime = self.own, self.used, config.min_runtime_s
        for a in running:
            if a.preemptible and not a.stopping and now - a.started_at >= min_runtime:
                own[a.project][a.node].append(a)
            if borrowed and (a.job_id, a.attempt) in borrowed:
                self.borrowing_now[a.project] += len(a.gpus)
                if not a.stopping:
                    self.reclaimable[a.node].append(a)
            else:
                used[a.project] += len(a.gpus)
        self.newest = newest = config.reclaim_order is VictimOrder.newest
        for victims in self.reclaimable.values():
            victims.sort(key=(lambda a: -a.started_at) if newest else (lambda a: lost_progress(a, now)))
        started, priority = attrgetter("started_at"), attrgetter("priority")
        for nodes in self.own.values():
            for victims in nodes.values():
                victims.sort(key=started, reverse=True)  # by priority, then newest first: two stable sorts
                victims.sort(key=priority)
        self._lowest_own = {name: min(vs[0].priority for vs in nodes.values()) for name, nodes in self.own.items()}
        self.idle = idle
        self.pool = idle
        """Idle GPUs borrowing jobs may still take in this pass (set by `order`)."""
        self.pool_before_borrowing = idle
        self.took_from_pool: set[str] = set()
        self.known: dict[tuple[str, int, int, bool], tuple[WaitKind, tuple[object, ...], int]] = {}
        """(project, gpus, nodes, preemptible) of a job `hold` held -> (its entry's kind and arguments, the
        highest priority at which such a job has none of its own project's work to preempt either, or 100
        for a gang): the scheduler answers the next such jobs from here, without the rules, until the next
        borrowed start changes the pool (`took` clears it). `hold` fills it; the scheduler calls it only
        for jobs it would hold (a single-node job that some node can host, or a gang)."""
        self._holds: dict[tuple[str, int], WaitEntry] = {}
        """(project, projects that took lendable GPUs so far or -1) -> its fair_share or borrowing entry."""
        self.guaranteed: set[str] = set()
        self.half_life = config.usage_half_life_s
        self.scan, self.candidates = config.preempt_scan, config.preempt_candidates
        # Victims and free slots only shrink within a pass: a search that failed for g GPUs (below
        # priority q) fails for every later job of at least g GPUs (at a priority of at most q).
        self._reclaim_failed = math.inf
        self._priority_failed: dict[str, dict[int, int]] = defaultdict(dict)
        """project -> GPUs -> the highest priority below which a search for that many failed."""

    def project(self, name: str) -> ProjectView:
        return self.projects.get(name) or _unknown(name)

    def order(self, ordered: Sequence[J]) -> list[J]:
        """Guaranteed jobs (in the given order), then borrowing jobs by fair share (see the module doc)."""
        views = {name: self.project(name) for name in set(map(attrgetter("project"), ordered))}
        # per project: [quota left, GPUs of its borrowing jobs so far, GPUs it borrows already (recent
        # and now), its weight, whether it lends]
        states = {name: [max(0, p.quota_gpus - self.used[name]), 0, self._recent(p) + self.borrowing_now[name],
                         p.weight, p.lend] for name, p in views.items()}
        first, later, keys = [], [], []
        held = 0  # GPUs the pool keeps back for lending projects' guaranteed jobs
        guaranteed = self.guaranteed
        for job in ordered:
            need = job.gpus * job.nodes  # demand(job), inlined: 10k calls
            state = states[job.project]
            if need <= state[0] and not job.borrowed_only:
                state[0] -= need
                guaranteed.add(job.job_id)
                if state[4]:
                    held += need
                first.append(job)
            else:
                state[1] += need
                keys.append((state[2] + state[1]) / state[3])
                later.append(job)
        for name, p in self.projects.items():
            if not p.lend:  # its whole unused quota is held back (its own guaranteed jobs included)
                held += max(0, p.quota_gpus - self.used[name])
        self.pool = self.pool_before_borrowing = self.idle - held
        by_share = sorted(range(len(keys)), key=keys.__getitem__)  # stable: ties keep the given order
        first.extend(map(later.__getitem__, by_share))
        return first

    def _recent(self, p: ProjectView) -> float:
        return p.usage * math.log(2) / self.half_life

    def hold(self, job: _Job) -> WaitEntry | None:
        """None when the job may take idle GPUs now; else why not (position filled in by the caller as 0)."""
        need = job.gpus * job.nodes
        if not need or job.job_id in self.guaranteed:
            return None
        entry = self._hold(job, need)
        if entry is not None:
            below = 101 if job.nodes > 1 else self._lowest_own.get(job.project, 101)
            self.known[job.project, job.gpus, job.nodes, job.preemptible] = (entry[0], entry[2], below)
        return entry

    def _hold(self, job: _Job, need: int) -> WaitEntry | None:
        p = self.project(job.project)
        if not p.borrow:
            return KIND.quota, 0, (p.name, p.quota_gpus, "it does not borrow (--no-borrow)")
        if not job.preemptible:
            return KIND.quota, 0, (p.name, p.quota_gpus, "a job that is not preemptible cannot borrow")
        if need <= self.pool:
            return None
        took = self.took_from_pool
        fair = need <= self.pool_before_borrowing and (len(took) > 1 or (took and p.name not in took))
        key = (p.name, len(took) if fair else -1)  # `took` only grows: its size names its contents
        entry = self._holds.get(key)
        if entry is None:
            if fair:
                names = ", ".join(sorted(n for n in took if n != p.name)[:3])
                entry = KIND.fair_share, 0, (self.pool_before_borrowing, names, p.name)
            else:
                entry = KIND.borrowing, 0, (p.name, p.quota_gpus, max(0, self.idle), self.idle - self.pool_before_borrowing)
            self._holds[key] = entry
        return entry

    def took(self, job: _Job) -> bool:
        """Record a start; True when the job runs borrowed."""
        if job.job_id in self.guaranteed:
            return False
        if demand(job):
            self.pool -= demand(job)
            self.known.clear()
            self.took_from_pool.add(job.project)
        return True

    def may_preempt(self, job: _Job) -> bool:
        """Whether a reclaim or a priority plan might make room for the job (a bound from the pass's start)."""
        if job.job_id in self.guaranteed and demand(job) and self.reclaimable:
            return True
        return self._lowest_own.get(job.project, 101) < job.priority

    def reclaim_plan(
        self, job: _Job, spare: Callable[[str], int], size: Callable[[str], int]
    ) -> tuple[str, list[A]] | None:
        """For a guaranteed job that does not fit: the node and borrowed attempts to stop there
        (least progress lost over the node, then fewest victims, then name), or None."""
        if job.job_id not in self.guaranteed or not demand(job) or demand(job) >= self._reclaim_failed:
            return None
        plan = self._plan(job, self.reclaimable, spare, size, self._newest_cost if self.newest else self._lost_cost)
        if plan is None and not job.excluded_nodes:
            self._reclaim_failed = job.gpus
        return plan

    def _lost_cost(self, victims: list[A]) -> tuple[float, float]:
        return sum(lost_progress(v, self.now) for v in victims), len(victims)

    def _newest_cost(self, victims: list[A]) -> tuple[float, float]:
        return len(victims), -min(v.started_at for v in victims)

    def priority_plan(
        self, job: _Job, spare: Callable[[str], int], size: Callable[[str], int]
    ) -> tuple[str, list[A]] | None:
        """The scheduler's rule 5 within the job's own project: lower-priority attempts of its project
        (fewest victims, then lowest priority, then name), or None."""
        own = self.own.get(job.project)
        if not own or self._lowest_own[job.project] >= job.priority:  # victims only go within a pass
            return None
        failed = self._priority_failed[job.project]
        if any(q >= job.priority for g, q in failed.items() if g <= job.gpus):
            return None
        # victims go by priority on each node, so the last one taken has the highest
        plan = self._plan(job, own, spare, size, lambda vs: (len(vs), vs[-1].priority), below=job.priority)
        if plan is None and not job.excluded_nodes:
            failed[job.gpus] = max(failed.get(job.gpus, -1), job.priority)
        return plan

    def _plan(
        self,
        job: _Job,
        by_node: dict[str, list[A]],
        spare: Callable[[str], int],
        size: Callable[[str], int],
        cost: Callable[[list[A]], tuple[float, float]],
        below: int = 101,
    ) -> tuple[str, list[A]] | None:
        """The cheapest node's victims (`by_node`'s order on each node) that free room for `job`, or None.
        Bounded like the priority preemption search: `preempt_scan` nodes, `preempt_candidates` plans."""
        best: tuple[float, float, str] | None = None
        plans: dict[str, list[A]] = {}
        scanned = workable = 0
        gone, gpus, excluded = self.taken, job.gpus, job.excluded_nodes
        for node, victims in by_node.items():
            while victims and id(victims[0]) in gone:
                victims.pop(0)  # taken by an earlier plan of this pass
            if not victims or victims[0].priority >= below or node in excluded or size(node) < gpus:
                continue
            scanned += 1
            if scanned > self.scan or workable >= self.candidates:
                break
            need, taken = gpus - spare(node), []
            for v in victims:
                if need <= 0 or v.priority >= below:
                    break
                if id(v) in gone:
                    continue
                taken.append(v)
                need -= len(v.gpus)
            if need > 0 or not taken:
                continue
            workable += 1
            key = (*cost(taken), node)
            if best is None or key < best:
                best, plans[node] = key, taken
        if best is None:
            return None
        node = best[2]
        gone.update(map(id, plans[node]))
        return node, plans[node]


def decayed(usage: float, since: float, now: float, half_life_s: float) -> float:
    """`usage` as of `since`, decayed to `now`."""
    return usage * math.pow(0.5, max(0.0, now - since) / half_life_s)


class UsageMeter:
    """Each project's borrowed GPU-seconds, decayed with a half-life, accumulated tick by tick: the
    `ProjectView.usage` fair share weighs. The daemon (compute/usage.py) and compute/testing/fleet.py
    call `account` once per pass."""

    def __init__(self, half_life_s: float, usage: dict[str, float] | None = None) -> None:
        self.half_life_s = half_life_s
        self.usage: dict[str, float] = dict(usage or {})
        self._borrowing: Counter[str] = Counter()
        self._at: float | None = None

    def account(self, running: Sequence[_Attempt], projects: Sequence[ProjectView], now: float) -> None:
        """Add the borrowed GPUs held since the last call (decaying what was before), then note what is borrowed now."""
        if self._at is not None:
            dt = max(0.0, now - self._at)
            for name in set(self.usage) | set(self._borrowing):
                self.usage[name] = (
                    decayed(self.usage.get(name, 0.0), self._at, now, self.half_life_s) + self._borrowing[name] * dt
                )
        self._at = now
        borrowed = borrowed_attempts(running, {p.name: p for p in projects})
        self._borrowing = Counter()
        for a in running:
            if (a.job_id, a.attempt) in borrowed:
                self._borrowing[a.project] += len(a.gpus)

    def views(self, projects: Sequence[ProjectView]) -> list[ProjectView]:
        """The projects with their usage now."""
        return [replace(p, usage=self.usage.get(p.name, 0.0)) for p in projects]
