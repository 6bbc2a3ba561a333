"""Jobs without GPUs spread over the Ray nodes by their CPUs (each node's `CPU` resource)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compute import Client, JobState
from tests.compute.helpers import gate_job, wait_state, wait_until

pytestmark = pytest.mark.ray


def test_cpu_jobs_spread_over_ray_nodes(ray_cluster: Any, start_compute: Callable[..., Client], tmp_path: Path) -> None:
    worker = ray_cluster.add_node(num_cpus=2, num_gpus=0)
    try:
        client = start_compute(backend="ray", ray_address=ray_cluster.address, gpus=None)
        wait_until(lambda: len(client.nodes()) == 2, timeout=60, what="the worker node in the node table")
        assert sorted(n.cpus for n in client.nodes()) == [2.0, 2.0]
        gate = tmp_path / "open"
        jobs = [client.submit(gate_job(gate, resources={"cpus": 1.0})) for _ in range(4)]
        placed = Counter(wait_state(client, j.id, JobState.running, timeout=90).attempts[0].node for j in jobs)
        assert sorted(placed.values()) == [2, 2]
        gate.touch()
        assert all(j.state is JobState.succeeded for j in client.wait([j.id for j in jobs], timeout=90))
    finally:
        ray_cluster.remove_node(worker)
