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
6. Gangs. A job with `nodes` > 1 needs `gpus` free slots on each of `nodes` distinct
   nodes, all placed in one pass or none (compute/gangs.py); its reservation holds that many
   nodes; it preempts whole attempts on the nodes it lacks. A running gang (several
   `RunningAttempt`s with one job id and attempt) is taken whole as a victim, and counts as
   its total GPUs where single-node victims count as one (so plans spare gangs).
7. Reasons. Every pending job the pass does not start gets a `Waiting` (compute/waiting.py)
   in `Decision.waiting`: the rule above that kept it waiting, and its place in the order.
7. Projects. With `projects` given, quotas, borrowing, reclaim and fair share (compute/quota.py)
   change the order (guaranteed jobs first), which jobs may take idle GPUs, and whom a blocked job
   may stop. With none, the pass is exactly rules 1-6.
"""

from __future__ import annotations

import bisect
import heapq
from collections import Counter
from operator import attrgetter
from collections.abc import Sequence
from dataclasses import dataclass, field

from compute.gangs import gang_pass, reserve_gang
from compute.quota import ProjectView, QuotaPass, VictimOrder
from compute.spec import DEFAULT_PROJECT
from compute.waiting import WaitEntry, KIND


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


class _Steps(dict[str, list[tuple[int, int, int]]]):
    """`steps[node][m - 1]`: (cost of the victims needed, priority of the last one, how many
    victims) to free m slots on `node`; the cost counts a gang victim as its total GPUs.
    Computed when first read: a pass looks at few of its nodes' victims."""

    def __init__(self, p: _Pass) -> None:
        super().__init__()
        self.p = p

    def __missing__(self, node: str) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        cost, weight = 0, self.p.weight
        for i, v in enumerate(self.p.victims.get(node, ()), 1):
            cost += weight(v)
            out += [(cost, v.priority, i)] * len(v.gpus)
        self[node] = out
        return out


