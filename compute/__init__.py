"""compute: jobs, the priority scheduler with preemption, the per-host daemon, backends.

Upper layers use `Client` (see /work/notes/CLIENT_API.md and the README): it writes
requests into the durable store and wakes the daemon, which runs attempts through a
`Backend` (local subprocesses here; Ray elsewhere).
"""

from compute.backends.base import (
    AttemptExit, Backend, ChangesNodes, LaunchError, LaunchRequest, WakesDaemon, Warms,
)
from compute.backends.local import LocalBackend
from compute.client import Client
from compute.container import container_argv
from compute.control import daemon_info, daemon_pid, start_daemon, stop_daemon
from compute.daemon import Daemon
from compute.daemon_config import DaemonConfig
from compute.endings import StopReason
from compute.errors import ComputeError, DaemonAlreadyRunning, DaemonNotRunning, JobNotFound
from compute.failures import classify_failure
from compute.gpus import detect_gpus, plan_nodes
from compute.jobenv import JOB_ENV_VAR, allowed_env, redact_secrets, secret_values
from compute.nodes import NodeStatus, UncordonFailed
from compute.paths import ComputePaths, resolve_home
from compute.records import (
    Attempt, AttemptOutcome, Event, FailureClass, HealthStatus, Job, JobState, Node, NodeState,
)
from compute.scheduler import (
    Decision, NodeView, PendingJob, Placement, Preemption, RunningAttempt, SchedulerConfig, schedule,
)
from compute.spec import JobSpec, Priority, Resources, parse_priority, priority_name
from compute.store import Store

__all__ = [
    "JOB_ENV_VAR", "allowed_env", "redact_secrets", "secret_values",
    "Attempt", "AttemptExit", "AttemptOutcome", "Backend", "ChangesNodes", "Client", "ComputeError", "ComputePaths",
    "DaemonAlreadyRunning", "DaemonConfig", "DaemonNotRunning", "Daemon", "Decision", "Event",
    "FailureClass", "HealthStatus", "Job", "JobNotFound", "JobSpec", "JobState", "LaunchError",
    "LaunchRequest", "LocalBackend", "Node", "NodeState", "NodeStatus", "NodeView", "PendingJob", "Placement",
    "Preemption", "Priority", "Resources", "RunningAttempt", "SchedulerConfig", "StopReason", "Store", "UncordonFailed",
    "WakesDaemon", "Warms", "classify_failure", "container_argv", "daemon_info", "daemon_pid", "detect_gpus",
    "parse_priority", "plan_nodes", "priority_name", "resolve_home", "schedule", "start_daemon",
    "stop_daemon",
]
