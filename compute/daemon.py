"""The per-host scheduler daemon: turns the store's pending jobs into running attempts.

How clients reach it: the SQLite store is the truth. A client writes its request
(submit, cancel, set_priority) into the store in one transaction, then sends a one-byte
datagram to the daemon's Unix socket (`$AUTORESEARCH_HOME/compute/daemon.sock`). The
datagram carries no data; it only wakes the daemon, which then reads the store. So a
lost datagram costs at most one tick (`tick_s`), never a request, and a client never
waits for the daemon to answer: launch latency stays close to a bare Popen. (The one
exception: a client without pydantic, the CLI's fast path, asks the daemon to validate and
insert its job and waits for the reply: compute/submissions.py.)

The loop waits on the socket, on pidfds of its attempts (an exit wakes it at once), on
signals, and on the next deadline (a grace period running out, a time limit, a backoff
ending). Each tick: answer submission requests (compute/submissions.py), reap ended
attempts, cap logs past `log_max_bytes` (docs/logs.md), carry out stop requests (cancel, time limit,
SIGKILL after grace, a hang: a log silent for its job's
`progress_timeout_s`, seen by one stat per attempt), check node health, then call the pure `schedule` function and start/preempt what it says.

One daemon per home, enforced by an fcntl lock on `daemon.lock`. Attempts run in their
own sessions and outlive the daemon: SIGTERM (`compute down`) stops only the daemon,
and the next daemon adopts the attempts that still run and settles those that ended
meanwhile (exit status from their exit files; none -> lost, requeued). SIGUSR1
(`compute down --stop-jobs`) first stops every attempt (SIGTERM, grace, SIGKILL) and
requeues its job, then exits.

Health (with a `HealthMonitor`): probes run in the monitor's threads and wake the loop
when they finish. A node takes work only while active with a fresh passing probe (so it
is probed before its first job and again past the TTL); a multi-GPU job also needs a
fresh NCCL check there. Every probe result is an event; a quarantined node's running
attempts are stopped and requeued elsewhere without spending retries; failed attempts
are classified by the monitor's rules, and infra failures count against their node.
Fault drills armed on a virtual node kill its running attempts the fault's way. Before a
multi-node attempt's argv, where GPUs are real, its members run the gang preflight, a cross-node
all-reduce (compute/gang_start.py, compute/health/gang_preflight.py); a failed one is an infra
failure blamed on the member at fault.
"""

from __future__ import annotations

import logging
import os
import random
import select
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from compute.backends.base import (
    AttemptExit, Backend, ChangesNodes, HostsGangs, LaunchError, LaunchRequest, WakesDaemon, Warms,
)
from compute.attempt_logs import append_log, cap_log, excerpt, log_tail
from compute.attempt_command import attempt_argv, attempt_env, container_run
from compute.clock import Now, boot_id
from compute.daemon_config import DaemonConfig
from compute.errors import StoreLost, StoreUnavailable
from compute.jobenv import secret_values
from compute.log_secrets import SecretMasker
from compute.spec import JobSpec
from compute.endings import JobBudget, AttemptStopReason, decide_ending, hang_reason
from compute.gang_run import GangWatch
from compute.gang_start import gang_requests, preflight_port, settle_preflight
from compute.gpus import detect_gpus
from compute.health import HANG_MARKER, MONITOR_KILL_MARKER, Classification, Classifier, HealthMonitor, NodeTarget
from compute.health.gang_preflight import plan as plan_preflight
from compute.heartbeat import record_tick
from compute.lifecycle import (
    LiveAttempt, Started, daemon_event, end_attempt, forget_other_boots, job_budget_row, job_event, live_attempts,
    mark_killed, pending_jobs, record_handle, request_stop, start_attempt, sync_nodes,
)
from compute.nodes import record_health
from compute.paths import ComputePaths
from compute.progress import ProgressWatch
from compute.usage import ProjectUsage, checkpoint_time
from compute.records import AttemptOutcome, FailureClass, Node, NodeState
from compute.scheduler import Decision, NodeView, PendingJob, Placement, RunningAttempt, SchedulerConfig, schedule
from compute.store import Store
from compute.submission_answers import answer as answer_submissions
from compute.waitboard import WaitBoard
from compute.watchers import wake_watchers

