"""compute: jobs, the priority scheduler with preemption, the per-host daemon, backends.

Upper layers use `Client` (see the README): it writes
requests into the durable store and wakes the daemon, which runs attempts through a
`Backend` (local subprocesses here; Ray elsewhere).
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from compute.backends.base import (
        AttemptExit,
        Backend,
        ChangesNodes,
        LaunchError,
        LaunchRequest,
        ProbesOnNodes,
        WakesDaemon,
        Warms,
    )
    from compute.backends.local import LocalBackend
    from compute.client import Client
    from compute.container import container_argv
    from compute.control import daemon_info, daemon_pid, start_daemon, stop_daemon
    from compute.daemon import Daemon
    from compute.daemon_config import DaemonConfig
    from compute.endings import AttemptStopReason
    from compute.errors import (
        ComputeError,
        DaemonAlreadyRunning,
        DaemonNotRunning,
        JobNotFound,
    )
    from compute.failures import classify_failure
    from compute.gpus import detect_gpus, plan_nodes
    from compute.nodes import NodeStatus, UncordonFailed, slot_usage
    from compute.paths import ComputePaths, resolve_home
    from compute.records import (
        Attempt,
        AttemptOutcome,
        Event,
        FailureClass,
        HealthStatus,
        Job,
        JobState,
        Node,
        NodeState,
    )
    from compute.scheduler import (
        Decision,
        NodeView,
        PendingJob,
        Placement,
        Preemption,
        RunningAttempt,
        SchedulerConfig,
        schedule,
    )
    from compute.spec import JobSpec, Priority, Resources, parse_priority, priority_name
    from compute.store import Store

_WHERE = {
    "Attempt": "compute.records",
    "AttemptExit": "compute.backends.base",
    "ProbesOnNodes": "compute.backends.base",
    "slot_usage": "compute.nodes",
    "AttemptOutcome": "compute.records",
    "Backend": "compute.backends.base",
    "ChangesNodes": "compute.backends.base",
    "Client": "compute.client",
    "ComputeError": "compute.errors",
    "ComputePaths": "compute.paths",
    "Daemon": "compute.daemon",
    "DaemonAlreadyRunning": "compute.errors",
    "DaemonConfig": "compute.daemon_config",
    "DaemonNotRunning": "compute.errors",
    "Decision": "compute.scheduler",
    "Event": "compute.records",
    "FailureClass": "compute.records",
    "HealthStatus": "compute.records",
    "Job": "compute.records",
    "JobNotFound": "compute.errors",
    "JobSpec": "compute.spec",
    "JobState": "compute.records",
    "LaunchError": "compute.backends.base",
    "LaunchRequest": "compute.backends.base",
    "LocalBackend": "compute.backends.local",
    "Node": "compute.records",
    "NodeState": "compute.records",
    "NodeStatus": "compute.nodes",
    "NodeView": "compute.scheduler",
    "PendingJob": "compute.scheduler",
    "Placement": "compute.scheduler",
    "Preemption": "compute.scheduler",
    "Priority": "compute.spec",
    "Resources": "compute.spec",
    "RunningAttempt": "compute.scheduler",
    "SchedulerConfig": "compute.scheduler",
    "AttemptStopReason": "compute.endings",
    "Store": "compute.store",
    "UncordonFailed": "compute.nodes",
    "WakesDaemon": "compute.backends.base",
    "Warms": "compute.backends.base",
    "classify_failure": "compute.failures",
    "container_argv": "compute.container",
    "daemon_info": "compute.control",
    "daemon_pid": "compute.control",
    "detect_gpus": "compute.gpus",
    "parse_priority": "compute.spec",
    "plan_nodes": "compute.gpus",
    "priority_name": "compute.spec",
    "resolve_home": "compute.paths",
    "schedule": "compute.scheduler",
    "start_daemon": "compute.control",
    "stop_daemon": "compute.control",
}
"""Public name -> its module, imported on first use (PEP 562): `from compute import Client` loads
the client and the store, not the daemon, the backends or the health probes."""


def __getattr__(name: str) -> _typing.Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'compute' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "Attempt",
    "AttemptExit",
    "AttemptOutcome",
    "Backend",
    "ChangesNodes",
    "Client",
    "ComputeError",
    "ComputePaths",
    "Daemon",
    "DaemonAlreadyRunning",
    "DaemonConfig",
    "DaemonNotRunning",
    "Decision",
    "Event",
    "FailureClass",
    "HealthStatus",
    "Job",
    "JobNotFound",
    "JobSpec",
    "JobState",
    "LaunchError",
    "LaunchRequest",
    "LocalBackend",
    "Node",
    "NodeState",
    "NodeStatus",
    "NodeView",
    "PendingJob",
    "Placement",
    "Preemption",
    "ProbesOnNodes",
    "Priority",
    "Resources",
    "RunningAttempt",
    "SchedulerConfig",
    "AttemptStopReason",
    "Store",
    "UncordonFailed",
    "WakesDaemon",
    "Warms",
    "classify_failure",
    "container_argv",
    "daemon_info",
    "daemon_pid",
    "detect_gpus",
    "parse_priority",
    "plan_nodes",
    "priority_name",
    "resolve_home",
    "schedule",
    "slot_usage",
    "start_daemon",
    "stop_daemon",
]
