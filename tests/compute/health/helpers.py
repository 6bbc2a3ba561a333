"""Shared bits of the health tests."""

from __future__ import annotations

from pathlib import Path

from compute.health import NodeTarget

DATA = Path(__file__).resolve().parents[2] / "data"
SMI = DATA / "nvidia_smi"
LOGS = DATA / "failure_logs"


def gpu_node(n: int = 8, virtual: bool = False, name: str = "node-0") -> NodeTarget:
    return NodeTarget(name=name, gpus=tuple(range(n)), virtual=virtual)
