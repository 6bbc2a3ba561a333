"""A daemon whose virtual nodes count CPUs (`--cpus-per-node`) spreads jobs without GPUs over them by
their `resources.cpus`, and a job that no node has CPUs for waits with that reason."""

from __future__ import annotations

from collections import Counter

import pytest

from compute import ComputeError, JobState
from compute.waiting import WaitKind
from compute.gpus import plan_nodes
from tests.compute.helpers import gate_job, wait_state, wait_until


def test_cpu_jobs_spread_over_virtual_nodes_and_wait_for_cpus(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, cpus_per_node=2)
    assert [n.cpus for n in client.nodes()] == [2.0, 2.0]
    gate = tmp_path / "open"
    jobs = [client.submit(gate_job(gate, resources={"cpus": 1.0})) for _ in range(4)]
    placed = Counter(wait_state(client, j.id, JobState.running).attempts[0].node for j in jobs)
    assert placed == {"local-0": 2, "local-1": 2}
    extra = client.submit(gate_job(gate, resources={"cpus": 0.5}))
    waiting = wait_until(lambda: (j := client.get(extra.id)).waiting_kind is not None and j, what="a waiting reason")
    assert waiting.state is JobState.pending and waiting.waiting_kind is WaitKind.no_cpus
    assert waiting.waiting_reason == "needs 0.5 CPU(s) on one node; the most free on a node taking work is 0 (local-1)"
    gate.touch()
    assert all(j.state is JobState.succeeded for j in client.wait([*(j.id for j in jobs), extra.id], timeout=60))


def test_cpus_per_node_needs_virtual_nodes():
    with pytest.raises(ComputeError, match="--cpus-per-node needs --virtual-nodes N as well"):
        plan_nodes(cpus_per_node=4)