log = logging.getLogger("compute.daemon")
_QUIET_S = 0.05
"""The daemon prepares the next launch (`Warms.warm`: the local backend's spare `sh`) once nothing
happened for this long, not right after a launch: a spare started beside the job that had just
begun slowed it (100-trial campaign, 4 jobs of 0.5 s on 2 cores: jobs ran 2-3% longer)."""
_IDLE_S = 5.0
"""Once nothing woke the daemon for this long, it truncates the store's write-ahead log (a burst of
jobs grew it; SQLite never shrinks it while the daemon's connection is open)."""


class Daemon:
    """The scheduling loop over one store and one backend (see the module docstring)."""

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

    # -- startup --------------------------------------------------------------------

    def start(self) -> None:
        """Register the backend's nodes and adopt attempts an earlier daemon left running."""
        forget_other_boots(self.store)  # before any duration is read
        self.nodes = sync_nodes(self.store, self.backend.nodes())
        if self.health is not None:  # track the nodes as stored, so adopted attempts' failures count
            for node in self.nodes:
                self.health.add_node(NodeTarget.of(node), time.time(), node.state, node.reason)
        for attempt in live_attempts(self.store):
            ended = self._poll(attempt)
            if ended is not None:
                self._finish(attempt, ended)
        daemon_event(self.store, "daemon_started", f"pid {os.getpid()}",
                     data={**self.config.model_dump(), "boot_id": boot_id()})

    # -- one tick -------------------------------------------------------------------

    def tick(self) -> float | None:
        """Do everything that is due; return the next time something will be due (or None)."""
        answer_submissions(self.store)  # first: a job submitted through the daemon is scheduled in this tick
        clock = Now.read()  # durations on the boot clock: stored instants come rebased (compute/clock.py)
        now = clock.wall
        deadlines: list[float] = []
        running: list[LiveAttempt] = []
        for attempt in live_attempts(self.store, clock):
            ended = self._poll(attempt)
            if ended is not None:
                self._finish(attempt, ended)
            else:
                running.append(attempt)
        if isinstance(self.backend, ChangesNodes) and (offered := self.backend.nodes_changed()) is not None:
            self.nodes = sync_nodes(self.store, offered)  # a cluster node joined or left (after polls: lost ones)
        stopping = {a.key for a in running if a.stop is not None}
        for attempt in running:
            self._guard_logs(attempt)
            began, due = self._stop_if_due(attempt, clock)
            if began:
                stopping.add(attempt.key)
            if due is not None:
                deadlines.append(due)
        self._check_health(now, running, stopping)
        if self.draining:
            return min(deadlines, default=None)
        pending, backing_off = pending_jobs(self.store, clock)
        if backing_off:
            deadlines.append(min(backing_off.values()))
        decision, nodes = Decision(), list[NodeView]()
        projects = self.usage.projects(now)
        views = self._views(running, stopping, bool(projects))
        self.usage.account(views, now)
        if pending:
            pending, nodes = self._placeable(pending, now)
            decision = schedule(pending, views, nodes, now, self.sched_config, projects)
            by_key = {(a.job_id, a.number): a for a in running}
            for p in decision.preempt:
                victim = by_key[(p.job_id, p.attempt)]
                reason = (f"reclaimed for {p.for_job}: project {p.reclaim_for} needs its quota back and this attempt "
                          "was borrowing (least progress lost since its last checkpoint)" if p.reclaim_for
                          else f"preempted for {p.for_job} (higher priority)")
                deadlines.append(self._stop(victim, AttemptStopReason.preempt, reason, now))
            for placement in decision.start:
                self._start(placement)
            if len(decision.start) < len(pending):
                deadlines += [a.started_at + self.config.min_runtime_s for a in running
                              if a.preemptible and a.key not in stopping and now - a.started_at < self.config.min_runtime_s]
        self.waitboard.update(decision.waiting, backing_off, pending, running, nodes, now)
        return min(deadlines, default=None)

    def _wait(self, fds: list[int], timeout: float) -> list[int]:
        """Wait until one of `fds` is readable or `timeout` passed; once nothing happened for
        `_QUIET_S`, prepare the next launch (`Warms.warm`)."""
        if isinstance(self.backend, Warms) and timeout > _QUIET_S:
            readable, _, _ = select.select(fds, [], [], _QUIET_S)
            if readable:
                return readable
            self.backend.warm()
            timeout -= _QUIET_S
        readable, _, _ = select.select(fds, [], [], timeout)
        return readable

    def _tell_watchers(self) -> None:
        """Wake the clients waiting on jobs (compute/watchers.py) if this daemon wrote to the store
        since it last did."""
        changes = self.store.changes()
        if changes != self._told:
            self._told = changes
            wake_watchers(self.paths)

    def _poll(self, attempt: LiveAttempt) -> AttemptExit | None:
        """Poll a tracked attempt; adopt one this daemon did not launch (a restart)."""
        if attempt.members:
            return self._poll_gang(attempt)
        if attempt.key in self._tracked:
            return self.backend.poll(attempt.key)
        ended = self.backend.adopt(attempt.key, attempt.handle)
        if ended is None:
            self._tracked.add(attempt.key)
            with self.store.transaction() as conn:
                self.store.event(conn, "adopted", "still running after a daemon restart",
                                 job_id=attempt.job_id, attempt=attempt.number, node=attempt.node)
        return ended

    def _poll_gang(self, attempt: LiveAttempt) -> AttemptExit | None:
        """All members exited: the attempt's exit. A member failed first: stop the others."""
        exits = self.gangs.poll(attempt)
        if (attempt.handle or {}).get("preflight") == "pending":
            attempt, found = settle_preflight(self.store, attempt)
            if found is not None and not found.passed:  # blamed on the rank at fault; finished next tick
                if attempt.stop is None and not all(e is not None for e in exits):
                    self._stop(attempt, AttemptStopReason.member_failed,
                               f"{found.reason}; stopping the other members", time.time())
                return None
        if all(e is not None for e in exits):
            return self.gangs.ended(attempt)[0]
        blamed = self.gangs.blame(attempt)
        if blamed is not None and attempt.stop is None:
            code = exits[blamed.rank]
            record_handle(self.store, attempt.job_id, attempt.number, {**(attempt.handle or {}), "blame": blamed.rank})
            what = "was lost" if code is None or code.exit_code is None else f"exited {code.exit_code}"
            reason = f"rank {blamed.rank} on {blamed.node} {what}; stopping the other members"
            self._stop(attempt, AttemptStopReason.member_failed, reason, time.time())
        return None

    def _signal(self, attempt: LiveAttempt, signum: int) -> None:
        if attempt.members:
            self.gangs.signal(attempt, signum)
        else:
            self.backend.signal(attempt.key, signum)

    def _stop_if_due(self, attempt: LiveAttempt, clock: Now) -> tuple[bool, float | None]:
        """Start or escalate a stop: (whether a stop began now, when to look again)."""
        now = clock.wall
        if attempt.stop is not None:
            if attempt.killed:
                return False, None
            if attempt.kill_at is not None and now >= attempt.kill_at:
                self._signal(attempt, signal.SIGKILL)
                mark_killed(self.store, attempt, f"still running after its grace period: SIGKILL ({attempt.stop.value})")
                return False, None
            return False, attempt.kill_at
        if attempt.cancel_requested is not None:
            return True, self._stop(attempt, AttemptStopReason.cancel, attempt.cancel_requested, now)
        if self.draining:
            return True, self._stop(attempt, AttemptStopReason.shutdown, "daemon shutting down with --stop-jobs", now)
        due: list[float] = []
        if attempt.time_limit_s is not None:
            limit_at = attempt.started_at + attempt.time_limit_s
            if now >= limit_at:
                reason = f"time limit of {attempt.time_limit_s:g}s reached"
                return True, self._stop(attempt, AttemptStopReason.timeout, reason, now)
            due.append(limit_at)
        if attempt.progress_timeout_s is not None:
            # A gang hangs when any member's log stops growing (one hung rank stalls them all).
            silent, log_path = max((self.progress.silent_for(path, attempt.started_at, clock), path)
                                   for path in _logs_of(attempt))
            if silent >= attempt.progress_timeout_s:
                reason = hang_reason(attempt.progress_timeout_s)
                marker = [f"{HANG_MARKER}: no log output for {silent:.1f} s "
                          f"(progress_timeout_s={attempt.progress_timeout_s:g})"]
                for path in dict.fromkeys([attempt.log_path, log_path]):
                    append_log(path, marker)
                return True, self._stop(attempt, AttemptStopReason.hang, reason, now)
            due.append(now + attempt.progress_timeout_s - silent)
        return False, min(due, default=None)

    def _grace(self, attempt: LiveAttempt) -> float:
        return self.config.grace_s if attempt.grace_s is None else attempt.grace_s

    def _stop(self, attempt: LiveAttempt, stop: AttemptStopReason, reason: str, now: float) -> float:
        """SIGTERM to the attempt's processes now; SIGKILL at the returned time (end of grace)."""
        grace = self._grace(attempt)
        request_stop(self.store, attempt, stop, now + grace, f"{reason}; SIGTERM, SIGKILL after {grace:g}s")
        self._signal(attempt, signal.SIGTERM)
        return now + grace

    def _check_health(self, now: float, running: list[LiveAttempt], stopping: set[str]) -> None:
        """The one place per tick where node health is checked (no-op without a monitor):
        fault drills first (they fail running attempts before a probe takes the fault), then
        the monitor's step, whose verdicts and probe results go to the store. A quarantined
        node's attempts are stopped and requeued; a cordoned node's attempts run on."""
        if self.health is None:
            return
        live = [a for a in running if a.key not in stopping]
        for fault in self.health.take_faults({n for a in live for n in _nodes_of(a)}):
            for attempt in (a for a in live if a.members and fault.node in _nodes_of(a)):
                member = next(m for m in attempt.members if m.node == fault.node)  # the gang stops when it exits
                append_log(member.log_path, fault.log_lines())
                self.gangs.signal(attempt, signal.SIGKILL, member.rank)
            for attempt in (a for a in live if not a.members and a.node == fault.node):
                append_log(attempt.log_path, fault.log_lines())
                self.backend.signal(attempt.key, signal.SIGKILL)
                mark_killed(self.store, attempt, f"fault drill '{fault.kind.value}' on node {fault.node}: SIGKILL")
                stopping.add(attempt.key)
        before = {n.name: n for n in self.store.nodes()}
        changed = self.health.check(list(before.values()), now)
        record_health(self.store, before, changed, self.health.take_reports())
        for node in (n for n in changed if n.state is NodeState.quarantined):
            reason = f"node {node.name} quarantined: {node.reason}"
            for attempt in running:
                if node.name in _nodes_of(attempt) and attempt.key not in stopping:
                    for m in attempt.members:
                        if m.node == node.name:
                            record_handle(self.store, attempt.job_id, attempt.number,
                                          {**(attempt.handle or {}), "blame": m.rank})
                    append_log(attempt.log_path, [f"{MONITOR_KILL_MARKER}: {reason}"])
                    self._stop(attempt, AttemptStopReason.quarantine, reason, now)
                    stopping.add(attempt.key)
        self.nodes = self.store.nodes()

    def _views(self, running: list[LiveAttempt], stopping: set[str], projects: bool) -> list[RunningAttempt]:
        """The scheduler's view of the running attempts; with projects, with their last checkpoint time."""
        return [
            RunningAttempt(a.job_id, a.number, node, gpus, a.priority, a.preemptible, a.started_at,
                           stopping=a.key in stopping, project=a.project, borrowed_only=a.borrowed_only,
                           checkpoint_at=checkpoint_time(a.checkpoint_dir) if projects and a.preemptible else None)
            for a in running
            for node, gpus in a.placed()
        ]

    def _placeable(self, pending: list[PendingJob], now: float) -> tuple[list[PendingJob], list[NodeView]]:
        """The nodes that may take work now (active, with a fresh passing probe) and each job's
        exclusions: multi-GPU jobs also skip nodes without a fresh NCCL check. A job whose every
        node big enough is excluded by its past infra failures (a one-node host) may go back."""
        health = self.health
        views = [NodeView(n.name, tuple(n.gpus), not why, why) for n in self.nodes for why in [self._unready(n, now)]]
        no_nccl: frozenset[str] = frozenset()
        if health is not None and any(j.gpus >= 2 for j in pending):
            no_nccl = frozenset(v.name for v in views if v.schedulable and not health.ready(v.name, now, 2))
        jobs = []
        for job in pending:
            excluded = job.excluded_nodes
            big = [v.name for v in views if len(v.gpus) >= job.gpus]
            if excluded and sum(name not in excluded for name in big) < job.nodes:
                excluded = frozenset()
            if job.gpus >= 2:
                excluded |= no_nccl
            jobs.append(job if excluded == job.excluded_nodes else replace(job, excluded_nodes=excluded))
        return jobs, views

    def _unready(self, node: Node, now: float) -> str:
        """Why `node` takes no work now (its state, or no fresh passing probe); "" when it does."""
        if node.state is not NodeState.active:
            return node.state.value
        return "" if self.health is None or self.health.ready(node.name, now) else "waiting for a passing health probe"

    # -- starting and ending attempts -----------------------------------------------

    def _start(self, placement: Placement) -> None:
        started = start_attempt(self.store, placement.job_id, placement.node, placement.gpus, placement.members,
                                placement.borrowed)
        if started is None:
            return
        if started.members:
            return self._start_gang(started)
        spec = started.spec
        gpus = placement.gpus
        env, missing = attempt_env(spec, started.job_id, started.number, gpus, started.checkpoint_dir, placement.node)
        cwd = spec.cwd or str(self.paths.home)
        Path(started.checkpoint_dir).mkdir(parents=True, exist_ok=True)
        key = f"{started.job_id}.{started.number}"
        run = container_run(spec, started.job_id, started.number, self.config.grace_s)
        argv = attempt_argv(spec, gpus, cwd, started.checkpoint_dir, env, name=run.name if run else "",
                            real_gpus=run is not None and self._real_gpus(placement.node, gpus))
        request = LaunchRequest(
            key=key, argv=argv, env=env, cwd=cwd, node=placement.node, gpus=gpus, log_path=started.log_path,
            cpus=spec.resources.cpus, memory_gb=spec.resources.memory_gb, labels=dict(spec.labels), container=run,
        )
        try:
            if missing is not None:
                raise LaunchError(
                    f"the job's secret_env names {missing}, which the compute daemon's environment lacks; "
                    f"set {missing} in the shell that starts the daemon (`autoresearch compute down`, then "
                    "submit again from a shell that has it)"
                )
            self.masker.begin(key, _secrets_of(spec), [str(started.log_path)])
            handle = self.backend.launch(request)
        except Exception as err:  # LaunchError, or anything else: the attempt did not start
            return self._not_started(started, key, err)
        self._tracked.add(key)
        record_handle(self.store, started.job_id, started.number, handle)

    def _start_gang(self, started: Started) -> None:
        """Launch every member of a gang attempt (compute/gang_start.py), or none; the members
        first run the gang preflight when the health config's `gang_preflight` says so."""
        spec, key = started.spec, f"{started.job_id}.{started.number}"
        cwd = spec.cwd or str(self.paths.home)
        Path(started.checkpoint_dir).mkdir(parents=True, exist_ok=True)
        config = self.config.health
        by_name = {n.name: n for n in self.nodes}
        targets = [NodeTarget.of(by_name[m.node]) if m.node in by_name else NodeTarget(name=m.node)
                   for m in started.members]
        preflight = plan_preflight(config.gang_preflight, targets, config.gang_preflight_timeout_s)
        try:
            if not isinstance(self.backend, HostsGangs):
                raise LaunchError(f"the {self.backend.name} backend cannot run multi-node jobs; submit with nodes=1")
            master = self.backend.master_address(started.members[0].node)
            port = preflight_port(self.backend, started.members[0].node, master[1]) if preflight.backend else 0
            health = self.health
            requests = gang_requests(started, cwd, master, preflight, port, config.gang_preflight_timeout_s,
                                     lambda node: health is not None and health.preflight_fault(node) is not None)
            self.masker.begin(key, _secrets_of(spec), [str(r.log_path) for r in requests])
            handle = self.gangs.launch(requests)
        except Exception as err:  # the attempt did not start: none of its members runs
            return self._not_started(started, key, err)
        record_handle(self.store, started.job_id, started.number,
                      {**handle, "preflight": "pending"} if preflight.backend else handle)
        kind = "gang_preflight_started" if preflight.backend else "gang_preflight_skipped"
        job_event(self.store, kind, preflight.reason, started.job_id, started.number, started.members[0].node)

    def _not_started(self, started: Started, key: str, err: Exception) -> None:
        """The attempt (or none of its gang's members) could not start: say why in its log, end it as 127."""
        append_log(str(started.log_path), [f"[autoresearch] could not start attempt {started.number}: {err}"])
        attempt = next(a for a in live_attempts(self.store) if a.key == key)
        self._finish(attempt, AttemptExit(127))

    def _real_gpus(self, node_name: str, gpus: tuple[int, ...]) -> bool:
        """Whether `gpus` on that node are devices a container runtime can pass (else virtual slots)."""
        node = next((n for n in self.nodes if n.name == node_name), None)
        if not gpus or node is None or node.virtual:
            return False
        if self._host_gpus is None:
            self._host_gpus = frozenset(detect_gpus())
        return set(gpus) <= self._host_gpus

    def _guard_logs(self, attempt: LiveAttempt, ended: bool = False) -> None:
        """Mask the attempt's secrets in what its logs gained (compute/log_secrets.py), then cut the
        middle of a log that passed `log_max_bytes` (one stat per log)."""
        logs = _logs_of(attempt)
        self.masker.scan(attempt.key, logs, ended)
        for path in logs:
            cap_log(path, self.config.log_max_bytes)

    def _finish(self, attempt: LiveAttempt, ended: AttemptExit) -> None:
        self._guard_logs(attempt, ended=True)  # what it wrote since the last tick
        code, node, log_path = ended.exit_code, attempt.node, attempt.log_path
        if attempt.members and (blamed := self.gangs.blame(attempt)) is not None:
            node, log_path = blamed.node, blamed.log_path  # the attempt ends as its first failed member did
        tail = log_tail(log_path)
        budget = job_budget_row(self.store, attempt.job_id)
        verdict: list[Classification] = []

        def classify() -> FailureClass:
            verdict.append(self.classifier.classify(code, tail))
            return verdict[-1].failure_class

        now = time.time()
        ending = decide_ending(
            number=attempt.number, node=node, stop=attempt.stop, exit_code=code, classify=classify,
            budget=JobBudget(budget["retries_used"], budget["max_retries"], budget["infra_retries_used"],
                             self.config.max_infra_retries, budget["backoff_s"], budget["cancel_requested"],
                             budget["progress_timeout_s"]),
            now=now, jitter=random.uniform(0.5, 1.5),
        )
        failed = ending.outcome in (AttemptOutcome.failed, AttemptOutcome.infra_failed, AttemptOutcome.timed_out)
        kept = excerpt(tail, verdict[0] if verdict else None) if failed else None
        end_attempt(self.store, attempt, ending, code, kept, verdict[0].rule if failed and verdict else None)
        self._tell_watchers()  # its waiter goes on now, not after this tick's other work
        if self.health is not None and verdict and ending.failure_class is FailureClass.infra:
            self.health.on_infra_failure(node, attempt.job_id, now)
        for path in _logs_of(attempt):
            self.progress.forget(path)
        if attempt.members:
            self.gangs.release(attempt)
        else:
            self._tracked.discard(attempt.key)
            self.backend.release(attempt.key)
        self.masker.release(attempt.key)
        log.info("%s attempt %d: %s", attempt.job_id, attempt.number, ending.reason)

    # -- the loop -------------------------------------------------------------------

    def serve(self, sock: socket.socket, on_ready: Callable[[], None] = lambda: None) -> None:
        """Run until SIGTERM/SIGINT (leave attempts running) or SIGUSR1 (stop them first)."""
        wake_r, wake_w = socket.socketpair()
        for s in (wake_r, wake_w, sock):
            s.setblocking(False)
        signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "exiting", True))
        signal.signal(signal.SIGINT, lambda *_: setattr(self, "exiting", True))
        signal.signal(signal.SIGUSR1, lambda *_: setattr(self, "draining", True))
        if self.health is not None:
            self.health.on_done = lambda: _poke(wake_w)
        record_tick(self.paths)
        self.start()
        on_ready()
        failed = 0  # ticks failed in a row: the daemon then backs off, woken by signals only
        quiet_since = time.monotonic()
        while True:
            record_tick(self.paths)  # `compute status` reports a daemon whose ticks stopped
            try:
                self.store.check_intact()
            except StoreLost:  # holding its locks would only make every client wait 30 s for them (main logs it)
                self.backend.close()
                self.store.close()
                raise
            try:
                due = self.tick()
                self._tell_watchers()
                if failed:
                    log.info("a tick succeeded again after %d failed ones", failed)
                failed = 0
            except Exception as err:  # one bad tick must not take the host's queue down
                failed += 1
                _log_failed_tick(err, failed)
            if self.exiting or (self.draining and not _drain_unfinished(self.store)):
                break
            if failed:  # a full disk or a locked store: no spinning on the job ends and requests it cannot record
                self._wait([wake_r.fileno()], min(self.config.tick_s * 2 ** min(failed, 8), MAX_BACKOFF_S))
                _drain(wake_r)
                continue
            timeout = self.config.tick_s if due is None else min(self.config.tick_s, max(0.0, due - time.time()))
            fds: list[int] = [sock.fileno(), wake_r.fileno()]
            if isinstance(self.backend, WakesDaemon):
                fds += self.backend.wake_fds()
            readable = self._wait(fds, timeout)
            if readable:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= _IDLE_S and self.store.wal_bytes() > 0:
                self.store.truncate_wal()  # blocked by a reader: tried again at the next quiet wait
            for s in (sock, wake_r):
                if s.fileno() in readable:
                    _drain(s)
        reason = "stopped jobs and exited" if self.draining else "exited; running attempts keep running"
        daemon_event(self.store, "daemon_stopped", reason)
        if self.health is not None:
            self.health.close()
        self.backend.close()
        self.store.close()


