"""Gangs in the pure scheduling function: examples, then properties over random states."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from compute.scheduler import NodeView, PendingJob, RunningAttempt, SchedulerConfig, schedule
from compute.waiting import WaitKind, describe

NOW = 1000.0
CFG = SchedulerConfig(min_runtime_s=10.0, aging_s=60.0, aging_cap=25)


def gang(
    jid: str, nodes: int, gpus: int, prio: int = 50, seq: int = 0, queued_at: float = NOW, excluded=()
) -> PendingJob:
    return PendingJob(jid, prio, gpus, seq, queued_at, frozenset(excluded), nodes=nodes)


def single(jid: str, gpus: int, prio: int = 50, seq: int = 0) -> PendingJob:
    return PendingJob(jid, prio, gpus, seq, NOW)


def node(name: str, slots: int = 4, schedulable: bool = True) -> NodeView:
    return NodeView(name, tuple(range(slots)), schedulable, "" if schedulable else "quarantined")


def member(jid: str, where: str, gpus, prio: int = 25, started: float = 0.0, preemptible=True, attempt=1):
    return RunningAttempt(jid, attempt, where, tuple(gpus), prio, preemptible, started)


def test_a_gang_starts_on_distinct_nodes_best_fit_first():
    nodes = [node("a"), node("b"), node("c")]
    running = [member("x", "b", [0, 1], preemptible=False)]
    d = schedule([gang("g", 2, 2)], running, nodes, NOW, CFG)
    (p,) = d.start
    assert [m[0] for m in p.members] == ["b", "a"] and (p.node, p.gpus) == p.members[0]
    assert p.members[0][1] == (2, 3) and len(p.members[1][1]) == 2


def test_a_gang_that_does_not_fit_starts_nowhere_and_says_which_nodes_have_room():
    nodes = [node("local-0"), node("local-1")]
    running = [member("x", "local-0", [0, 1], preemptible=False)]
    d = schedule([gang("g", 2, 4)], running, nodes, NOW, CFG)
    assert d.start == [] and d.preempt == []
    assert describe(d.waiting["g"]).text == "needs 2 nodes with 4 free GPUs each; 1 has them (local-1)"


def test_too_few_nodes_and_quarantined_nodes_are_named():
    d = schedule([gang("g", 3, 2)], [], [node("a"), node("b")], NOW, CFG)
    assert describe(d.waiting["g"]).text == "needs 3 nodes with 2 GPUs each; only 2 node(s) taking work have that many"
    d = schedule([gang("g", 2, 2)], [], [node("a"), node("b", schedulable=False)], NOW, CFG)
    assert describe(d.waiting["g"]).text == "node b is quarantined"
    d = schedule([gang("g", 2, 2, excluded=["b"])], [], [node("a"), node("b")], NOW, CFG)
    assert d.waiting["g"][0] is WaitKind.excluded


def test_a_blocked_gang_at_the_head_holds_nodes_that_backfill_respects():
    nodes = [node("a"), node("b")]
    running = [member("x", "a", [0, 1], prio=90, preemptible=False)]
    d = schedule([gang("g", 2, 4, prio=60, seq=0), single("small", 1, prio=40, seq=1)], running, nodes, NOW, CFG)
    assert d.start == []  # `small` would fit on b, which is held for the gang


def test_preemption_takes_a_whole_gang_once_and_prefers_a_single_victim():
    nodes = [node("a"), node("b"), node("c")]
    running = [member("G", "a", [0, 1, 2, 3]), member("G", "b", [0, 1, 2, 3]), member("s", "c", [0, 1, 2, 3])]
    d = schedule([single("x", 4, prio=80)], running, nodes, NOW, CFG)
    assert [(p.job_id, p.node) for p in d.preempt] == [("s", "c")]  # the gang counts as its 8 GPUs
    d = schedule([gang("y", 2, 4, prio=80)], running[:2], nodes, NOW, CFG)
    assert [(p.job_id, p.attempt) for p in d.preempt] == [("G", 1)]  # one stop frees both nodes
    assert d.waiting["y"][0] is WaitKind.preempting


def test_a_gang_waits_for_stopping_members_instead_of_preempting_more():
    nodes = [node("a"), node("b")]
    running = [
        RunningAttempt("G", 1, "a", (0, 1, 2, 3), 25, True, 0.0, stopping=True),
        RunningAttempt("G", 1, "b", (0, 1, 2, 3), 25, True, 0.0, stopping=True),
    ]
    d = schedule([gang("g", 2, 4, prio=80)], running, nodes, NOW, CFG)
    assert d.preempt == [] and d.waiting["g"][0] is WaitKind.stopping


def test_an_aged_gang_moves_ahead_of_newer_higher_priority_work():
    nodes = [node("a"), node("b")]
    old = gang("old", 2, 4, prio=25, seq=0, queued_at=NOW - 60.0 * 30)  # +25 points of aging
    d = schedule([single("new", 4, prio=45, seq=1), old], [], nodes, NOW, CFG)
    assert [p.job_id for p in d.start] == ["old"]


# -- properties -----------------------------------------------------------------------------


@st.composite
def states(draw):
    n_nodes = draw(st.integers(1, 5))
    nodes = [
        NodeView(f"n{i}", tuple(range(draw(st.integers(1, 4)))), draw(st.booleans()) or i == 0) for i in range(n_nodes)
    ]
    free = {v.name: list(v.gpus) for v in nodes}
    running: list[RunningAttempt] = []
    for k in range(draw(st.integers(0, 6))):
        width = draw(st.integers(1, n_nodes))
        g = draw(st.integers(1, 4))
        hosts = [v.name for v in nodes if len(free[v.name]) >= g][:width]
        if not hosts:
            continue
        prio, pre = draw(st.integers(0, 100)), draw(st.booleans())
        started, stopping = draw(st.sampled_from([0.0, NOW - 1])), draw(st.booleans())
        for h in hosts:
            taken, free[h] = free[h][:g], free[h][g:]
            running.append(RunningAttempt(f"r{k}", 1, h, tuple(taken), prio, pre, started, stopping and width == 1))
    pending = [
        PendingJob(
            f"p{k}",
            draw(st.integers(0, 100)),
            draw(st.integers(1, 4)),
            k,
            NOW,
            frozenset(draw(st.sets(st.sampled_from([v.name for v in nodes]), max_size=1))),
            nodes=draw(st.integers(1, 3)),
        )
        for k in range(draw(st.integers(1, 6)))
    ]
    return nodes, running, pending


@settings(max_examples=300, deadline=None)
@given(states())
def test_never_a_partial_gang_and_never_over_allocation(state):
    nodes, running, pending = state
    d = schedule(pending, running, nodes, NOW, CFG)
    by_id = {j.job_id: j for j in pending}
    views = {v.name: v for v in nodes}
    used = {v.name: Counter() for v in nodes}
    for a in running:
        used[a.node].update(a.gpus)
    for p in d.start:
        job = by_id[p.job_id]
        members = p.members or ((p.node, p.gpus),)
        assert len(members) == job.nodes and len({m[0] for m in members}) == job.nodes
        assert (p.node, p.gpus) == members[0]
        for where, gpus in members:
            assert len(gpus) == job.gpus and views[where].schedulable and where not in job.excluded_nodes
            used[where].update(gpus)
    for name, counts in used.items():
        assert all(c == 1 for c in counts.values()) and set(counts) <= set(views[name].gpus)
    assert len({p.job_id for p in d.start} | set(d.waiting)) == len(pending)
    for p in d.preempt:
        victim = next(a for a in running if (a.job_id, a.attempt) == (p.job_id, p.attempt))
        assert victim.preemptible and not victim.stopping and victim.priority < by_id[p.for_job].priority
    assert len({(p.job_id, p.attempt) for p in d.preempt}) == len(d.preempt)  # a gang is stopped once


@settings(max_examples=300, deadline=None)
@given(states(), st.integers(2, 3), st.integers(1, 4))
def test_a_high_priority_gang_that_fits_by_preempting_does_not_wait_behind_lower_work(state, width, g):
    nodes, running, pending = state
    top = max([j.priority for j in pending] + [a.priority for a in running]) + 1
    head = PendingJob("head", min(top, 100), g, -1, NOW, nodes=width)
    if top > 100:
        return
    capacity = {}
    for v in nodes:
        if not v.schedulable:
            continue
        held = [a for a in running if a.node == v.name]
        freed = [
            s for a in held if a.stopping or (a.preemptible and NOW - a.started_at >= CFG.min_runtime_s) for s in a.gpus
        ]
        capacity[v.name] = len(v.gpus) - sum(len(a.gpus) for a in held) + len(freed)
    could = sum(c >= g for c in capacity.values()) >= width
    d = schedule([head, *pending], running, nodes, NOW, CFG)
    if could:
        assert "head" in {p.job_id for p in d.start} or d.waiting["head"][0] in (WaitKind.preempting, WaitKind.stopping)
