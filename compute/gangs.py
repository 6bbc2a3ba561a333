"""Gang placement inside one scheduling pass (rule 6 of compute/scheduler.py).

A gang is a job with `nodes` > 1: it needs `gpus` free slots on each of `nodes` distinct
schedulable nodes. `gang_pass` places all members in one pass or none, and otherwise says
why it waits, after trying, in order: slots of attempts already stopping, then preemption
of lower-priority attempts on the nodes it still lacks. `reserve_gang` holds nodes for a
blocked gang at the head of the queue, so later jobs backfill only around it.

Pure functions over the pass's bookkeeping (`compute.sched_state.PassState`), so a pass over
2,000 blocked gangs stays within milliseconds: "how many nodes have g free slots" is a sum over
the pass's per-count histogram (O(slots per node)), and nodes are enumerated only when taken.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from compute.sched_records import NodeView, PendingJob, RunningAttempt
from compute.sched_state import PassState
from compute.waiting import KIND, WaitEntry

Member = tuple[str, tuple[int, ...]]
"""(node, GPU indices) of one member of a gang."""

_NAME_SCAN = 256
"""How many bucket entries a waiting reason reads, at most, to name the nodes that fit."""


def gang_pass(
    p: PassState, job: PendingJob, position: int, nodes: Sequence[NodeView]
) -> tuple[list[Member], list[RunningAttempt], WaitEntry | None]:
    """(members in rank order when it starts, victims to preempt for it, why it waits or None)."""
    g, n, excluded = job.gpus, job.nodes, job.excluded_nodes
    hostable = p.hostable[g] if g <= p.largest else 0
    if excluded:
        hostable -= sum(1 for x in excluded if x in p.nodes and len(p.nodes[x].gpus) >= g)
    if hostable < n:
        return [], [], _unhostable(job, nodes, hostable, position)
    fit = _fit_count(p, job)
    if fit >= n:
        return _take_fit(p, job, n), [], None
    soon = [x for x in sorted(p.soon) if x not in excluded and len(p.avail[x]) < g <= p._spare(x)]
    if fit + len(soon) >= n:
        _take_fit(p, job, fit)
        _hold(p, soon[: n - fit], g)
        return [], [], (KIND.stopping, position, (", ".join(soon[: n - fit]),))
    lack = n - fit - len(soon)
    if p.lowest < job.priority and not _hopeless(p, job, lack):
        if p.stops_left <= 0:
            return [], [], (KIND.preempt_limit, position, (p.config.preempt_max_victims - p.stops_left,))
        workable = _workable(p, job, set(soon), lack)
        if len(workable) < lack and not job.excluded_nodes:
            p.gang_failed.setdefault(job.gpus, []).append((job.priority, len(workable)))
        if len(workable) >= lack:
            _take_fit(p, job, fit)
            _hold(p, soon, g)
            victims = _preempt_on(p, workable[:lack], g)
            p.stops_left -= len(victims)
            return [], victims, (KIND.preempting, position, (len(victims), ", ".join(workable[:lack])))
    return [], [], (KIND.no_fit_nodes, position, (n, g, fit, _fit_names(p, job, min(fit, 3))))


def reserve_gang(p: PassState, job: PendingJob) -> tuple[str, int] | None:
    """Hold the `nodes` nodes with the most soon-free capacity for a blocked gang at the head of
    the queue: (its first node, that node's free slots before the hold), or None."""
    g = job.gpus
    names = [x for x, v in p.nodes.items() if len(v.gpus) >= g and x not in job.excluded_nodes]
    if len(names) < job.nodes:
        return None
    chosen = heapq.nsmallest(job.nodes, names, key=lambda x: (-p._spare(x), x))
    have = len(p.avail[chosen[0]])
    _hold(p, chosen, g)
    return chosen[0], have


def _fit_count(p: PassState, job: PendingJob) -> int:
    """Schedulable, not excluded nodes with at least `gpus` free slots now."""
    g = job.gpus
    if g > p.top:
        return 0
    count = sum(p.count[g : p.top + 1])
    return count - sum(1 for x in job.excluded_nodes if x in p.avail and len(p.avail[x]) >= g)


def _take_fit(p: PassState, job: PendingJob, k: int) -> list[Member]:
    """Claim `gpus` slots on each of `k` nodes that fit now, best fit first (then by name)."""
    chosen: list[str] = []
    aside: list[tuple[int, int]] = []
    for count in range(job.gpus, p.top + 1):
        heap = p.buckets[count]
        while len(chosen) < k and heap:
            rank = heapq.heappop(heap)
            if p.nfree[rank] != count:
                continue  # stale: the node moved to a smaller bucket
            name = p.names[rank]
            if name in job.excluded_nodes:
                aside.append((count, rank))
                continue
            chosen.append(name)
        if len(chosen) >= k:
            break
    for count, rank in aside:
        heapq.heappush(p.buckets[count], rank)
    return [(name, p.claim(name, job.gpus)) for name in chosen]


def _hold(p: PassState, names: Sequence[str], g: int) -> None:
    """Claim `g` slots on each node, free ones first, then slots of stopping attempts."""
    for name in names:
        p.hold(name, g)


def _hopeless(p: PassState, job: PendingJob, lack: int) -> bool:
    """Slots only shrink within a pass: a search for g slots per node below priority q that found
    w nodes finds at most w for a gang needing g' >= g below q' <= q."""
    return any(
        prio >= job.priority and found < lack
        for g, tries in p.gang_failed.items()
        if g <= job.gpus
        for prio, found in tries
    )


def _workable(p: PassState, job: PendingJob, skip: set[str], lack: int) -> list[str]:
    """Nodes (cheapest first) where preempting attempts below the gang's priority frees `gpus`
    slots; bounded like `PassState.preemption_plan` by `preempt_scan` nodes looked at."""
    found: list[tuple[int, int, str]] = []
    scanned, g, prio = 0, job.gpus, job.priority
    want = max(lack, p.config.preempt_candidates)
    by_spare = p.spare_index()
    for spare in sorted(by_spare, reverse=True):
        missing = g - spare
        if missing <= 0:
            continue
        for low, name in by_spare[spare]:
            if low >= prio:
                break
            scanned += 1
            if scanned > p.config.preempt_scan or len(found) >= want:
                break
            steps = p.steps[name]
            if missing > len(steps) or steps[missing - 1][1] >= prio:
                continue
            if name in job.excluded_nodes or name in skip or len(p.nodes[name].gpus) < g:
                continue
            found.append((steps[missing - 1][0], steps[missing - 1][1], name))
        if scanned > p.config.preempt_scan or len(found) >= want:
            break
    return [name for *_, name in sorted(found)]


def _preempt_on(p: PassState, names: list[str], g: int) -> list[RunningAttempt]:
    """Take the victims each node needs (a gang victim whole, once), then hold `g` slots there."""
    victims: list[RunningAttempt] = []
    for name in names:
        missing = g - p._spare(name)
        freed = 0
        if missing > 0:
            taken = p.victims[name][: p.steps[name][missing - 1][2]]
            victims += taken
            freed = sum(len(v.gpus) for v in taken)
            p.take_victims(name, taken, reindex=False)
        p.hold(name, g, freed)
    return victims


def _fit_names(p: PassState, job: PendingJob, k: int) -> str:
    """Up to `k` names of nodes that fit now, for the waiting reason (a bounded look)."""
    names: list[str] = []
    budget = _NAME_SCAN
    for count in range(p.top, job.gpus - 1, -1):
        for rank in p.buckets[count]:
            budget -= 1
            if len(names) >= k or budget < 0:
                return ", ".join(sorted(names))
            name = p.names[rank]
            if p.nfree[rank] == count and name not in job.excluded_nodes and name not in names:
                names.append(name)
    return ", ".join(sorted(names))


def _unhostable(job: PendingJob, nodes: Sequence[NodeView], hostable: int, position: int) -> WaitEntry:
    """Why a gang waits that too few schedulable nodes could ever host."""
    big = [v for v in nodes if len(v.gpus) >= job.gpus]
    out = [v for v in big if not v.schedulable and v.name not in job.excluded_nodes]
    if out:
        return KIND.node_unavailable, position, (out[0].name, out[0].unavailable or "not taking work")
    barred = sorted(v.name for v in big if v.name in job.excluded_nodes)
    if barred:
        return KIND.excluded, position, (", ".join(barred[:3]),)
    return KIND.too_few_nodes, position, (job.nodes, job.gpus, hostable)