class _Pass:
    """Mutable bookkeeping of one scheduling pass; slots only ever shrink within it.

    Nodes are bucketed by their count of free slots (a heap of names per count), so
    best fit and "does anything fit" cost O(slots per node), not O(nodes). Nodes with
    victims are kept in `by_spare`: per count of spare slots, a sorted list of
    (lowest victim priority, name), the order in which a preemption search visits them.
    """

    def __init__(self, running: Sequence[RunningAttempt], nodes: Sequence[NodeView],
                 now: float, config: SchedulerConfig) -> None:
        self.config = config
        self.stops_left = config.preempt_max_victims or 1 << 62
        """Attempts this pass may still plan to stop (`config.preempt_max_victims`)."""
        self.nodes = {n.name: n for n in nodes if n.schedulable}
        held: dict[str, list[int]] = {}
        self.soon: dict[str, list[int]] = {}
        self.victims: dict[str, list[RunningAttempt]] = {}
        min_runtime = config.min_runtime_s
        schedulable = self.nodes
        for a in running:
            node = a.node
            if node in held:
                held[node].extend(a.gpus)
            else:
                held[node] = list(a.gpus)
            if node not in schedulable:
                continue
            if a.stopping:
                self.soon.setdefault(node, []).extend(a.gpus)
            elif a.preemptible and now - a.started_at >= min_runtime:
                self.victims.setdefault(node, []).append(a)
        # Gangs: several attempts of one job id (checked by job id first: a C-speed count).
        many = {j for j, c in Counter(map(attrgetter("job_id"), running)).items() if c > 1}
        self.gangs: dict[tuple[str, int], list[RunningAttempt]] = {}
        for a in running:
            if a.job_id in many:
                self.gangs.setdefault((a.job_id, a.attempt), []).append(a)
        self.gangs = {k: ms for k, ms in self.gangs.items() if len(ms) > 1}
        self.steps = _Steps(self)
        # Victim order on a node: lowest priority, lightest (a gang weighs its total GPUs), newest.
        key = (lambda a: (a.priority, self.weight(a), -a.started_at)) if self.gangs else \
            (lambda a: (a.priority, -a.started_at))
        for vs in self.victims.values():
            vs.sort(key=key)
        self.victim_count = Counter(a.priority for vs in self.victims.values() for a in vs)
        self._priorities = sorted(self.victim_count, reverse=True)
        self.widest_victim = max((len(a.gpus) for vs in self.victims.values() for a in vs), default=1) or 1
        self.avail = {}
        for name, n in schedulable.items():
            taken = held.get(name)
            self.avail[name] = list(n.gpus) if not taken else [g for g in n.gpus if g not in taken]
        self.largest = max((len(n.gpus) for n in schedulable.values()), default=0)
        self.sizes = Counter(len(n.gpus) for n in schedulable.values())
        self.gang_failed: dict[int, list[tuple[int, int]]] = {}
        """GPUs per node -> (priority, workable nodes found) of gang preemption searches that fell short."""
        self.buckets: list[list[str]] = [[] for _ in range(self.largest + 1)]
        self.count = [0] * (self.largest + 1)
        """Nodes per count of free slots (exact), for gang fit checks in O(slots)."""
        for name, free in self.avail.items():
            self.buckets[len(free)].append(name)
            self.count[len(free)] += 1
        for b in self.buckets:
            heapq.heapify(b)
        # The most free slots of any node; slots only shrink, so it only falls.
        self.top = max((c for c, b in enumerate(self.buckets) if b), default=0)
        self.by_spare: dict[int, list[tuple[int, str]]] = {}
        self.where: dict[str, tuple[int, tuple[int, str]]] = {}
        for name, vs in self.victims.items():
            if vs:
                spare, entry = self._spare(name), (vs[0].priority, name)
                self.where[name] = (spare, entry)
                self.by_spare.setdefault(spare, []).append(entry)
        for group in self.by_spare.values():
            group.sort()

    def _bucket_head(self, count: int) -> str | None:
        heap = self.buckets[count]
        while heap and len(self.avail[heap[0]]) != count:
            heapq.heappop(heap)  # stale entry: the node moved to a smaller bucket
        return heap[0] if heap else None

    def best_fit(self, job: PendingJob) -> str | None:
        """The node whose free slots fit the job with the least left over (then by name)."""
        if job.gpus > self.top:
            return None
        if job.excluded_nodes:
            fits = [(len(f) - job.gpus, n) for n, f in self.avail.items()
                    if len(f) >= job.gpus and n not in job.excluded_nodes]
            return min(fits)[1] if fits else None
        for count in range(job.gpus, self.top + 1):
            name = self._bucket_head(count)
            if name is not None:
                return name
        return None

    def claim(self, node: str, n: int, reindex: bool = True) -> tuple[int, ...]:
        taken, self.avail[node] = self.avail[node][:n], self.avail[node][n:]
        if taken:
            self.count[len(self.avail[node]) + len(taken)] -= 1
            self.count[len(self.avail[node])] += 1
            heapq.heappush(self.buckets[len(self.avail[node])], node)
            while self.top > 0 and self._bucket_head(self.top) is None:
                self.top -= 1
            if reindex:
                self._reindex(node)
        return tuple(taken)

    def hold(self, node: str, n: int, freed: int = 0) -> None:
        """Hold `n` slots on `node` for a job that waits: free ones first, then slots of attempts
        stopping there (less the `freed` slots of victims just taken for it, which are its own)."""
        rest = n - len(self.avail[node]) - freed
        self.claim(node, n, reindex=False)
        if rest > 0 and self.soon.get(node):
            self.soon[node] = self.soon[node][rest:]
            if not self.soon[node]:
                del self.soon[node]
        self._reindex(node)

    def covered_by_stopping(self, job: PendingJob) -> str | None:
        for name in sorted(self.soon):
            if name not in job.excluded_nodes and len(self.avail[name]) + len(self.soon[name]) >= job.gpus:
                return name
        return None

    def size(self, node: str) -> int:
        """All slots of a schedulable node; 0 for one that takes no work (cordoned, quarantined)."""
        view = self.nodes.get(node)
        return 0 if view is None else len(view.gpus)

    def _spare(self, node: str) -> int:
        return len(self.avail[node]) + len(self.soon.get(node, ()))

    def weight(self, victim: RunningAttempt) -> int:
        """What taking `victim` costs: 1 for a one-node attempt, its total GPUs for a gang."""
        gang = self.gangs.get((victim.job_id, victim.attempt))
        return 1 if gang is None else sum(len(m.gpus) for m in gang)

    def _steps_changed(self, node: str) -> None:
        """Forget `steps[node]` after its victims changed (it is computed again when read)."""
        self.steps.pop(node, None)

    def _index(self, node: str) -> None:
        if self.victims.get(node):
            spare, entry = self._spare(node), (self.victims[node][0].priority, node)
            self.where[node] = (spare, entry)
            bisect.insort(self.by_spare.setdefault(spare, []), entry)

    def _reindex(self, node: str) -> None:
        """Keep `by_spare` (nodes that have victims, by spare slots, then lowest victim priority) current."""
        old = self.where.pop(node, None)
        if old is not None:
            group = self.by_spare[old[0]]
            del group[bisect.bisect_left(group, old[1])]
            if not group:
                del self.by_spare[old[0]]
        self._index(node)

    def preemption_plan(self, job: PendingJob) -> tuple[str, list[RunningAttempt]] | None:
        """Fewest victims, then lowest victim priority, then node name.

        Nodes are visited by spare slots, most first: a node with s spare slots needs at
        least ceil((gpus - s) / widest victim) victims, so the visit stops as soon as that
        bound exceeds the best plan found. Within a spare count, nodes whose cheapest
        victim has the lowest priority come first. The search is bounded, like Slurm's
        bf_max_job_test: it compares at most `config.preempt_candidates` workable nodes and
        looks at no more than `config.preempt_scan` nodes, which keeps a pass over
        thousands of busy nodes within milliseconds.
        """
        best: tuple[int, int, str] | None = None
        workable = scanned = taken = 0
        candidates, scan, prio = self.config.preempt_candidates, self.config.preempt_scan, job.priority
        for spare in sorted(self.by_spare, reverse=True):
            missing = job.gpus - spare
            if best is not None and max(1, -(-missing // self.widest_victim)) > best[0]:
                break
            if workable >= candidates or scanned >= scan:
                break
            for low, name in self.by_spare[spare]:
                if low >= prio:
                    break
                scanned += 1
                if scanned > scan:
                    break
                steps = self.steps[name]
                if not 0 < missing <= len(steps) or steps[missing - 1][1] >= prio:
                    continue  # its victims below the job's priority free too few slots
                if name in job.excluded_nodes or len(self.nodes[name].gpus) < job.gpus:
                    continue
                key = (*steps[missing - 1][:2], name)
                if best is None or key < best:
                    best, taken = key, steps[missing - 1][2]
                workable += 1
                if workable >= candidates:
                    break
        return (best[2], self.victims[best[2]][:taken]) if best else None

    def lowest_victim_priority(self) -> int:
        while self._priorities and not self.victim_count[self._priorities[-1]]:
            self._priorities.pop()  # victims are only ever taken, so the lowest only rises
        return self._priorities[-1] if self._priorities else 101

    def take_victims(self, node: str, victims: list[RunningAttempt], reindex: bool = True) -> None:
        """Take the first victims on `node`; a gang victim's members elsewhere go with it (their
        slots count as soon free there). `reindex=False`: the caller holds slots on `node` next,
        which reindexes it."""
        for v in victims:
            self.victim_count[v.priority] -= 1
            for m in self.gangs.get((v.job_id, v.attempt), ()):
                if m.node != node and m in self.victims.get(m.node, ()):
                    self.victim_count[m.priority] -= 1
                    self.victims[m.node].remove(m)
                    self.soon.setdefault(m.node, []).extend(m.gpus)
                    self._steps_changed(m.node)
                    self._reindex(m.node)
        del self.victims[node][: len(victims)]
        self._steps_changed(node)
        if reindex:
            self._reindex(node)

    def drop_victims(self, node: str, gone: Sequence[RunningAttempt]) -> None:
        """Forget victims taken by a reclaim (any of the node's, not a prefix)."""
        keys = {(v.job_id, v.attempt) for v in gone}
        kept = [v for v in self.victims.get(node, ()) if (v.job_id, v.attempt) not in keys]
        if node in self.victims and len(kept) < len(self.victims[node]):
            for v in self.victims[node]:
                if (v.job_id, v.attempt) in keys:
                    self.victim_count[v.priority] -= 1
            self.victims[node] = kept
            self._steps_changed(node)
            self._reindex(node)

    def reserve_for(self, job: PendingJob) -> tuple[str, int] | None:
        """Hold the node with the most soon-free capacity for a blocked head-of-line job;
        (that node, its free slots before the hold), or None."""
        names = [n for n, v in self.nodes.items() if len(v.gpus) >= job.gpus and n not in job.excluded_nodes]
        if not names:
            return None
        node = min(names, key=lambda n: (-(len(self.avail[n]) + len(self.soon.get(n, ()))), n))
        have = len(self.avail[node])
        self.hold(node, job.gpus)
        return node, have

    def largest_free(self) -> tuple[int, str | None]:
        """The most free slots of any node, and that node (None when no slot is free)."""
        return self.top, self._bucket_head(self.top) if self.top else None


def _unhostable(job: PendingJob, nodes: Sequence[NodeView], largest: int, ahead: int) -> WaitEntry:
    """Why a job no schedulable node can host waits: a big-enough node out of service, or none exists."""
    for n in nodes:
        if not n.schedulable and len(n.gpus) >= job.gpus and n.name not in job.excluded_nodes:
            return KIND.node_unavailable, ahead, (n.name, n.unavailable or "not taking work")
    return KIND.too_big, ahead, (job.gpus, largest)


def _take(p: _Pass, decision: Decision, job: PendingJob, plan: tuple[str, list[RunningAttempt]],
          quota: QuotaPass[RunningAttempt] | None, ahead: int) -> WaitEntry:
    """Carry out a priority preemption plan for `job`: stop the victims, hold its slots there."""
    node, victims = plan
    p.stops_left -= len(victims)
    decision.preempt.extend([Preemption(v.job_id, v.attempt, node, job.job_id) for v in victims])
    if quota is None:
        p.take_victims(node, victims, reindex=False)
    else:
        p.drop_victims(node, victims)
    p.hold(node, job.gpus, sum(len(v.gpus) for v in victims))
    return KIND.preempting, ahead, (len(victims), node)


def schedule(
    pending: Sequence[PendingJob],
    running: Sequence[RunningAttempt],
    nodes: Sequence[NodeView],
    now: float,
    config: SchedulerConfig = SchedulerConfig(),
    projects: Sequence[ProjectView] = (),
) -> Decision:
    """Decide which pending jobs start where and which attempts to preempt (see module doc)."""
    p = _Pass(running, nodes, now, config)
    decision = Decision()
    # Two stable sorts (FIFO, then effective priority) compare floats, not tuples: faster.
    # effective_priority, inlined without calls (10k of them): the same value, half the time.
    cap, per = float(config.aging_cap), config.aging_s
    order = sorted(sorted(pending, key=attrgetter("seq")),
                   key=lambda j: -(j.priority + (cap if (w := (now - j.queued_at) / per) > cap else w if w > 0 else 0.0)))
    quota = QuotaPass(running, projects, sum(map(len, p.avail.values())), now, config) if projects else None
    if quota is not None:
        order = quota.order(order)
    head_reserved = False
    # Slots only shrink within a pass, so once a need of k GPUs failed to find victims
    # below priority q, any later job needing >= k at priority <= q fails too.
    # failed_below[g]: the highest such q over all k <= g.
    failed_below = [-1] * (p.largest + 1)
    waiting = decision.waiting
    initial_top, reserved, ahead = p.top, None, 0  # reserved: (job id, node, its free slots then)
    reserved_args: tuple[str, ...] = ()
    for job in order:
        if job.nodes > 1:
            # With projects, a gang is held by the quota rules as a whole (`demand`); its own
            # preemption (compute/gangs.py) compares priorities across projects.
            gang_hold = quota.hold(job) if quota is not None else None
            if gang_hold is not None:
                ahead += 1
                waiting[job.job_id] = (gang_hold[0], ahead, gang_hold[2])
                continue
            members, victims, entry = gang_pass(p, job, ahead + 1, nodes)
            decision.preempt.extend(Preemption(v.job_id, v.attempt, v.node, job.job_id) for v in victims)
            if members:
                borrowed = quota is not None and quota.took(job)
                decision.start.append(Placement(job.job_id, *members[0], members=tuple(members), borrowed=borrowed))
            if entry is None:
                continue
            ahead += 1
            waiting[job.job_id] = entry
            if entry[0] not in (KIND.stopping, KIND.preempting) and not head_reserved:
                head_reserved = True
                held = reserve_gang(p, job)
                if held is not None:
                    reserved, reserved_args = (job.job_id, *held), (job.job_id,)
            continue
        jid, gpus, excluded, prio = job.job_id, job.gpus, job.excluded_nodes, job.priority
        if gpus == 0:
            node = min((n for n in p.nodes if n not in excluded), default=None)
            if node is not None:
                decision.start.append(Placement(jid, node, ()))
            else:
                ahead += 1
                waiting[jid] = _unhostable(job, nodes, p.largest, ahead)
            continue
        if gpus > p.largest:  # no schedulable node can ever host it
            ahead += 1
            waiting[jid] = _unhostable(job, nodes, p.largest, ahead)
            continue
        hold = quota.hold(job) if quota is not None else None
        if hold is not None:  # held by the quota rules: only its own project's lower-priority work may give way
            ahead += 1
            plan = None if p.stops_left <= 0 else quota.priority_plan(job, p._spare, p.size)  # type: ignore[union-attr]
            if plan is None:
                waiting[jid] = (hold[0], ahead, hold[2])
            else:
                waiting[jid] = _take(p, decision, job, plan, quota, ahead)
            continue
        if gpus <= p.top:
            node = p.best_fit(job)
            if node is not None:
                borrowed = quota is not None and quota.took(job)
                decision.start.append(Placement(jid, node, p.claim(node, gpus), (), borrowed))
                continue
        ahead += 1
        if p.soon:
            node = p.covered_by_stopping(job)
            if node is not None:
                p.hold(node, gpus)
                waiting[jid] = (KIND.stopping, ahead, (node,))
                continue
        limited = p.stops_left <= 0
        if quota is not None:
            reclaim = None if limited else quota.reclaim_plan(job, p._spare, p.size)
            if reclaim is not None:
                node, victims = reclaim
                p.stops_left -= len(victims)
                decision.preempt.extend([Preemption(v.job_id, v.attempt, node, jid, job.project) for v in victims])
                p.drop_victims(node, victims)
                p.hold(node, gpus, sum(len(v.gpus) for v in victims))
                waiting[jid] = (KIND.reclaiming, ahead, (len(victims), node, job.project))
                continue
            # only attempts of its own project (compute/quota.py); no global bound then
            hopeless, could = True, not limited or quota.may_preempt(job)
            plan = None if limited else quota.priority_plan(job, p._spare, p.size)
        else:
            hopeless = not excluded and failed_below[gpus] >= prio
            could = not hopeless and p.lowest_victim_priority() < prio
            plan = p.preemption_plan(job) if could and not limited else None
        if plan is not None:
            waiting[jid] = _take(p, decision, job, plan, quota, ahead)
            continue
        if limited and could:
            waiting[jid] = (KIND.preempt_limit, ahead, (config.preempt_max_victims - p.stops_left,))
            continue
        if not hopeless and not excluded:  # then failed_below[gpus] < prio: raise it
            for k in range(gpus, p.largest + 1):
                failed_below[k] = max(failed_below[k], prio)
        fitting = [n for n, v in p.nodes.items() if len(v.gpus) >= gpus] if excluded else ()
        if fitting and all(n in excluded for n in fitting):
            waiting[jid] = (KIND.excluded, ahead, (", ".join(sorted(fitting)[:3]),))
        elif reserved is not None and gpus <= reserved[2] and reserved[1] not in excluded:
            waiting[jid] = (KIND.reservation, ahead, reserved_args)
        elif ahead > 1 and gpus <= initial_top:
            waiting[jid] = (KIND.behind, ahead, (ahead - 1,))
        else:
            waiting[jid] = (KIND.no_fit, ahead, (gpus, *p.largest_free()))
        if not head_reserved:
            head_reserved = True
            held = p.reserve_for(job)
            if held is not None:
                reserved, reserved_args = (jid, *held), (jid,)
    return decision
