"""GPU slots of this host: real GPUs from nvidia-smi, else virtual slots.

`plan_nodes` is the one place that turns `--gpus`, `--virtual-nodes`, `--gpus-per-node`
and `--cpus-per-node` into the nodes the local backend offers.
"""

from __future__ import annotations

import shutil
import subprocess

from compute.errors import ComputeError
from compute.records import Node

DEFAULT_VIRTUAL_SLOTS = 4


def detect_gpus(timeout_s: float = 10.0) -> list[int]:
    """Indices of the NVIDIA GPUs nvidia-smi reports; empty when there is none or no driver."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run(
            [exe, "--query-gpu=index", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=timeout_s, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return sorted(int(line) for line in out.split() if line.strip().isdigit())


def plan_nodes(
    gpus: int | None = None,
    virtual_nodes: int | None = None,
    gpus_per_node: int | None = None,
    detected: list[int] | None = None,
    cpus_per_node: float | None = None,
) -> list[Node]:
    """The nodes of this host.

    - default: one node `local` with the detected GPUs, else 4 virtual slots;
    - `gpus=N`: one node `local` with N slots (the first N real GPUs when there are enough);
    - `local` is virtual when a slot of it has no physical GPU behind it (its probes skip those
      slots, `cluster_status` says `virtual: true`, campaigns count slot-hours, not GPU-hours);
    - `virtual_nodes=N, gpus_per_node=K`: nodes `local-0` ... `local-{N-1}`, virtual,
      owning GPU indices 0..N*K-1 in blocks of K; with `cpus_per_node=C`, C CPUs each (counted for
      jobs without GPUs, compute/scheduler.py).
    """
    if gpus is not None and gpus < 0:
        raise ComputeError(f"--gpus must be 0 or more, not {gpus}")
    if virtual_nodes is not None:
        if virtual_nodes < 1:
            raise ComputeError(f"--virtual-nodes must be 1 or more, not {virtual_nodes}")
        per = gpus_per_node if gpus_per_node is not None else DEFAULT_VIRTUAL_SLOTS
        if per < 0:
            raise ComputeError(f"--gpus-per-node must be 0 or more, not {per}")
        if gpus is not None and gpus != virtual_nodes * per:
            raise ComputeError(
                f"--gpus {gpus} disagrees with --virtual-nodes {virtual_nodes} x --gpus-per-node {per}: "
                "give only --virtual-nodes and --gpus-per-node"
            )
        return [
            Node(name=f"local-{i}", gpus=list(range(i * per, (i + 1) * per)), virtual=True, cpus=cpus_per_node)
            for i in range(virtual_nodes)
        ]
    for flag, value in (("--gpus-per-node", gpus_per_node), ("--cpus-per-node", cpus_per_node)):
        if value is not None:
            raise ComputeError(f"{flag} needs --virtual-nodes N as well")
    found = detect_gpus() if detected is None else detected
    if gpus is None:
        slots = found or list(range(DEFAULT_VIRTUAL_SLOTS))
    else:
        slots = found[:gpus] if len(found) >= gpus else list(range(gpus))
    return [Node(name="local", gpus=slots, virtual=not set(slots) <= set(found))]