MAX_BACKOFF_S = 5.0
"""The longest pause between ticks while they fail (a full disk, a store locked by another process)."""


def _log_failed_tick(err: Exception, failed: int) -> None:
    """The first failure of a streak and every 50th after it; a store that is merely unavailable
    (StoreUnavailable: full disk, lock) without a traceback, since its message says what to do."""
    if failed != 1 and failed % 50:
        return
    if isinstance(err, StoreUnavailable):
        log.error("tick failed (%d in a row), backing off: %s", failed, err)
    else:
        log.exception("tick failed (%d in a row), backing off", failed)


def _drain_unfinished(store: Store) -> bool:
    """Whether a draining daemon still has attempts to wait for (True when the store cannot say)."""
    try:
        return bool(live_attempts(store))
    except StoreUnavailable:
        return True  # unknown: keep draining


def _nodes_of(attempt: LiveAttempt) -> list[str]:
    return [node for node, _ in attempt.placed()]


def _poke(sock: socket.socket) -> None:
    try:
        sock.send(b"h")
    except OSError:  # full (a wake-up is pending anyway) or closed (shutting down)
        pass


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(4096):
            pass
    except (BlockingIOError, InterruptedError):
        pass


def _secrets_of(spec: JobSpec) -> list[str]:
    """The values of the spec's `secret_env` in the daemon's environment (none when one is missing:
    the launch then fails and says which)."""
    try:
        return list(secret_values(spec.secret_env).values())
    except KeyError:
        return []


def _logs_of(attempt: LiveAttempt) -> list[str]:
    """The logs an attempt writes: each member's for a gang, else its own."""
    return [m.log_path for m in attempt.members] or [attempt.log_path]
