"""Node health: probes, failure classification, quarantine policy and fault drills.

The daemon talks to `HealthMonitor`; the pieces below it are usable on their own.
"""

from compute.health.classifier import Classification, Classifier, Rule, load_rules, signal_of
from compute.health.command import CommandProbe
from compute.health.config import HealthConfig, load_health_config
from compute.health.faults import MONITOR_KILL_MARKER, Fault, FaultInjector, FaultKind, FaultRefused
from compute.health.gang_preflight import GangPreflightMode
from compute.health.gpu import GpuProbe, GpuReading, GpuThresholds, NvidiaSmiOutput, evaluate, parse_nvidia_smi
from compute.health.monitor import UNCORDON_REQUESTED, HealthMonitor, build_probes
from compute.health.quarantine import (
    NodeAction,
    NodeDecision,
    NodeHealth,
    ProbeDue,
    ProbeReason,
    QuarantinePolicy,
    probes_due,
)
from compute.health.report import Check, HealthProbe, HealthReport, NodeTarget, combine, worst
from compute.health.rules import DEFAULT_RULES, HANG_MARKER
from compute.health.torch_probes import CudaProbe, NcclProbe, cuda_checks, nccl_applies, nccl_checks

__all__ = [
    "DEFAULT_RULES",
    "HANG_MARKER",
    "MONITOR_KILL_MARKER",
    "UNCORDON_REQUESTED",
    "Check",
    "Classification",
    "Classifier",
    "CommandProbe",
    "CudaProbe",
    "Fault",
    "FaultInjector",
    "FaultKind",
    "FaultRefused",
    "GangPreflightMode",
    "GpuProbe",
    "GpuReading",
    "GpuThresholds",
    "HealthConfig",
    "HealthMonitor",
    "HealthProbe",
    "HealthReport",
    "NcclProbe",
    "NodeAction",
    "NodeDecision",
    "NodeHealth",
    "NodeTarget",
    "NvidiaSmiOutput",
    "ProbeDue",
    "ProbeReason",
    "QuarantinePolicy",
    "Rule",
    "build_probes",
    "combine",
    "cuda_checks",
    "evaluate",
    "load_health_config",
    "load_rules",
    "nccl_applies",
    "nccl_checks",
    "parse_nvidia_smi",
    "probes_due",
    "signal_of",
    "worst",
]
