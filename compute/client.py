"""`compute.Client`: the Python API every upper layer (and the CLI) uses.

A client writes requests into the store and wakes the daemon with a datagram (see
`compute.daemon`); it reads state straight from the store. A waiting client sleeps on a
`Watcher` socket that the daemon (and other clients) wake when they change the store
(compute/watchers.py), then checks the store's `data_version`, which changes only when some
other connection commits; without a wake-up it still looks every `_WATCHED_LOOK_S`.
"""

from __future__ import annotations

import builtins
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from compute.control import daemon_info, daemon_pid, ensure_daemon, notify
from compute.errors import ComputeError, DaemonNotRunning, JobNotFound
from compute.paths import ComputePaths
from compute.records import Event, Job, JobState, Node
from compute.priority import parse_priority
from compute.spec import JobSpec
from compute.store import Store
from compute.submitter import Submitter, resolve_spec
from compute.watchers import Watcher, wake_watchers

if TYPE_CHECKING:  # the node methods import compute.nodes (and the health package) when called
    from compute.health import Fault, FaultKind
    from compute.nodes import NodeStatus
    from compute.projects import Project, ProjectStatus

_DAEMON_CHECK_S = 1.0
"""How often a waiting client checks that a daemon still serves its home."""

_POLL_S = 0.01
_MAX_POLL_S = 0.02
"""Without a watcher socket, a waiter looks every 10 ms, then up to every 20 ms (its `poll_s`)."""
_WATCHED_LOOK_S = 0.25
"""With one, it is woken at each change and looks on its own this often (a wake-up that never
came: a daemon of an older version, a change made outside `Client`)."""


