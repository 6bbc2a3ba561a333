"""Victims of the quota rules (compute/quota.py, point 3): the borrowed attempts a guaranteed job
reclaims, least progress lost first, and priority preemption within the job's own project, each
a bounded search over the nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic

from compute.quota_view import A, _Attempt, _Job, demand


def lost_progress(a: _Attempt, now: float) -> float:
    """GPU-seconds of work a stop now throws away: since its last checkpoint in this attempt, else its start."""
    since = a.started_at if a.checkpoint_at is None else max(a.started_at, a.checkpoint_at)
    return max(1, len(a.gpus)) * max(0.0, now - since)


class VictimSearch(Generic[A]):
    """The victim searches of one scheduling pass; `QuotaPass` (compute/quota.py) fills the state
    they read when it is built, and owns the docs of each field."""

    now: float
    guaranteed: set[str]
    reclaimable: dict[str, list[A]]
    own: dict[str, dict[str, list[A]]]
    taken: set[int]
    newest: bool
    scan: int
    candidates: int
    _lowest_own: dict[str, int]
    _reclaim_failed: float
    _priority_failed: dict[str, dict[int, int]]

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
