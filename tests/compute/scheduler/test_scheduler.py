"""The pure scheduling function: examples of each rule, then properties over random states."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compute.scheduler import (
    NodeView,
    PendingJob,
    RunningAttempt,
    SchedulerConfig,
    effective_priority,
    schedule,
)

NOW = 1000.0
CFG = SchedulerConfig(min_runtime_s=10.0, aging_s=60.0, aging_cap=25)


def job(jid: str, prio: int = 50, gpus: int = 1, seq: int = 0, queued_at: float = NOW, excluded=()) -> PendingJob:
    return PendingJob(jid, prio, gpus, seq, queued_at, frozenset(excluded))


def run(jid: str, node: str, gpus, prio: int = 25, started: float = 0.0, preemptible=True, stopping=False):
    return RunningAttempt(jid, 1, node, tuple(gpus), prio, preemptible, started, stopping)


def node(name: str, slots: int = 4, schedulable: bool = True) -> NodeView:
    return NodeView(name, tuple(range(slots)), schedulable)


def started(decision) -> list[str]:
    return [p.job_id for p in decision.start]


def test_highest_priority_first_then_fifo():
    d = schedule([job("low", 25, seq=0), job("b", 50, seq=2), job("a", 50, seq=1), job("urgent", 90, seq=3)],
                 [], [node("n", 2)], NOW, CFG)
    assert started(d) == ["urgent", "a"]


def test_gang_placement_keeps_all_gpus_of_a_job_on_one_node():
    nodes = [node("a", 4), node("b", 4)]
    running = [run("x", "a", [0, 1]), run("y", "b", [0, 1])]
    d = schedule([job("big", 75, gpus=4)], running, nodes, NOW, CFG)
    # 4 free slots exist in total but on two nodes: the job is not split, it preempts.
    assert started(d) == []
    assert {p.node for p in d.preempt} == {"a"}  # fewest victims, then name


def test_best_fit_prefers_the_fullest_node_that_fits():
    nodes = [node("a", 4), node("b", 4)]
    d = schedule([job("j", gpus=2)], [run("x", "b", [0, 1], prio=90)], nodes, NOW, CFG)
    assert d.start[0].node == "b" and d.start[0].gpus == (2, 3)


def test_backfill_uses_slots_a_blocked_big_job_cannot_use_on_other_nodes():
    nodes = [node("a", 4), node("b", 2)]
    running = [run("x", "a", [0], prio=90, preemptible=False)]
    pending = [job("big", 75, gpus=4, seq=0), job("small", 25, gpus=1, seq=1), job("small2", 25, gpus=1, seq=2)]
    d = schedule(pending, running, nodes, NOW, CFG)
    # big waits for node a (reserved); small jobs backfill node b.
    assert started(d) == ["small", "small2"]
    assert {p.node for p in d.start} == {"b"}


def test_reservation_keeps_a_stream_of_small_jobs_from_starving_a_big_one():
    nodes = [node("a", 4)]
    running = [run("x", "a", [0, 1], prio=90, preemptible=False)]
    pending = [job("big", 50, gpus=4, seq=0)] + [job(f"s{i}", 50, gpus=1, seq=i + 1) for i in range(5)]
    d = schedule(pending, running, nodes, NOW, CFG)
    assert started(d) == []  # the two free slots are held for `big`


def test_aging_lifts_a_long_waiting_job_over_newer_higher_ones_but_never_lets_it_preempt():
    old = job("old", 25, queued_at=NOW - 60 * 30, seq=0)  # waited 30 min: +25 (capped)
    new = job("new", 40, seq=1)
    assert effective_priority(old, NOW, CFG) == 50
    assert started(schedule([new, old], [], [node("n", 1)], NOW, CFG)) == ["old"]
    d = schedule([old], [run("x", "n", [0], prio=40)], [node("n", 1)], NOW, CFG)
    assert d.preempt == [] and d.start == []


def test_preempts_fewest_lowest_priority_most_recent_attempts():
    nodes = [node("n", 4)]
    running = [run("old-low", "n", [0], prio=25, started=100), run("new-low", "n", [1], prio=25, started=500),
               run("idle", "n", [2], prio=0, started=100), run("mid", "n", [3], prio=50, started=100)]
    d = schedule([job("h", 75, gpus=2)], running, nodes, NOW, CFG)
    assert [p.job_id for p in d.preempt] == ["idle", "new-low"]
    assert all(p.for_job == "h" for p in d.preempt)


def test_a_pass_stops_at_most_preempt_max_victims_attempts_the_rest_follow_in_the_next_pass():
    from dataclasses import replace

    from compute.waiting import WaitKind, describe

    nodes = [node(f"n{i}", 1) for i in range(4)]
    running = [run(f"low{i}", f"n{i}", [0], prio=10) for i in range(4)]
    urgent = [job(f"u{i}", 90, seq=i) for i in range(4)]
    capped = replace(CFG, preempt_max_victims=2)
    d = schedule(urgent, running, nodes, NOW, capped)
    assert [p.for_job for p in d.preempt] == ["u0", "u1"]
    later = [describe(d.waiting[j]) for j in ("u2", "u3")]
    assert all(w.kind is WaitKind.preempt_limit for w in later)
    assert "this one already stops 2 attempt(s)" in later[0].text
    stopping = [replace(r, stopping=True) if r.job_id in {p.job_id for p in d.preempt} else r for r in running]
    d2 = schedule(urgent, stopping, nodes, NOW, capped)  # the next pass: u0, u1 covered, u2, u3 preempt
    assert sorted(p.for_job for p in d2.preempt) == ["u2", "u3"]
    assert len(schedule(urgent, running, nodes, NOW, replace(CFG, preempt_max_victims=0)).preempt) == 4


def test_minimum_runtime_and_non_preemptible_attempts_are_never_victims():
    nodes = [node("n", 2)]
    running = [run("young", "n", [0], started=NOW - 5), run("pinned", "n", [1], preemptible=False)]
    d = schedule([job("h", 90)], running, nodes, NOW, CFG)
    assert d.preempt == [] and d.start == []


def test_equal_priority_never_preempts():
    d = schedule([job("h", 50)], [run("x", "n", [0], prio=50)], [node("n", 1)], NOW, CFG)
    assert d.preempt == []


def test_slots_of_stopping_attempts_cover_a_waiting_job_without_new_preemptions():
    nodes = [node("n", 2)]
    running = [run("victim", "n", [0], stopping=True), run("other", "n", [1])]
    d = schedule([job("h", 75)], running, nodes, NOW, CFG)
    assert d.preempt == [] and d.start == []


def test_quarantined_and_excluded_nodes_get_no_work():
    nodes = [node("bad", 4, schedulable=False), node("excl", 4), node("ok", 1)]
    d = schedule([job("a", excluded={"excl"}), job("b", seq=1, excluded={"excl"})], [], nodes, NOW, CFG)
    assert [(p.job_id, p.node) for p in d.start] == [("a", "ok")]


def test_cpu_only_jobs_take_no_slot():
    d = schedule([job("cpu", gpus=0), job("g", gpus=1, seq=1)], [run("x", "n", [0], prio=90)], [node("n", 1)], NOW, CFG)
    assert started(d) == ["cpu"]
    assert d.start[0].gpus == ()


def test_a_job_bigger_than_any_node_is_skipped_not_fatal():
    d = schedule([job("huge", 90, gpus=16), job("ok", seq=1)], [], [node("n", 4)], NOW, CFG)
    assert started(d) == ["ok"]


# ---- properties over random states -------------------------------------------------

@st.composite
def states(draw):
    n_nodes = draw(st.integers(1, 5))
    nodes = [NodeView(f"n{i}", tuple(range(draw(st.integers(1, 8)))), draw(st.booleans()) or i == 0)
             for i in range(n_nodes)]
    running = []
    for nd in nodes:
        free = list(nd.gpus)
        for k in range(draw(st.integers(0, len(free)))):
            if not free:
                break
            take = draw(st.integers(1, len(free)))
            gpus, free = free[:take], free[take:]
            running.append(RunningAttempt(f"r-{nd.name}-{k}", 1, nd.name, tuple(gpus),
                                          draw(st.sampled_from([0, 25, 50, 75, 90])), draw(st.booleans()),
                                          draw(st.sampled_from([0.0, NOW - 5, NOW - 100])), draw(st.booleans())))
    pending = [PendingJob(f"p{i}", draw(st.sampled_from([0, 25, 50, 75, 90])), draw(st.integers(0, 6)), i,
                          draw(st.sampled_from([NOW, NOW - 600, NOW - 6000])),
                          frozenset(draw(st.sets(st.sampled_from([n.name for n in nodes]), max_size=1))))
               for i in range(draw(st.integers(0, 12)))]
    return pending, running, nodes


@settings(max_examples=300, deadline=None)
@given(states())
def test_never_over_allocates_and_only_preempts_eligible_lower_priority_work(state):
    pending, running, nodes = state
    d = schedule(pending, running, nodes, NOW, CFG)
    by_node = {n.name: n for n in nodes}
    jobs = {j.job_id: j for j in pending}
    held = {(a.node, g) for a in running for g in a.gpus}
    used = set()
    for p in d.start:
        j, n = jobs[p.job_id], by_node[p.node]
        assert n.schedulable and p.node not in j.excluded_nodes
        assert len(p.gpus) == j.gpus and set(p.gpus) <= set(n.gpus)
        for g in p.gpus:
            assert (p.node, g) not in held and (p.node, g) not in used
            used.add((p.node, g))
    assert len({p.job_id for p in d.start}) == len(d.start)
    attempts = {(a.job_id, a.attempt): a for a in running}
    assert len({(p.job_id, p.attempt) for p in d.preempt}) == len(d.preempt)
    for p in d.preempt:
        victim = attempts[(p.job_id, p.attempt)]
        assert victim.preemptible and not victim.stopping
        assert victim.priority < jobs[p.for_job].priority
        assert NOW - victim.started_at >= CFG.min_runtime_s


def _could_fit_by_preempting(j: PendingJob, running, nodes) -> bool:
    for n in nodes:
        if not n.schedulable or n.name in j.excluded_nodes or len(n.gpus) < j.gpus:
            continue
        mine = [a for a in running if a.node == n.name]
        free = len(n.gpus) - sum(len(a.gpus) for a in mine)
        freeable = sum(len(a.gpus) for a in mine if a.stopping or (
            a.preemptible and a.priority < j.priority and NOW - a.started_at >= CFG.min_runtime_s))
        if free + freeable >= j.gpus:
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(states())
def test_the_first_job_in_line_that_could_fit_by_preempting_is_never_left_waiting(state):
    pending, running, nodes = state
    d = schedule(pending, running, nodes, NOW, CFG)
    if not pending:
        return
    head = min(pending, key=lambda j: (-effective_priority(j, NOW, CFG), j.seq))
    if _could_fit_by_preempting(head, running, nodes):
        acted = head.job_id in {p.job_id for p in d.start} or head.job_id in {p.for_job for p in d.preempt}
        covered = any(a.stopping for a in running)  # it may be waiting on slots already being freed
        assert acted or covered


@settings(max_examples=300, deadline=None)
@given(states())
def test_a_lone_pending_job_that_could_fit_by_preempting_starts_or_gets_victims(state):
    pending, running, nodes = state
    running = [a for a in running if not a.stopping]
    for j in pending[:1]:
        d = schedule([j], running, nodes, NOW, CFG)
        if _could_fit_by_preempting(j, running, nodes) and j.gpus > 0:
            assert started(d) == [j.job_id] or {p.for_job for p in d.preempt} == {j.job_id}
            freed = sum(len(a.gpus) for a in running if (a.job_id, a.attempt) in {(p.job_id, p.attempt) for p in d.preempt})
            if d.preempt:
                n = next(x for x in nodes if x.name == d.preempt[0].node)
                free = len(n.gpus) - sum(len(a.gpus) for a in running if a.node == n.name)
                assert free + freed >= j.gpus


def test_multi_gpu_victims_count_by_the_slots_they_free():
    nodes = [node("a", 4), node("b", 4)]
    running = [run("a-pair", "a", [0, 1], prio=10, started=100), run("a-one", "a", [2], prio=0, started=100),
               run("a-mid", "a", [3], prio=60, started=100),
               run("b-1", "b", [0], prio=0), run("b-2", "b", [1], prio=0), run("b-3", "b", [2], prio=0),
               run("b-4", "b", [3], prio=70)]
    # Three slots below priority 50: two victims on a (one of them a 2-GPU attempt), three on b.
    d = schedule([job("h", 50, gpus=3)], running, nodes, NOW, CFG)
    assert [(p.job_id, p.node) for p in d.preempt] == [("a-one", "a"), ("a-pair", "a")]
    # Below priority 5 node a frees one slot only, so a 2-GPU job takes two of b's.
    d = schedule([job("l", 5, gpus=2)], running, nodes, NOW, CFG)
    assert {p.node for p in d.preempt} == {"b"} and len(d.preempt) == 2


def test_a_job_no_node_can_free_enough_for_preempts_nothing_and_smaller_jobs_still_do():
    nodes = [node("a", 4), node("b", 4)]
    running = [run("a-low", "a", [0, 1], prio=0), run("a-pin", "a", [2, 3], prio=0, preemptible=False),
               run("b-low", "b", [0], prio=0), run("b-high", "b", [1, 2, 3], prio=90)]
    pending = [job("big", 80, gpus=4, seq=0), job("big2", 70, gpus=4, seq=1),
               job("pair", 60, gpus=2, seq=2), job("one", 50, gpus=1, seq=3)]
    d = schedule(pending, running, nodes, NOW, CFG)
    # No node frees 4 slots below priority 80 (a has a pinned pair, b a priority-90 triple),
    # so neither 4-GPU job preempts anything; the smaller jobs still find their victims.
    assert [(p.job_id, p.node, p.for_job) for p in d.preempt] == [("a-low", "a", "pair"), ("b-low", "b", "one")]
    assert d.start == []
