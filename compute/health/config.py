"""`HealthConfig`: probe schedule, quarantine policy and probe settings, in one frozen record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from compute.health.classifier import load_rules
from compute.health.gang_preflight import GangPreflightMode
from compute.health.gpu import GpuThresholds

Seconds = Annotated[float, Field(gt=0)]


class HealthConfig(BaseModel):
    """How nodes are probed, quarantined and released."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    probe_interval_s: Seconds = 300.0
    """Runtime: every node is probed this often."""
    preflight_ttl_s: Seconds = 900.0
    """A node takes new work only if it passed a probe at most this long ago; older, it is
    probed again first (and before its very first job)."""
    infra_failures_to_quarantine: Annotated[int, Field(ge=1)] = 3
    """K: this many infra failures on a node within `infra_failure_window_s` quarantine it."""
    infra_failure_window_s: Seconds = 3600.0
    """The window in which infra failures are counted."""
    release_after_passes: Annotated[int, Field(ge=1)] = 3
    """M: a quarantined node returns after this many passing probes in a row (hysteresis)."""
    release_pass_spacing_s: Annotated[float, Field(ge=0)] = 60.0
    """Passing probes count toward release only when at least this far apart."""
    recheck_backoff_s: Seconds = 30.0
    """First re-probe of a quarantined node this long after quarantine; doubles after each
    failing re-probe, up to `recheck_backoff_max_s`."""
    recheck_backoff_max_s: Seconds = 1800.0
    """The longest wait between re-probes of a failing quarantined node."""
    probe_timeout_s: Seconds = 60.0
    """Timeout of the gpu probe (nvidia-smi) and of the cuda matmul."""
    probe_workers: Annotated[int, Field(ge=1, le=64)] = 4
    """Threads probing nodes off the daemon's main loop."""
    gpu: GpuThresholds = Field(default_factory=GpuThresholds)
    """Limits of the gpu probe."""
    cuda: bool = True
    """Run the cuda matmul probe (skipped by itself where torch with CUDA is absent)."""
    nccl: bool = True
    """Require a passing NCCL all-reduce on a node before a multi-GPU job starts there."""
    nccl_min_busbw_gbps: Annotated[float, Field(ge=0)] = 10.0
    """All-reduce bus bandwidth floor (GB/s) of the nccl probe."""
    nccl_timeout_s: Seconds = 180.0
    """Timeout of the nccl probe."""
    gang_preflight: GangPreflightMode = GangPreflightMode.auto
    """A cross-node all-reduce every member of a multi-node attempt runs before its argv: `auto`
    where GPUs are real (nccl; skipped on virtual nodes), `always` (gloo on virtual nodes), `off`."""
    gang_preflight_timeout_s: Seconds = 60.0
    """How long the gang preflight's rendezvous and all-reduce may take before it fails."""
    command: list[str] | None = None
    """A user health check (argv), healthy on exit 0, like Slurm's HealthCheckProgram."""
    command_timeout_s: Seconds = 60.0
    """Timeout of the user health check."""
    failure_rules: str | None = None
    """A YAML/JSON file of extra failure-classification rules, tried before the built-in ones."""

    @model_validator(mode="after")
    def _consistent(self) -> HealthConfig:
        if self.recheck_backoff_max_s < self.recheck_backoff_s:
            raise ValueError(
                f"recheck_backoff_max_s ({self.recheck_backoff_max_s}) is below recheck_backoff_s "
                f"({self.recheck_backoff_s}): make the maximum at least the first backoff"
            )
        if self.command is not None and (not self.command or not self.command[0]):
            raise ValueError("command is empty: give the health check as a list, e.g. ['/etc/gpu-check.sh']")
        return self


def load_health_config(path: str | Path) -> HealthConfig:
    """A `HealthConfig` from a YAML or JSON file (`compute up --health-config FILE`).

    A relative `failure_rules` path is taken relative to the file, and the rules are loaded
    once here, so a bad rule is reported at `compute up` (file, rule, field), not by the daemon.
    """
    import yaml  # here, not at import: the dashboard's Fleet page imports this module and reads no YAML

    path = Path(path)
    try:
        text = path.read_text()
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the health config ({exc.strerror})") from None
    except (ValueError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of health settings (probe_interval_s: 60 ...), "
                         f"got {type(data).__name__}")
    rules = data.get("failure_rules")
    if isinstance(rules, str) and not Path(rules).is_absolute():
        data["failure_rules"] = str((path.parent / rules).resolve())
    try:
        config = HealthConfig.model_validate(data)
    except ValidationError as exc:
        errors = "; ".join(f"field {'.'.join(map(str, e['loc'])) or '(whole)'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{path}: invalid health config: {errors}") from None
    if config.failure_rules is not None:
        load_rules(config.failure_rules)
    return config
