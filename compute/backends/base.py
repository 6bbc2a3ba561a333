"""The `Backend` protocol: how the daemon runs attempts on nodes.

A backend knows how to start a command on a node and how to watch and signal it. It
knows nothing of jobs, priorities, retries or grace periods: the daemon keeps that
shared logic above this protocol (it decides what to start, sends SIGTERM, waits the
grace, sends SIGKILL, and turns exits into outcomes), so every backend behaves alike.

Rules every backend keeps:

- An attempt is named by its `key` (unique, e.g. `job-3f9a2c1b7d.2`). `launch` returns a
  small JSON-able handle that the daemon stores; after a daemon restart the daemon calls
  `adopt(key, handle)` (handle None if the daemon died before storing it), and the
  backend must find the attempt again from the key alone if need be.
- An attempt outlives the daemon: killing the daemon process must not stop attempts,
  and the attempt's exit code must be recoverable afterwards (e.g. from an exit file).
- `poll` and `adopt` return None while the attempt runs, else an `AttemptExit`.
  `AttemptExit.exit_code is None` means the attempt is gone and nobody knows how it
  ended (the daemon records it as lost and requeues the job).
- `signal` reaches every process of the attempt (the process group, the actor). For a
  container attempt (`LaunchRequest.container`) the local backend turns SIGTERM into the
  runtime's `stop -t <grace>` and SIGKILL into its `kill`, adopts a container by name after
  a restart (its client may be gone), and removes it on `release`.
- `release(key)` is called once the daemon has recorded the end; only then may the
  backend forget the attempt's exit status.
- Methods are called from the daemon's one thread; they must not block for long.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from compute.health.report import HealthProbe
from compute.container import ContainerRun
from compute.records import Node


class LaunchError(Exception):
    """The attempt could not be started; str says why. `infra`: for a reason of the fleet (a node that
    left, a storage the daemon cannot write), not of the job's request (its cwd gone, a secret missing):
    the attempt is then an infra failure, retried on another node without spending the job's retries."""

    def __init__(self, message: str, *, infra: bool = False) -> None:
        super().__init__(message)
        self.infra = infra


@dataclass(frozen=True)
class LaunchRequest:
    """Everything a backend needs to start one attempt."""

    key: str
    """Unique name of the attempt (`<job id>.<attempt number>`)."""
    argv: list[str]
    """The command, already wrapped for a container or shell when the spec asks."""
    env: dict[str, str]
    """Variables to add to the backend's base environment (CUDA_VISIBLE_DEVICES, AR_*, spec.env)."""
    cwd: str
    """Absolute working directory."""
    node: str
    """The node the scheduler placed it on."""
    gpus: tuple[int, ...]
    """GPU indices on that node."""
    log_path: Path
    """Where stdout and stderr go (one file, appended)."""
    cpus: float = 1.0
    memory_gb: float | None = None
    labels: dict[str, str] = field(default_factory=dict)
    container: ContainerRun | None = None
    """Set when `argv` runs a container: backends that can, stop, adopt and remove it by name
    through its runtime (`compute.container_ops`) instead of signalling only the client."""


@dataclass(frozen=True)
class AttemptExit:
    """How an attempt's processes ended."""

    exit_code: int | None
    """Exit code; negative for death by signal (-9 is SIGKILL); None if unknown (lost)."""


@runtime_checkable
class Backend(Protocol):
    """Runs attempts on nodes. See the module docstring for the rules."""

    name: str

    def nodes(self) -> list[Node]:
        """The nodes this backend offers (name, GPU indices, virtual, address)."""
        ...

    def launch(self, request: LaunchRequest) -> dict[str, Any]:
        """Start the attempt; return a JSON-able handle. Raise LaunchError if it cannot start."""
        ...

    def poll(self, key: str) -> AttemptExit | None:
        """None while the attempt runs, else how it ended."""
        ...

    def signal(self, key: str, signum: int) -> None:
        """Send a signal to all processes of the attempt; no error if already gone."""
        ...

    def adopt(self, key: str, handle: dict[str, Any] | None) -> AttemptExit | None:
        """After a daemon restart: track the attempt again (None: still runs) or say how it ended."""
        ...

    def release(self, key: str) -> None:
        """The daemon recorded the end of this attempt: free what is left of it."""
        ...

    def close(self) -> None:
        """Let go of the backend (attempts keep running)."""
        ...


