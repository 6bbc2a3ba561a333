"""compute: jobs, the priority scheduler with preemption, the per-host daemon, backends.

Upper layers use `Client` (see compute/client.py and the README): it writes requests into the
durable store and wakes the daemon, which runs attempts through a `Backend` (local subprocesses
here; Ray elsewhere). Names are imported on first use (PEP 562): `from compute import Client`
loads the client and the store, not the daemon, the backends or the health probes.
"""

import typing as _typing

from compute.lazy_exports import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from compute.backends.base import (
        AttemptExit, Backend, ChangesNodes, HostsGangs, LaunchError, LaunchRequest, ProbesOnNodes, SuspectsNodes,
        WakesDaemon, Warms,
    )
    from compute.backends.local import LocalBackend
    from compute.client import Client
    from compute.attempt_command import attempt_argv
    from compute.container import ContainerMounts, ContainerRun, ContainerRuntime, container_argv, container_name, validate_image
    from compute.data import DATA_ENV_PREFIX, check_data_exists, data_env, dataset_digest
    from compute.control import daemon_info, daemon_pid, start_daemon, stop_daemon
    from compute.daemon import Daemon
    from compute.daemon_config import DaemonConfig
    from compute.endings import AttemptStopReason
    from compute.errors import ComputeError, DaemonAlreadyRunning, DaemonNotRunning, JobNotFound, StoreLost
    from compute.failures import classify_failure
    from compute.gpus import detect_gpus, plan_nodes
    from compute.nodes import NodeStatus, UncordonFailed, slot_usage
    from compute.paths import ComputePaths, resolve_home
    from compute.projects import Project, ProjectStatus
    from compute.quota_view import ProjectView, VictimOrder
    from compute.records import Attempt, AttemptMember, Event, Job, Node
    from compute.states import AttemptOutcome, FailureClass, HealthStatus, JobState, NodeState
    from compute.scheduler import Decision, NodeView, PendingJob, Placement, Preemption, RunningAttempt, SchedulerConfig, schedule
    from compute.priority import Priority, parse_priority, priority_name
    from compute.spec import DEFAULT_PROJECT, JobSpec, Launcher, Resources
    from compute.store import Store
    from compute.jobenv import JOB_ENV_VAR, allowed_env, redact_secrets, secret_values

_WHERE = {
    "AttemptExit": "compute.backends.base",
    "AttemptMember": "compute.records",
    "Backend": "compute.backends.base",
    "ChangesNodes": "compute.backends.base",
    "SuspectsNodes": "compute.backends.base",
    "HostsGangs": "compute.backends.base",
    "LaunchError": "compute.backends.base",
    "LaunchRequest": "compute.backends.base",
    "ProbesOnNodes": "compute.backends.base",
    "WakesDaemon": "compute.backends.base",
    "Warms": "compute.backends.base",
    "LocalBackend": "compute.backends.local",
    "Client": "compute.client",
    "attempt_argv": "compute.attempt_command",
    "ContainerMounts": "compute.container",
    "ContainerRun": "compute.container",
    "ContainerRuntime": "compute.container",
    "container_argv": "compute.container",
    "container_name": "compute.container",
    "validate_image": "compute.container",
    "DATA_ENV_PREFIX": "compute.data",
    "check_data_exists": "compute.data",
    "data_env": "compute.data",
    "dataset_digest": "compute.data",
    "daemon_info": "compute.control",
    "daemon_pid": "compute.control",
    "start_daemon": "compute.control",
    "stop_daemon": "compute.control",
    "Daemon": "compute.daemon",
    "DaemonConfig": "compute.daemon_config",
    "AttemptStopReason": "compute.endings",
    "ComputeError": "compute.errors",
    "DaemonAlreadyRunning": "compute.errors",
    "DaemonNotRunning": "compute.errors",
    "JobNotFound": "compute.errors",
    "StoreLost": "compute.errors",
    "classify_failure": "compute.failures",
    "detect_gpus": "compute.gpus",
    "plan_nodes": "compute.gpus",
    "NodeStatus": "compute.nodes",
    "UncordonFailed": "compute.nodes",
    "slot_usage": "compute.nodes",
    "ComputePaths": "compute.paths",
    "resolve_home": "compute.paths",
    "Project": "compute.projects",
    "ProjectStatus": "compute.projects",
    "ProjectView": "compute.quota_view",
    "VictimOrder": "compute.quota_view",
    "DEFAULT_PROJECT": "compute.spec",
    "Attempt": "compute.records",
    "AttemptOutcome": "compute.states",
    "Event": "compute.records",
    "FailureClass": "compute.states",
    "HealthStatus": "compute.states",
    "Job": "compute.records",
    "JobState": "compute.states",
    "Node": "compute.records",
    "NodeState": "compute.states",
    "Decision": "compute.scheduler",
    "NodeView": "compute.scheduler",
    "PendingJob": "compute.scheduler",
    "Placement": "compute.scheduler",
    "Preemption": "compute.scheduler",
    "RunningAttempt": "compute.scheduler",
    "SchedulerConfig": "compute.scheduler",
    "schedule": "compute.scheduler",
    "JobSpec": "compute.spec",
    "Launcher": "compute.spec",
    "Priority": "compute.priority",
    "Resources": "compute.spec",
    "parse_priority": "compute.priority",
    "priority_name": "compute.priority",
    "Store": "compute.store",
    "JOB_ENV_VAR": "compute.jobenv",
    "allowed_env": "compute.jobenv",
    "redact_secrets": "compute.jobenv",
    "secret_values": "compute.jobenv",
}
"""Public name -> the module that defines it."""

__getattr__ = _lazy_exports(__name__, _WHERE)


__all__ = [
    "Attempt",
    "AttemptExit",
    "AttemptMember",
    "AttemptOutcome",
    "AttemptStopReason",
    "Backend",
    "ChangesNodes",
    "SuspectsNodes",
    "Client",
    "ComputeError",
    "ComputePaths",
    "ContainerMounts",
    "ContainerRun",
    "ContainerRuntime",
    "DATA_ENV_PREFIX",
    "DEFAULT_PROJECT",
    "Daemon",
    "DaemonAlreadyRunning",
    "DaemonConfig",
    "DaemonNotRunning",
    "Decision",
    "Event",
    "FailureClass",
    "HealthStatus",
    "JOB_ENV_VAR",
    "Job",
    "JobNotFound",
    "JobSpec",
    "JobState",
    "HostsGangs",
    "LaunchError",
    "LaunchRequest",
    "Launcher",
    "LocalBackend",
    "Node",
    "NodeState",
    "NodeStatus",
    "NodeView",
    "PendingJob",
    "Placement",
    "Preemption",
    "Priority",
    "ProbesOnNodes",
    "Project",
    "ProjectStatus",
    "ProjectView",
    "Resources",
    "RunningAttempt",
    "SchedulerConfig",
    "Store",
    "StoreLost",
    "UncordonFailed",
    "VictimOrder",
    "WakesDaemon",
    "Warms",
    "allowed_env",
    "attempt_argv",
    "check_data_exists",
    "classify_failure",
    "container_argv",
    "container_name",
    "daemon_info",
    "daemon_pid",
    "data_env",
    "dataset_digest",
    "detect_gpus",
    "parse_priority",
    "plan_nodes",
    "priority_name",
    "redact_secrets",
    "resolve_home",
    "schedule",
    "secret_values",
    "slot_usage",
    "start_daemon",
    "stop_daemon",
    "validate_image",
]
