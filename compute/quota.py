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

4. CPUs. A project with `quota_cpus` holds at most that many CPUs (`resources.cpus`, GPU jobs'
   included, a gang's on each member) in its running attempts and this pass's starts: a job that would
   go beyond waits (`cpu_quota`) before any other rule. A ceiling: CPUs are not lent, borrowed or reclaimed.

An attempt is *borrowed* when it is `borrowed_only`, or when its project's attempts, taken by
priority then oldest first, already fill the quota without it (`borrowed_attempts`).

Here `QuotaPass`: the order, the idle GPUs and the CPU ceilings (points 1, 2 and 4). What the rules read, and which
attempts are borrowed: compute/quota_view.py; the victim searches (point 3):
compute/quota_victims.py; the decayed usage fair share weighs: compute/quota_usage.py.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from operator import attrgetter

from compute.quota_victims import VictimSearch, lost_progress
from compute.quota_view import A, J, ProjectView, VictimOrder, _Config, _Job, _unknown, borrowed_attempts, demand
from compute.waiting import KIND, WaitEntry, WaitKind


class QuotaPass(VictimSearch[A]):
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
        self.cpus_left: dict[str, float] = {p.name: p.quota_cpus for p in projects if p.quota_cpus is not None}
        """project -> what its running attempts and this pass's starts leave of its CPU quota (those with one)."""
        if self.cpus_left:
            for a in running:
                if a.project in self.cpus_left:
                    self.cpus_left[a.project] -= a.cpus
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

    def cpu_hold(self, job: _Job) -> WaitEntry | None:
        """None when the job's CPUs fit what is left of its project's CPU quota (or it has none); else why not."""
        left = self.cpus_left.get(job.project)
        need = job.cpus * job.nodes
        if left is None or need <= left:
            return None
        quota = self.projects[job.project].quota_cpus or 0.0
        return KIND.cpu_quota, 0, (job.project, quota - left, quota, need)

    def took(self, job: _Job) -> bool:
        """Record a start; True when the job runs borrowed."""
        if job.project in self.cpus_left:
            self.cpus_left[job.project] -= job.cpus * job.nodes
        if job.job_id in self.guaranteed:
            return False
        if demand(job):
            self.pool -= demand(job)
            self.known.clear()
            self.took_from_pool.add(job.project)
        return True
