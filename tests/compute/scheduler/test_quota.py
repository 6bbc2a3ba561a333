"""Projects in one scheduling pass: guaranteed quota, borrowing, reclaim by checkpoint, fair share, reasons."""

from __future__ import annotations

from compute.quota_view import ProjectView, VictimOrder
from compute.scheduler import NodeView, PendingJob, RunningAttempt, SchedulerConfig, schedule
from compute.waiting import WaitKind, describe

NODES = [NodeView("n0", (0, 1, 2, 3)), NodeView("n1", (0, 1, 2, 3))]
AB = [ProjectView("a", 4), ProjectView("b", 4)]


def job(job_id: str, project: str, gpus: int = 1, priority: int = 50, seq: int = 0, **kw) -> PendingJob:
    return PendingJob(job_id, priority, gpus, seq, 0.0, project=project, **kw)


def running(
    job_id: str, project: str, node: str, gpus: tuple[int, ...], started_at: float = 0.0, priority: int = 50, **kw
) -> RunningAttempt:
    return RunningAttempt(job_id, 1, node, gpus, priority, True, started_at, project=project, **kw)


def test_a_project_borrows_idle_gpus_beyond_its_quota_and_those_starts_are_marked_borrowed():
    d = schedule([job(f"b{i}", "b", seq=i) for i in range(8)], [], NODES, 100.0, SchedulerConfig(), AB)
    assert len(d.start) == 8
    assert sum(p.borrowed for p in d.start) == 4


def test_reclaim_stops_the_borrowed_attempt_with_the_most_recent_checkpoint_first():
    held = [running(f"b{i}", "b", "n0", (i,), started_at=float(i)) for i in range(4)]  # b's quota
    borrowed = [
        running("old-ckpt", "b", "n1", (0,), started_at=10.0, checkpoint_at=20.0),
        running("fresh-ckpt", "b", "n1", (1,), started_at=11.0, checkpoint_at=95.0),
        running("no-ckpt", "b", "n1", (2,), started_at=12.0),
        running("newest", "b", "n1", (3,), started_at=13.0),
    ]
    d = schedule([job("a0", "a")], held + borrowed, NODES, 100.0, SchedulerConfig(), AB)
    assert [(p.job_id, p.for_job, p.reclaim_for) for p in d.preempt] == [("fresh-ckpt", "a0", "a")]
    why = describe(d.waiting["a0"])
    assert why.kind is WaitKind.reclaiming and "project a gets its quota back" in why.text
    newest_first = SchedulerConfig(reclaim_order=VictimOrder.newest)
    d = schedule([job("a0", "a")], held + borrowed, NODES, 100.0, newest_first, AB)
    assert [p.job_id for p in d.preempt] == ["newest"]


def test_reclaim_ignores_the_borrowed_attempts_priority_and_age():
    held = [running(f"b{i}", "b", "n0", (i,), priority=95) for i in range(4)]  # b's quota holds its top work
    urgent = [running(f"u{i}", "b", "n1", (i,), started_at=99.0, priority=90) for i in range(4)]
    d = schedule([job("a0", "a", priority=10)], held + urgent, NODES, 100.0, SchedulerConfig(min_runtime_s=600), AB)
    assert len(d.preempt) == 1 and d.preempt[0].job_id.startswith("u")


def test_guaranteed_work_of_another_project_is_never_preempted_for_priority():
    full = [running(f"a{i}", "a", "n0", (i,), priority=10) for i in range(4)] + [
        running(f"b{i}", "b", "n1", (i,), priority=10) for i in range(4)
    ]
    d = schedule([job("b-urgent", "b", priority=90)], full, NODES, 100.0, SchedulerConfig(), AB)
    victims = {p.job_id for p in d.preempt}
    assert victims and all(v.startswith("b") for v in victims)  # its own project's lower-priority work only


def test_without_a_lendable_gpu_a_borrowing_job_waits_with_the_borrowing_reason():
    full = [running(f"b{i}", "b", "n1", (i,)) for i in range(4)] + [running("a0", "a", "n0", (0,))]
    projects = [ProjectView("a", 4, lend=False), ProjectView("b", 4)]
    d = schedule([job("b-more", "b")], full, NODES, 100.0, SchedulerConfig(), projects)
    assert not d.start  # a's 3 unused GPUs are not lent
    why = describe(d.waiting["b-more"])
    assert why.kind is WaitKind.borrowing and "project b is over its quota of 4" in why.text


def test_a_project_that_does_not_borrow_or_a_job_that_is_not_preemptible_stays_within_the_quota():
    projects = [ProjectView("a", 1, borrow=False), ProjectView("b", 1)]
    pending = [
        job("a0", "a", seq=0),
        job("a1", "a", seq=1),
        job("b0", "b", seq=2),
        job("b1", "b", seq=3, preemptible=False),
    ]
    d = schedule(pending, [], NODES, 100.0, SchedulerConfig(), projects)
    assert {p.job_id for p in d.start} == {"a0", "b0"}
    assert describe(d.waiting["a1"]).kind is WaitKind.quota and "does not borrow" in describe(d.waiting["a1"]).text
    assert "not preemptible" in describe(d.waiting["b1"]).text


def test_borrowed_only_jobs_never_take_guaranteed_quota():
    d = schedule([job("night", "a", borrowed_only=True)], [], NODES, 100.0, SchedulerConfig(), AB)
    assert d.start[0].borrowed


def test_fair_share_gives_idle_gpus_to_the_project_with_less_weighted_borrowed_usage():
    projects = [ProjectView("a", 0, usage=3600.0 * 4), ProjectView("b", 0), ProjectView("c", 0, weight=2.0)]
    pending = [job(f"{p}{i}", p, seq=10 * n + i) for n, p in enumerate("abc") for i in range(8)]
    d = schedule(pending, [], [NodeView("n0", tuple(range(6)))], 100.0, SchedulerConfig(), projects)
    got = [p.job_id[0] for p in d.start]
    assert got.count("c") == 4 and got.count("b") == 2 and "a" not in got  # c's weight 2, a's recent usage
    why = describe(d.waiting["a0"])
    assert why.kind is WaitKind.fair_share and "b, c" in why.text


def test_with_no_projects_the_pass_is_the_single_queue():
    pending = [job(f"j{i}", "b" if i % 2 else "a", priority=10 * i, seq=i) for i in range(10)]
    full = [running(f"r{i}", "a", "n0", (i,), priority=5) for i in range(4)]
    assert schedule(pending, full, NODES, 100.0) == schedule(pending, full, NODES, 100.0, SchedulerConfig(), ())


def test_attempts_on_a_cordoned_node_are_neither_victims_nor_a_crash():
    cordoned = [NodeView("n0", (0, 1, 2, 3), schedulable=False, unavailable="cordoned"), NODES[1]]
    on_cordoned = [running(f"b{i}", "b", "n0", (i,), priority=10) for i in range(4)]  # b's quota, on n0
    borrowed = [running(f"lent{i}", "b", "n1", (i,), priority=10) for i in range(4)]
    pending = [job("b-urgent", "b", gpus=4, priority=90), job("a0", "a", gpus=4)]
    d = schedule(pending, on_cordoned + borrowed, cordoned, 100.0, SchedulerConfig(), AB)
    assert {p.node for p in d.preempt} <= {"n1"}  # nothing is planned on the node that takes no work
    assert set(d.waiting) == {"b-urgent", "a0"}
