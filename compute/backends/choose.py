"""Which backend a daemon runs on: the one place that reads `DaemonConfig.backend`."""

from __future__ import annotations

from typing import Any

from compute.backends.attempt_procs import become_subreaper
from compute.backends.base import Backend, NeedsOnNodes, ProbesOnNodes
from compute.backends.local import LocalBackend
from compute.daemon_config import DaemonConfig
from compute.gpus import plan_nodes
from compute.health import HealthConfig, NcclProbe, build_probes
from compute.paths import ComputePaths
from compute.storage import resolve_storage


def make_backend(paths: ComputePaths, config: DaemonConfig) -> Backend:
    """`local`: subprocesses of this host on the planned nodes. `ray`: the nodes of a Ray
    cluster at `config.ray_address` (none: a local Ray instance with `config.gpus` GPUs).
    Called in the daemon's process: without cgroups it becomes its attempts' subreaper."""
    if config.backend == "ray":
        from compute.backends.ray import RayBackend  # imports ray: only for this backend

        return RayBackend(paths.home, config.ray_address, local_gpus=config.gpus,
                          storage=resolve_storage(config.storage, paths.home))
    nodes = plan_nodes(config.gpus, config.virtual_nodes, config.gpus_per_node, cpus_per_node=config.cpus_per_node)
    local = LocalBackend(nodes, paths.run_dir)
    if local.cgroups is None:  # no cgroups: daemonized orphans of attempts come back to the daemon, not init
        become_subreaper()
    return local


def monitor_probes(backend: Backend, health: HealthConfig) -> dict[str, Any]:
    """HealthMonitor arguments that make its probes run where the backend's nodes are:
    nothing for a backend on this host, the backend's own wrapping for one with
    `ProbesOnNodes` (Ray: a task pinned to each node), with the backend's own probes of what its
    attempts need there (`NeedsOnNodes`: the storage)."""
    if not isinstance(backend, ProbesOnNodes):
        return {}
    nccl = NcclProbe(health.nccl_timeout_s, health.nccl_min_busbw_gbps)
    own = backend.node_probes() if isinstance(backend, NeedsOnNodes) else []
    probes = backend.on_nodes([*build_probes(health), *own, nccl])
    return {"probes": probes[:-1], "nccl_probe": probes[-1]}
