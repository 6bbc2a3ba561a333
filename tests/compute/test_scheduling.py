"""Scheduling with real processes: priority order, FIFO, gang placement, backfill, CPU-only jobs."""

from __future__ import annotations

import pytest

from compute import ComputeError, JobState
from tests.compute.helpers import env_job, gate_job, log_text, quick_job, wait_state


def test_priority_order_then_fifo(start_compute, tmp_path):
    client = start_compute(gpus=1)
    gate = tmp_path / "open"
    blocker = client.submit(gate_job(gate, preemptible=False, resources={"gpus": 1}))
    wait_state(client, blocker.id, JobState.running)
    one = {"gpus": 1}
    low = client.submit(quick_job(name="low", priority="low", resources=one))
    normal_1 = client.submit(quick_job(name="normal-1", resources=one))
    high = client.submit(quick_job(name="high", priority="high", resources=one))
    normal_2 = client.submit(quick_job(name="normal-2", resources=one))
    gate.touch()
    jobs = client.wait([blocker.id, low.id, normal_1.id, high.id, normal_2.id], timeout=60)
    assert all(j.state == JobState.succeeded for j in jobs)
    started = sorted(jobs[1:], key=lambda j: j.attempts[0].started_at)
    assert [j.spec.name for j in started] == ["high", "normal-1", "normal-2", "low"]


def test_gang_placement_keeps_a_jobs_gpus_on_one_node(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=2)
    assert [(n.name, n.gpus, n.virtual) for n in client.nodes()] == [
        ("local-0", [0, 1], True), ("local-1", [2, 3], True)]
    gate = tmp_path / "open"
    one_a = client.submit(gate_job(gate, resources={"gpus": 1}))
    wait_state(client, one_a.id, JobState.running)
    one_b = client.submit(gate_job(gate, resources={"gpus": 1}))
    wait_state(client, one_b.id, JobState.running)
    pair = client.submit(env_job(resources={"gpus": 2}))
    done = client.wait(pair.id, timeout=60)[0]
    attempt = done.attempts[0]
    node_gpus = {n.name: n.gpus for n in client.nodes()}
    assert done.state == JobState.succeeded
    assert sorted(attempt.gpus) == node_gpus[attempt.node]
    assert f"CUDA_VISIBLE_DEVICES={','.join(map(str, attempt.gpus))}" in log_text(client, pair.id)
    # Best fit packed both 1-GPU jobs onto one node, leaving the other whole.
    singles = [client.get(j.id).attempts[0].node for j in (one_a, one_b)]
    assert singles[0] == singles[1] != attempt.node
    with pytest.raises(ComputeError, match="largest node .* has 2 GPU slots"):
        client.submit(quick_job(resources={"gpus": 3}))
    gate.touch()


def test_backfill_runs_small_low_priority_work_while_a_big_job_waits(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=3)
    gate = tmp_path / "open"
    holders = []
    for _ in range(2):  # best fit puts one 2-GPU holder on each node: 1 slot free on each
        holders.append(client.submit(gate_job(gate, resources={"gpus": 2}, preemptible=False)))
        wait_state(client, holders[-1].id, JobState.running)
    assert {client.get(h.id).attempts[0].node for h in holders} == {"local-0", "local-1"}
    big = client.submit(quick_job(name="big", priority="high", resources={"gpus": 3}))
    small = client.submit(quick_job(name="small", priority="low", resources={"gpus": 1}))
    assert client.wait(small.id, timeout=60)[0].state == JobState.succeeded
    assert client.get(big.id).state == JobState.pending  # it reserved one node; small used the other
    gate.touch()
    assert client.wait(big.id, timeout=60)[0].state == JobState.succeeded


def test_cpu_only_job_starts_while_every_gpu_is_taken(start_compute, tmp_path):
    client = start_compute(gpus=1)
    gate = tmp_path / "open"
    holder = client.submit(gate_job(gate, resources={"gpus": 1}, preemptible=False))
    wait_state(client, holder.id, JobState.running)
    cpu = client.submit(env_job())
    done = client.wait(cpu.id, timeout=60)[0]
    assert done.state == JobState.succeeded and done.attempts[0].gpus == []
    assert "CUDA_VISIBLE_DEVICES=\n" in log_text(client, cpu.id)
    gate.touch()
