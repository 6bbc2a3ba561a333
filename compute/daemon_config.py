"""How a daemon is configured (`compute up` flags)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from compute.health.config import HealthConfig


class DaemonConfig(BaseModel):
    """Settings of one per-host daemon; passed to it as JSON when it is spawned."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpus: Annotated[int | None, Field(ge=0, le=1024)] = None
    """GPU slots of the node `local`. Default: nvidia-smi's GPUs, else 4 virtual slots."""
    virtual_nodes: Annotated[int | None, Field(ge=1, le=10000)] = None
    """Split the host into this many virtual nodes `local-0` ... (tests, fault drills)."""
    gpus_per_node: Annotated[int | None, Field(ge=0, le=1024)] = None
    """GPU slots per virtual node (with virtual_nodes; default 4)."""
    grace_s: Annotated[float, Field(ge=0, le=3600)] = 30.0
    """Seconds between SIGTERM and SIGKILL when stopping an attempt (a job's grace_s wins)."""
    min_runtime_s: Annotated[float, Field(ge=0)] = 10.0
    """An attempt younger than this is never preempted (prevents flapping)."""
    aging_s: Annotated[float, Field(gt=0)] = 60.0
    """Seconds of waiting per point of priority aging (anti-starvation)."""
    tick_s: Annotated[float, Field(gt=0, le=60)] = 1.0
    """Longest sleep between ticks when nothing wakes the daemon."""
    max_infra_retries: Annotated[int, Field(ge=0, le=100)] = 3
    """Requeues after infra failures per job, before the job fails."""
    health: HealthConfig = Field(default_factory=HealthConfig)
    """Node probes, quarantine and failure rules (`compute up --health-config FILE`)."""
