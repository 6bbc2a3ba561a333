"""The daemon's state, and what every part of it uses: waking waiting clients, signalling an attempt.

`DaemonBase` holds what the daemon keeps between ticks (store, backend, health monitor, the attempts
it tracks, gangs, secret masking, progress). The daemon's parts build on it, each in its own module,
one layer on the one before: stopping attempts (compute/daemon_stops.py), reaping and finishing them
(compute/daemon_ends.py), starting them (compute/daemon_starts.py), staging the next ones on nodes
that start them themselves (compute/daemon_staging.py), the scheduling pass of one tick
(compute/daemon_pass.py), and the loop that serves a home (compute/daemon.py, whose docstring tells
the whole story).
"""

from __future__ import annotations

from compute.backends.base import Backend
from compute.daemon_config import DaemonConfig
from compute.gang_run import GangWatch
from compute.health import Classifier, HealthMonitor
from compute.lifecycle import LiveAttempt
from compute.log_secrets import SecretMasker
from compute.paths import ComputePaths
from compute.progress import ProgressWatch
from compute.records import Node
from compute.scheduler import SchedulerConfig
from compute.store import Store
from compute.usage import ProjectUsage
from compute.waitboard import WaitBoard
from compute.watchers import wake_watchers


class DaemonBase:
    """What the daemon keeps between ticks (see compute/daemon.py)."""

    def __init__(self, paths: ComputePaths, config: DaemonConfig, backend: Backend,
                 health: HealthMonitor | None = None) -> None:
        self.paths = paths
        self.config = config
        self.backend = backend
        self.health = health
        """Probes, quarantine and fault drills; None: every active node takes work, no probes."""
        self.classifier = health.classifier if health is not None else Classifier()
        """Classifies failed attempts (infra, user, resource)."""
        self.store = Store(paths)
        self.waitboard = WaitBoard(self.store)
        self.sched_config = SchedulerConfig(min_runtime_s=config.min_runtime_s, aging_s=config.aging_s,
                                            usage_half_life_s=config.fair_share_half_life_s)
        self.usage = ProjectUsage(self.store, config.fair_share_half_life_s)
        """Projects' decayed borrowed usage (fair share)."""
        self.draining = False
        self.exiting = False
        self.nodes: list[Node] = []
        self._tracked: set[str] = set()
        """Keys of attempts the backend watches for this daemon."""
        self.gangs = GangWatch(backend)
        """The members of multi-node attempts (compute/gang_run.py)."""
        self._host_gpus: frozenset[int] | None = None
        """This host's real GPUs (nvidia-smi), read when the first container job starts."""
        self.masker = SecretMasker(paths.run_dir)
        """Masks running attempts' secret values in their logs (compute/log_secrets.py)."""
        self.progress = ProgressWatch()
        """When each running attempt's log last grew (hang detection, `progress_timeout_s`)."""
        self._told = 0
        """`store.changes()` when the waiting clients were last woken."""

    def _tell_watchers(self) -> None:
        """Wake the clients waiting on jobs (compute/watchers.py) if this daemon wrote to the store
        since it last did."""
        changes = self.store.changes()
        if changes != self._told:
            self._told = changes
            wake_watchers(self.paths)

    def _signal(self, attempt: LiveAttempt, signum: int) -> None:
        if attempt.members:
            self.gangs.signal(attempt, signum)
        else:
            self.backend.signal(attempt.key, signum)


def logs_of(attempt: LiveAttempt) -> list[str]:
    """The logs an attempt writes: each member's for a gang, else its own."""
    return [m.log_path for m in attempt.members] or [attempt.log_path]