@runtime_checkable
class WakesDaemon(Protocol):
    """Optional: file descriptors that turn readable when some attempt may have ended.

    The daemon waits on them beside its socket, so exits are seen at once, not at the
    next tick.
    """

    def wake_fds(self) -> list[int]:
        ...


@runtime_checkable
class StagesNext(Protocol):
    """Optional: a node can hold the next attempt for a slot and start it itself the moment the
    attempt holding the slot exits, with no round trip to the daemon ("pre-dispatch").

    The daemon stages at most one attempt behind each running single-node attempt, and keeps the
    staged job pending in its store until the node says it started: then it records the attempt
    with the node's start time. A staged attempt that never started (`recall`, or its node was lost)
    leaves no trace: its job is pending as before, no attempt spent.
    """

    def stage(self, request: LaunchRequest, after: str) -> dict[str, Any]:
        """Hand `request` to its node (that of attempt `after`), to start there when `after` exits;
        return its handle. Raise LaunchError if it cannot be staged."""
        ...

    def began(self, key: str) -> float | None:
        """Once its predecessor's exit was polled: when the staged attempt started (wall clock; from
        then on it is polled like a launched one), or None if it did not and never will."""
        ...

    def recall(self, key: str) -> float | None:
        """Take the staged attempt back: None, it never starts; else it started already, at that time
        (`began` says so once its predecessor's exit is polled)."""
        ...


@runtime_checkable
class ChangesNodes(Protocol):
    """Optional: nodes come and go while the daemon runs (a cluster backend).

    The daemon asks every tick and re-syncs its node table when the answer is not None;
    attempts on a node that left are settled by `poll` (lost), not by the daemon.
    """

    def nodes_changed(self) -> list[Node] | None:
        """The nodes offered now if they changed since the last call, else None (cheap)."""
        ...


@runtime_checkable
class SuspectsNodes(Protocol):
    """Optional: nodes that may be dead before the cluster says so (their agent fell silent). The
    daemon gives them no new work while suspect; they keep their row, state and running attempts
    (which the backend settles as lost if the node turns out dead)."""

    def suspect_nodes(self) -> dict[str, str]:
        """Node name -> why it is suspect, for the nodes suspect now (cheap)."""
        ...


@runtime_checkable
class HostsGangs(Protocol):
    """Optional: the backend can run multi-node jobs (gangs): it names the address and a free
    port on a node where rank 0 of a gang will listen (MASTER_ADDR, MASTER_PORT)."""

    def master_address(self, node: str) -> tuple[str, int]:
        """(an address the other nodes reach `node` at, a TCP port free there now)."""
        ...


@runtime_checkable
class Warms(Protocol):
    """Optional: prepare the next launch while the daemon is idle (e.g. a spare process)."""

    def warm(self) -> None:
        ...


@runtime_checkable
class ProbesOnNodes(Protocol):
    """Optional: the backend's nodes are other hosts, so health probes must run there.

    The daemon gives its `HealthMonitor` the probes `on_nodes` returns; a backend without
    this capability has its probes run on this host (where its nodes are).
    """

    def on_nodes(self, probes: Sequence[HealthProbe]) -> list[HealthProbe]:
        """The same probes in the same order, each run on the node it probes."""
        ...


@runtime_checkable
class NeedsOnNodes(Protocol):
    """Optional: what the backend's attempts need on every node (its storage) is probed there too;
    a node that fails such a probe is quarantined with its reason, like any probe's."""

    def node_probes(self) -> list[HealthProbe]:
        """Probes to run on each node beside the health config's."""
        ...