class Client:
    """Submit, inspect, cancel and wait for jobs of one compute home.

    home: a directory (default $AUTORESEARCH_HOME, else ~/.autoresearch).
    autostart: start the per-host daemon (default config) when a request needs it.
    notice: told when a daemon it starts is alive but not answering after a few seconds
    (`compute.control.start_daemon`): a runner shows it instead of waiting in silence.
    """

    def __init__(self, home: str | os.PathLike[str] | None = None, autostart: bool = True,
                 notice: Callable[[str], None] | None = None) -> None:
        self.paths = ComputePaths.of(home)
        self.autostart = autostart
        self.notice = notice
        self._store = Store(self.paths)
        self._daemon_checked = 0.0
        self._watchers: dict[int, Watcher | None] = {}
        """Each waiting thread's wake-up socket (None: none could be made here; it polls)."""

    @property
    def home(self) -> Path:
        return self.paths.home

    def close(self) -> None:
        for watcher in self._watchers.values():
            if watcher is not None:
                watcher.close()
        self._watchers.clear()
        self._store.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _need_daemon(self) -> None:
        if self.autostart:
            ensure_daemon(self.paths, self.notice)
        elif daemon_pid(self.paths) is None:
            raise DaemonNotRunning(
                f"no compute daemon serves {self.home}, so these jobs would wait forever: start one with "
                "`autoresearch compute up`, or use Client(autostart=True)"
            )

    def _daemon_still_serves(self) -> None:
        """While waiting (at most once per `_DAEMON_CHECK_S`): a daemon that died is restarted
        (autostart; the new one adopts the running attempts), else DaemonNotRunning says so."""
        now = time.monotonic()
        if now - self._daemon_checked < _DAEMON_CHECK_S:
            return
        self._daemon_checked = now
        if daemon_pid(self.paths) is not None:
            return
        if not self.autostart:
            raise DaemonNotRunning(
                f"the compute daemon serving {self.home} stopped while jobs were waiting on it; start one with "
                "`autoresearch compute up` (it adopts the jobs still running), then wait again"
            )
        ensure_daemon(self.paths, self.notice)

    def _wake(self) -> None:
        notify(self.paths)
        if self.autostart:
            ensure_daemon(self.paths, self.notice)

    # -- requests -----------------------------------------------------------------

    def submit(self, spec: JobSpec) -> Job:
        """Queue a job; the same idempotency_key returns the job submitted first.
        The spec is `resolve`d first: it runs with the submitter's environment."""
        spec = self.resolve(spec)
        job_id = self._store.insert_job(spec)
        self._wake()
        return self._store.get_job(job_id)

    def resolve(self, spec: JobSpec) -> JobSpec:
        """The spec as it would be queued (what `jobs submit --dry-run` prints): cwd defaults to
        this process's, PATH/VIRTUAL_ENV are the submitter's, a bare `python` is the submitter's
        interpreter (compute/submitter.py). Raises ComputeError for a spec the fleet cannot run."""
        return resolve_spec(spec, Submitter.here(), self._store.nodes(), self.home)

    def cancel(self, job_id: str, reason: str = "") -> Job:
        """Pending -> cancelled at once; running -> SIGTERM, grace, SIGKILL, then cancelled."""
        job = self._store.request_cancel(job_id, reason)
        if job.state == JobState.running:
            self._wake()
        else:  # ended here and now: only its waiters need to know
            wake_watchers(self.paths)
        return job

    def set_priority(self, job_id: str, priority: int | str) -> Job:
        """Change a pending or running job's priority (0-100 or a name like `high`)."""
        job = self._store.set_priority(job_id, priority)
        self._wake()
        return job

    # -- reads --------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        """The job with its attempts; raises JobNotFound."""
        return self._store.get_job(job_id)

    def list(
        self,
        states: Iterable[JobState | str] | None = None,
        labels: dict[str, str] | None = None,
        min_priority: int | None = None,
        max_priority: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[Job]:
        """Jobs, newest first, filtered by state, labels (all must match) and priority."""
        try:
            return self._store.list_jobs(states, labels, min_priority, max_priority, limit, offset)
        except ValueError as err:
            allowed = ", ".join(s.value for s in JobState)
            raise ComputeError(f"list(states=...): {err}; allowed states: {allowed}") from None

    def queue(self, limit: int = 100, offset: int = 0) -> builtins.list[Job]:
        """Pending jobs in scheduling order (the daemon's last pass), each with `waiting_reason`,
        `queue_position` and `estimated_start`."""
        return self._store.queue(limit, offset)

    def pending_reasons(self, job_ids: Sequence[str]) -> dict[str, str]:
        """Those of `job_ids` still pending -> why each waits (its `waiting_reason`, or that no
        scheduling pass placed it yet): one read, for a campaign's view of its trials."""
        return self._store.pending_reasons(list(job_ids))

    def count_by_state(self) -> dict[str, int]:
        """How many jobs are in each state (state name -> count; states with none are absent)."""
        return self._store.count_by_state()

    def data_version(self) -> int:
        """Changes whenever another connection commits to the store: a cheap 'anything new?' probe
        (a client does not see its own writes here)."""
        return self._store.data_version()

    def log_path(self, job_id: str, attempt: int | None = None, rank: int = 0) -> Path:
        """The log file of an attempt (default: the latest) and gang member (default: rank 0).
        Raises if there is none yet."""
        job = self.get(job_id)
        if not job.attempts:
            raise ComputeError(f"job {job_id} has not started yet ({job.state.value}: {job.state_reason}): no log yet")
        nodes = job.spec.resources.nodes
        if not 0 <= rank < nodes:
            raise ComputeError(f"job {job_id} spans {nodes} node(s): rank must be 0-{nodes - 1}, not {rank}")
        for a in job.attempts if attempt is not None else job.attempts[-1:]:
            if a.number == attempt or attempt is None:
                return Path(a.members[rank].log_path if a.members else a.log_path)
        raise ComputeError(f"job {job_id} has attempts 1-{len(job.attempts)}; there is no attempt {attempt}")

    def nodes(self) -> builtins.list[Node]:
        return self._store.nodes()

    # -- nodes --------------------------------------------------------------------

    def node_status(self) -> builtins.list[NodeStatus]:
        """Every node with state, health, last reason and used/free GPU slots."""
        from compute.nodes import node_status

        return node_status(self._store)

    def cordon(self, node: str, reason: str = "") -> Node:
        """Take a node out of service: no new work; its running attempts finish."""
        from compute.nodes import cordon_node

        cordoned = cordon_node(self._store, node, reason)
        notify(self.paths)
        return cordoned

    def uncordon(self, node: str, timeout: float = 300.0) -> Node:
        """Return a cordoned node; blocks until it passed a probe (ComputeError if it failed one)."""
        from compute.nodes import get_node, request_uncordon, wait_uncordoned

        if daemon_pid(self.paths) is None:
            raise DaemonNotRunning(f"no compute daemon serves {self.home}: a node returns only after the daemon "
                                   "probes it; start one with `autoresearch compute up`, then uncordon")
        since = request_uncordon(self._store, node)
        if since is None:
            return get_node(self._store, node)  # active already
        notify(self.paths)
        return wait_uncordoned(self._store, node, since, timeout)

    def inject_fault(self, node: str, kind: FaultKind | str, probes: int = 1) -> Fault:
        """Fault drill on a virtual node: its running attempts and its next `probes` probes fail
        that way (FaultRefused on a real node)."""
        from compute.nodes import inject_fault

        fault = inject_fault(self.paths, self._store, node, kind, probes)
        notify(self.paths)
        return fault

    def events(self, job_id: str | None = None, node: str | None = None, since_id: int = 0,
               limit: int = 1000, kind: str | None = None, newest: bool = False) -> builtins.list[Event]:
        """The event log, oldest first: every state change with its reason (`newest`: the last `limit`)."""
        return self._store.events(job_id, node, since_id, limit, kind, newest)

    # -- projects -----------------------------------------------------------------

    def set_project(self, name: str, quota_gpus: int | None = None, weight: float | None = None,
                    max_priority: int | str | None = None, borrow: bool | None = None, lend: bool | None = None,
                    quota_cpus: float | None = None) -> Project:
        """Create or change a project (a guaranteed GPU quota, a CPU ceiling, a fair-share weight, a priority
        limit, whether it borrows idle GPUs and lends its unused quota); options left None keep their value."""
        from compute.projects import set_project

        if max_priority is not None:
            try:
                max_priority = parse_priority(max_priority)
            except ValueError as err:
                raise ComputeError(f"project {name!r}: max_priority: {err}") from None
        project = set_project(self._store, name, quota_gpus, weight, max_priority, borrow, lend, quota_cpus)
        notify(self.paths)
        return project

    def remove_project(self, name: str) -> None:
        """Delete a project with no pending or running job."""
        from compute.projects import remove_project

        remove_project(self._store, name)
        notify(self.paths)

    def projects(self) -> builtins.list[ProjectStatus]:
        """Each project: quota, GPUs in use, borrowed and lent, pending jobs, fair-share usage."""
        from compute.project_report import half_life
        from compute.usage import project_report

        return project_report(self._store, half_life(daemon_info(self.paths)), time.time())

    # -- waiting ------------------------------------------------------------------

    def wait(self, job_ids: str | Sequence[str], timeout: float | None = None) -> builtins.list[Job]:
        """Block until every job is final (or `timeout` s passed); return the jobs as they are."""
        ids = [job_ids] if isinstance(job_ids, str) else list(job_ids)
        deadline = None if timeout is None else time.monotonic() + timeout
        self._watcher()  # registered before the first look: no change can slip in between
        version = self._store.data_version()  # read before the states, so no commit slips between
        # Each change wakes this: look only at the states of the jobs not yet final (one small read),
        # and read whole jobs once at the end (re-reading N jobs per change costs O(N) per attempt).
        states = self._store.job_states(ids)
        unknown = next((i for i in ids if i not in states), None)
        if unknown is not None:
            raise JobNotFound(unknown, str(self._store.paths.home))
        waiting = [i for i in ids if not states[i].final]
        if waiting:
            self._need_daemon()
        while waiting:
            if not self._sleep_until_change(version, deadline):
                break
            version = self._store.data_version()
            states = self._store.job_states(waiting)
            waiting = [i for i in waiting if i in states and not states[i].final]  # gone: get_jobs says
        return self._store.get_jobs(ids)

    def wait_for_change(self, job_ids: Sequence[str], since: dict[str, str] | None = None,
                        timeout: float | None = None, *, poll_s: float = _MAX_POLL_S,
                        ignore_starts: bool = False) -> builtins.list[Job]:
        """Return as soon as any job's state differs from `since` (id -> state name).

        `since` None means 'the states right now'. Returns the changed jobs; empty on timeout.
        `poll_s`: where no watcher socket can be made, the longest pause between two looks at the
        store (a change is seen that much later at most); with one, a change wakes the wait at once.
        `ignore_starts`: a job `since` says is pending that is now running is no change (a caller
        that only acts when jobs end); it is returned once it changes again.
        """
        ids = list(job_ids)
        self._watcher()  # registered before the first look: no change can slip in between
        if since is None:
            since = {job.id: job.state.value for job in self._store.get_jobs(ids)}
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            version = self._store.data_version()
            states = self._store.job_states(ids)
            changed = [i for i in ids if i in states and states[i].value != since.get(i)
                       and not (ignore_starts and states[i] is JobState.running and since.get(i) == JobState.pending.value)]
            if changed:
                return self._store.get_jobs(changed)
            if not self._sleep_until_change(version, deadline, poll_s):
                return []

    def _sleep_until_change(self, version: int, deadline: float | None, most: float = _MAX_POLL_S) -> bool:
        """Sleep until the store's data_version differs from `version`; False on deadline.
        With a watcher: until woken, looking at least every `_WATCHED_LOOK_S` (and each
        `_DAEMON_CHECK_S` that the daemon still serves). Without: looks again after `_POLL_S`,
        then 1.5 times longer each time, up to `most` seconds."""
        watcher = self._watcher()
        pause = _WATCHED_LOOK_S if watcher is not None else min(_POLL_S, most)
        while self._store.data_version() == version:
            self._daemon_still_serves()
            if deadline is not None and time.monotonic() >= deadline:
                return False
            left = pause if deadline is None else max(0.0, deadline - time.monotonic())
            if watcher is not None:
                watcher.wait(min(pause, left, _DAEMON_CHECK_S))
                continue
            time.sleep(min(pause, left))
            pause = min(pause * 1.5, most)
        return True

    def _watcher(self) -> Watcher | None:
        """This thread's wake-up socket, made on its first wait."""
        thread = threading.get_ident()
        if thread not in self._watchers:
            try:
                self._watchers[thread] = Watcher(self.paths)
            except OSError:  # no Unix sockets here, or a read-only home: look at the store instead
                self._watchers[thread] = None
        return self._watchers[thread]
