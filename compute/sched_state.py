"""The bookkeeping of one scheduling pass (`PassState`): free slots bucketed by count, victims
by node and by spare slots, slots of stopping attempts. Slots only ever shrink within a pass.
Used by `compute.scheduler.schedule` and by gang placement (compute/gangs.py)."""

from __future__ import annotations

import bisect
import heapq
from collections import Counter
from collections.abc import Sequence
from itertools import chain, filterfalse
from operator import attrgetter

from compute.sched_records import NodeView, PendingJob, RunningAttempt, SchedulerConfig


class _Steps(dict[str, list[tuple[int, int, int]]]):
    """`steps[node][m - 1]`: (cost of the victims needed, priority of the last one, how many
    victims) to free m slots on `node`; the cost counts a gang victim as its total GPUs.
    Computed when first read: a pass looks at few of its nodes' victims."""

    def __init__(self, p: PassState) -> None:
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


class PassState:
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
        self.cpus_free = {name: n.cpus for name, n in self.nodes.items() if n.cpus is not None}
        """Schedulable nodes that count CPUs -> CPUs not held by running or just placed attempts."""
        self._cpu_heap: list[tuple[float, str]] | None = None
        cpus_free = self.cpus_free
        held: dict[str, list[int]] = {}
        self.soon: dict[str, list[int]] = {}
        self.victims: dict[str, list[RunningAttempt]] = {}
        min_runtime, schedulable, victims = config.min_runtime_s, self.nodes, self.victims
        for a in running:
            node = a.node
            mine = held.get(node)
            if mine is None:
                held[node] = list(a.gpus)
            else:
                mine.extend(a.gpus)
            if node not in schedulable:
                continue
            if node in cpus_free:
                cpus_free[node] -= a.cpus
            if a.stopping:
                self.soon.setdefault(node, []).extend(a.gpus)
            elif a.preemptible and now - a.started_at >= min_runtime:
                on = victims.get(node)
                if on is None:
                    victims[node] = [a]
                else:
                    on.append(a)
        # Gangs: several attempts of one job id (checked by job id first: a C-speed count).
        ids = Counter(map(attrgetter("job_id"), running))
        many = {j for j, c in ids.items() if c > 1} if len(ids) < len(running) else set()
        self.gangs: dict[tuple[str, int], list[RunningAttempt]] = {}
        for a in running if many else ():
            if a.job_id in many:
                self.gangs.setdefault((a.job_id, a.attempt), []).append(a)
        self.gangs = {k: ms for k, ms in self.gangs.items() if len(ms) > 1}
        self.steps = _Steps(self)
        # Victim order on a node: lowest priority, lightest (a gang weighs its total GPUs), newest.
        started, priority = attrgetter("started_at"), attrgetter("priority")
        for vs in self.victims.values():
            vs.sort(key=started, reverse=True)  # newest first; stable sorts on C keys, then:
            if self.gangs:
                vs.sort(key=lambda a: (a.priority, self.weight(a)))
            else:
                vs.sort(key=priority)
        self.victim_count = Counter(map(attrgetter("priority"), chain.from_iterable(self.victims.values())))
        self._priorities = sorted(self.victim_count, reverse=True)
        self.lowest = 101
        """The lowest priority of any victim left (101: none), kept current as victims are taken."""
        self._lowest_changed()
        self.widest_victim = max(map(len, map(attrgetter("gpus"), chain.from_iterable(self.victims.values()))),
                                 default=1) or 1
        self.avail = {}
        for name, n in schedulable.items():
            taken = held.get(name)
            self.avail[name] = list(n.gpus) if not taken else list(filterfalse(set(taken).__contains__, n.gpus))
        self.largest = max((len(n.gpus) for n in schedulable.values()), default=0)
        sizes = Counter(len(n.gpus) for n in schedulable.values())
        self.hostable = [sum(c for size, c in sizes.items() if size >= g) for g in range(self.largest + 1)]
        """Schedulable nodes with at least g slots (free or not), per g."""
        self.gang_failed: dict[int, list[tuple[int, int]]] = {}
        """GPUs per node -> (priority, workable nodes found) of gang preemption searches that fell short."""
        self.names = sorted(self.avail)
        """Schedulable nodes by name; the heaps below hold places in it (ints compare faster than names)."""
        self.rank = {name: i for i, name in enumerate(self.names)}
        self.nfree = [len(self.avail[name]) for name in self.names]
        """Free slots per node, by place in `names`."""
        self.buckets: list[list[int]] = [[] for _ in range(self.largest + 1)]
        """Per count of free slots, a heap of the places of nodes that had that many when pushed
        (entries of nodes that moved since are stale, dropped when met)."""
        self.count = [0] * (self.largest + 1)
        """Nodes per count of free slots (exact), for gang fit checks in O(slots)."""
        for i, free in enumerate(self.nfree):
            self.buckets[free].append(i)  # ascending: already a heap
            self.count[free] += 1
        # The most free slots of any node; slots only shrink, so it only falls.
        self.top = max((c for c, b in enumerate(self.buckets) if b), default=0)
        self.by_spare: dict[int, list[tuple[int, str]]] = {}
        """Read through `spare_index()`, which applies the changes `_reindex` noted."""
        self.where: dict[str, tuple[int, tuple[int, str]]] = {}
        self._dirty: set[str] = set()
        avail, soon = self.avail, self.soon
        for name, vs in self.victims.items():
            if vs:
                spare, entry = len(avail[name]) + len(soon.get(name, ())), (vs[0].priority, name)  # _spare
                self.where[name] = (spare, entry)
                group = self.by_spare.get(spare)
                if group is None:
                    self.by_spare[spare] = [entry]
                else:
                    group.append(entry)
        for group in self.by_spare.values():
            group.sort()

    def _bucket_head(self, count: int) -> str | None:
        heap, nfree = self.buckets[count], self.nfree
        while heap and nfree[heap[0]] != count:
            heapq.heappop(heap)  # stale entry: the node moved to a smaller bucket
        return self.names[heap[0]] if heap else None

    def best_fit(self, job: PendingJob) -> str | None:
        """The node whose free slots fit the job with the least left over (then by name)."""
        if job.gpus > self.top:
            return None
        if job.excluded_nodes:
            fits = [(len(f) - job.gpus, n) for n, f in self.avail.items()
                    if len(f) >= job.gpus and n not in job.excluded_nodes]
            return min(fits)[1] if fits else None
        buckets, nfree = self.buckets, self.nfree
        for count in range(job.gpus, self.top + 1):
            heap = buckets[count]
            while heap and nfree[heap[0]] != count:  # _bucket_head, inlined
                heapq.heappop(heap)
            if heap:
                return self.names[heap[0]]
        return None

    def cpu_fit(self, job: PendingJob) -> str | None:
        """For a job without GPUs: the first node by name that does not count CPUs, else the node with
        the most free CPUs (then name) when they cover `job.cpus` (spread); None when none does."""
        excluded = job.excluded_nodes
        uncounted = [n for n in self.nodes if n not in self.cpus_free and n not in excluded]
        if uncounted:
            return min(uncounted)
        if excluded:
            fits = [(-free, n) for n, free in self.cpus_free.items() if free >= job.cpus and n not in excluded]
            return min(fits)[1] if fits else None
        heap = self._cpu_heap
        if heap is None:
            heap = self._cpu_heap = [(-free, n) for n, free in self.cpus_free.items()]
            heapq.heapify(heap)
        while heap and -heap[0][0] != self.cpus_free[heap[0][1]]:
            heapq.heappop(heap)  # stale: the node's free CPUs changed since
        return heap[0][1] if heap and -heap[0][0] >= job.cpus else None

    def take_cpus(self, node: str, cpus: float) -> None:
        """A job placed on `node` holds `cpus` of its CPUs (where it counts them)."""
        free = self.cpus_free.get(node)
        if free is not None:
            self.cpus_free[node] = free - cpus
            if self._cpu_heap is not None:
                heapq.heappush(self._cpu_heap, (cpus - free, node))

    def most_free_cpus(self, job: PendingJob) -> tuple[float, str, float]:
        """(the most free CPUs on a node the job may use, that node, the most CPUs of any such node)."""
        mine = [(free, n) for n, free in self.cpus_free.items() if n not in job.excluded_nodes]
        free, name = max(mine, default=(0.0, "none"))
        largest = max((self.nodes[n].cpus or 0.0 for _, n in mine), default=0.0)
        return max(0.0, free), name, largest

    def claim(self, node: str, n: int, reindex: bool = True) -> tuple[int, ...]:
        """Take `n` (or what is left of them) free slots on `node`; the GPU indices taken."""
        free = self.avail[node]
        taken = free[:n]
        if not taken:
            return ()
        self.avail[node] = rest = free[n:]
        left = len(rest)
        self.count[left + len(taken)] -= 1
        self.count[left] += 1
        rank = self.rank[node]
        self.nfree[rank] = left
        heapq.heappush(self.buckets[left], rank)
        top, buckets, nfree = self.top, self.buckets, self.nfree
        while top > 0:
            heap = buckets[top]
            while heap and nfree[heap[0]] != top:  # _bucket_head, inlined
                heapq.heappop(heap)
            if heap:
                break
            top -= 1
        self.top = top
        if reindex:
            self._dirty.add(node)  # _reindex, inlined
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
        """Note that `node`'s place in `by_spare` may have changed; `spare_index` brings it up to date
        when a search reads it (a node claimed many times between searches is reindexed once)."""
        self._dirty.add(node)

    def spare_index(self) -> dict[int, list[tuple[int, str]]]:
        """`by_spare` as of now: nodes that have victims, by spare slots, then lowest victim priority."""
        for node in self._dirty:
            old = self.where.pop(node, None)
            if old is not None:
                group = self.by_spare[old[0]]
                del group[bisect.bisect_left(group, old[1])]
                if not group:
                    del self.by_spare[old[0]]
            self._index(node)
        self._dirty.clear()
        return self.by_spare

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
        by_spare = self.spare_index()
        for spare in sorted(by_spare, reverse=True):
            missing = job.gpus - spare
            if best is not None and max(1, -(-missing // self.widest_victim)) > best[0]:
                break
            if workable >= candidates or scanned >= scan:
                break
            for low, name in by_spare[spare]:
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

    def _lowest_changed(self) -> None:
        while self._priorities and not self.victim_count[self._priorities[-1]]:
            self._priorities.pop()  # victims are only ever taken, so the lowest only rises
        self.lowest = self._priorities[-1] if self._priorities else 101

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
        self._lowest_changed()
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
            self._lowest_changed()
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
