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
   A job without GPUs goes where its CPUs (`PendingJob.cpus`) fit: on nodes that count
   CPUs (`NodeView.cpus`; every running or placed attempt holds its CPUs there), the one
   with the most free CPUs, so CPU jobs spread; a node that does not count them takes any
   number (the first by name).
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
8. Projects. With `projects` given, quotas, borrowing, reclaim and fair share (compute/quota.py)
   change the order (guaranteed jobs first), which jobs may take idle GPUs, and whom a blocked job
   may stop; a project's CPU quota holds its jobs beyond it before any other rule. With none, the
   pass is exactly rules 1-7.
9. Bound. A pass plans to stop at most `config.preempt_max_victims` attempts (preemptions and
   reclaims); later blocked jobs that could preempt wait as `preempt_limit` for the next pass.

The records are in compute/sched_records.py, the pass's bookkeeping in compute/sched_state.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from compute.gangs import gang_pass, reserve_gang
from compute.quota import QuotaPass
from compute.quota_view import ProjectView
from compute.sched_records import (
    Decision, NodeView, PendingJob, Placement, Preemption, RunningAttempt, SchedulerConfig, effective_priority,
)
from compute.sched_state import PassState
from compute.waiting import KIND, WaitEntry

__all__ = ["Decision", "NodeView", "PendingJob", "Placement", "Preemption", "RunningAttempt", "SchedulerConfig",
           "effective_priority", "schedule"]


def _unhostable(job: PendingJob, nodes: Sequence[NodeView], largest: int, ahead: int) -> WaitEntry:
    """Why a job no schedulable node can host waits: a big-enough node out of service, or none exists."""
    for n in nodes:
        if not n.schedulable and len(n.gpus) >= job.gpus and n.name not in job.excluded_nodes:
            return KIND.node_unavailable, ahead, (n.name, n.unavailable or "not taking work")
    return KIND.too_big, ahead, (job.gpus, largest)


def _take(p: PassState, decision: Decision, job: PendingJob, plan: tuple[str, list[RunningAttempt]],
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
    p = PassState(running, nodes, now, config)
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
    # Jobs like one the quota rules just held (same project, size, preemptible) and that cannot preempt
    # either are answered from `quota.known`, without the rules: most of a busy queue waits so.
    known, kind_of = quota.known if quota is not None else {}, attrgetter("project", "gpus", "nodes", "preemptible")
    guaranteed = quota.guaranteed if quota is not None else set()
    cpus_left = quota.cpus_left if quota is not None else {}
    for job in order:
        if known:
            like = known.get(kind_of(job))
            if like is not None and (job.priority <= like[2] or p.stops_left <= 0) and job.job_id not in guaranteed:
                ahead += 1
                waiting[job.job_id] = (like[0], ahead, like[1])
                continue
        if cpus_left and quota is not None and (capped := quota.cpu_hold(job)) is not None:
            ahead += 1
            waiting[job.job_id] = (capped[0], ahead, capped[2])
            continue
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
            node = p.cpu_fit(job)
            if node is not None:
                p.take_cpus(node, job.cpus)
                if quota is not None:
                    quota.took(job)
                decision.start.append(Placement(jid, node, ()))
                continue
            ahead += 1
            if any(n not in excluded for n in p.nodes):
                waiting[jid] = (KIND.no_cpus, ahead, (job.cpus, *p.most_free_cpus(job)))
            else:
                waiting[jid] = _unhostable(job, nodes, p.largest, ahead)
            continue
        if gpus > p.largest:  # no schedulable node can ever host it
            ahead += 1
            waiting[jid] = _unhostable(job, nodes, p.largest, ahead)
            continue
        # held by the quota rules: only its own project's lower-priority work may give way
        if quota is not None and jid not in quota.guaranteed and (hold := quota.hold(job)) is not None:
            ahead += 1
            plan = None if p.stops_left <= 0 else quota.priority_plan(job, p._spare, p.size)
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
                p.take_cpus(node, job.cpus)
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
            could = not hopeless and p.lowest < prio
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
