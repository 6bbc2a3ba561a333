"""Jobs without GPUs are placed by their CPUs: spread over the nodes with the most free CPUs, waiting
with a CPU reason when none has enough; nodes that do not count CPUs take any number (as before)."""

from __future__ import annotations

from collections import Counter

from compute.scheduler import NodeView, PendingJob, RunningAttempt, schedule
from compute.waiting import WaitKind, describe

NOW = 1000.0


def cpu_job(jid: str, cpus: float = 1.0, seq: int = 0) -> PendingJob:
    return PendingJob(jid, 50, 0, seq, NOW, cpus=cpus)


def test_cpu_jobs_spread_over_nodes_by_their_free_cpus():
    nodes = [NodeView("a", (0, 1), cpus=4.0), NodeView("b", (2, 3), cpus=4.0)]
    d = schedule([cpu_job(f"j{i}", seq=i) for i in range(6)], [], nodes, NOW)
    assert Counter(p.node for p in d.start) == {"a": 3, "b": 3}


def test_running_attempts_hold_their_cpus_and_a_job_too_big_for_what_is_free_waits_with_a_cpu_reason():
    nodes = [NodeView("a", (), cpus=4.0), NodeView("b", (), cpus=2.0)]
    running = [RunningAttempt("r", 1, "a", (), 50, True, 0.0, cpus=3.0)]
    d = schedule([cpu_job("small", 1.5, 0), cpu_job("big", 2.0, 1)], running, nodes, NOW)
    assert [(p.job_id, p.node) for p in d.start] == [("small", "b")]  # b has 2 free, a only 1
    waiting = describe(d.waiting["big"])
    assert waiting.kind is WaitKind.no_cpus
    assert waiting.text == "needs 2 CPU(s) on one node; the most free on a node taking work is 1 (a)"


def test_a_job_needing_more_cpus_than_any_node_has_says_so():
    d = schedule([cpu_job("huge", 8.0)], [], [NodeView("a", (), cpus=4.0)], NOW)
    assert describe(d.waiting["huge"]).text == "needs 8 CPU(s) on one node; the largest node taking work has 4"


def test_gpu_jobs_placed_in_the_same_pass_hold_cpus_too():
    nodes = [NodeView("a", (0,), cpus=1.0), NodeView("b", (), cpus=1.0)]
    gpu = PendingJob("gpu", 90, 1, 0, NOW)
    d = schedule([gpu, cpu_job("c1", seq=1), cpu_job("c2", seq=2)], [], nodes, NOW)
    assert {p.job_id: p.node for p in d.start} == {"gpu": "a", "c1": "b"}
    assert describe(d.waiting["c2"]).kind is WaitKind.no_cpus


def test_nodes_that_do_not_count_cpus_take_every_cpu_job_on_the_first_by_name():
    nodes = [NodeView("b", ()), NodeView("a", ())]
    d = schedule([cpu_job(f"j{i}", 64.0, i) for i in range(5)], [], nodes, NOW)
    assert {p.node for p in d.start} == {"a"} and len(d.start) == 5


def test_a_project_at_its_cpu_quota_waits_with_a_cpu_quota_reason_while_others_start():
    from compute.quota_view import ProjectView

    nodes = [NodeView("a", (0,), cpus=16.0)]
    projects = [ProjectView("small", 0, quota_cpus=3.0), ProjectView("big", 0)]
    running = [RunningAttempt("r", 1, "a", (), 50, True, 0.0, project="small", cpus=1.0)]
    pending = [PendingJob(f"s{i}", 50, 0, i, NOW, project="small") for i in range(4)]
    pending += [PendingJob("gpu", 50, 1, 4, NOW, project="small", cpus=0.5)]  # GPU jobs' CPUs count too
    pending += [PendingJob(f"b{i}", 50, 0, 10 + i, NOW, project="big", cpus=2.0) for i in range(3)]
    d = schedule(pending, running, nodes, NOW, projects=projects)
    assert sorted(p.job_id for p in d.start) == ["b0", "b1", "b2", "s0", "s1"]
    held = describe(d.waiting["s2"])
    assert held.kind is WaitKind.cpu_quota
    assert held.text == "project small is at its CPU quota: its running attempts hold 3 of 3 CPU(s) and this job needs 1"
    assert describe(d.waiting["gpu"]).kind is WaitKind.cpu_quota
