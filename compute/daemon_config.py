"""How a daemon is configured (`compute up` flags)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pathlib import Path

from compute.backends.ray_address import resolve_ray_address
from compute.errors import ComputeError
from compute.health.config import HealthConfig
from compute.storage import resolve_storage
from compute.project_defaults import FAIR_SHARE_HALF_LIFE_S


class DaemonConfig(BaseModel):
    """Settings of one per-host daemon; passed to it as JSON when it is spawned."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpus: Annotated[int | None, Field(ge=0, le=1024)] = None
    """GPU slots of the node `local`. Default: nvidia-smi's GPUs, else 4 virtual slots."""
    virtual_nodes: Annotated[int | None, Field(ge=1, le=10000)] = None
    """Split the host into this many virtual nodes `local-0` ... (tests, fault drills)."""
    gpus_per_node: Annotated[int | None, Field(ge=0, le=1024)] = None
    """GPU slots per virtual node (with virtual_nodes; default 4)."""
    cpus_per_node: Annotated[float | None, Field(gt=0, le=1024)] = None
    """CPUs per virtual node (with virtual_nodes): jobs without GPUs are placed by their `resources.cpus`
    and spread over the nodes with the most free. Default: not counted (they all go to the first node)."""
    grace_s: Annotated[float, Field(ge=0, le=3600)] = 30.0
    """Seconds between SIGTERM and SIGKILL when stopping an attempt (a job's grace_s wins)."""
    min_runtime_s: Annotated[float, Field(ge=0)] = 10.0
    """An attempt younger than this is never preempted (prevents flapping)."""
    aging_s: Annotated[float, Field(gt=0)] = 60.0
    """Seconds of waiting per point of priority aging (anti-starvation)."""
    fair_share_half_life_s: Annotated[float, Field(gt=0)] = FAIR_SHARE_HALF_LIFE_S
    """Half-life of the borrowed usage that fair share between projects weighs (docs/projects.md)."""
    tick_s: Annotated[float, Field(gt=0, le=60)] = 1.0
    """Longest sleep between ticks when nothing wakes the daemon."""
    log_max_bytes: Annotated[int, Field(ge=1 << 16)] = 256 << 20
    """The most disk one attempt's log may use: past it the middle is cut, the head and the newest
    lines kept, with a marker line where it was cut (compute.attempt_logs.cap_log, docs/compute.md)."""
    max_infra_retries: Annotated[int, Field(ge=0, le=100)] = 3
    """Requeues after infra failures per job, before the job fails."""
    health: HealthConfig = Field(default_factory=HealthConfig)
    """Node probes, quarantine and failure rules (`compute up --health-config FILE`)."""
    backend: Literal["local", "ray"] = "local"
    """Where attempts run: `local` subprocesses, or the nodes of a Ray cluster (`--backend ray`)."""
    ray_address: str | None = None
    """The Ray cluster (`--address`, see compute.backends.ray_address); None: a local Ray instance."""
    storage: str | None = None
    """Where the Ray backend's nodes meet (`--storage`, see compute.storage): a path every node mounts
    at the same place, or a URI (file://, s3://, gs://) of a store every node reaches; None: the home,
    as a shared path."""

    @field_validator("ray_address")
    @classmethod
    def _known_address_form(cls, value: str | None) -> str | None:
        try:
            resolve_ray_address(value)
        except ComputeError as err:
            raise ValueError(str(err)) from None
        return value

    @field_validator("storage")
    @classmethod
    def _known_storage_form(cls, value: str | None) -> str | None:
        try:
            resolve_storage(value, Path("/"))
        except ComputeError as err:
            raise ValueError(str(err)) from None
        return value
