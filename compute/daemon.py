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

The code, one responsibility per module, each class built on the one before: compute/daemon_base.py
(the state kept between ticks), daemon_stops.py (stops, grace, SIGKILL, the health check),
daemon_ends.py (polls, adoption, how an attempt ended), daemon_starts.py (launches, gangs included),
daemon_staging.py (the next job per slot handed to nodes that start it themselves: the Ray backend),
daemon_pass.py (one tick and its scheduling pass), and this module (startup and the loop on the socket).
"""

from __future__ import annotations

import logging
import os
import select
import signal
import socket
import time
from collections.abc import Callable

from compute.backends.base import WakesDaemon, Warms
from compute.clock import boot_id
from compute.daemon_pass import SchedulingPass
from compute.errors import StoreLost, StoreUnavailable
from compute.health import NodeTarget
from compute.heartbeat import record_tick
from compute.lifecycle import daemon_event, forget_other_boots, live_attempts, sync_nodes
from compute.store import Store

log = logging.getLogger("compute.daemon")
_QUIET_S = 0.05
"""The daemon prepares the next launch (`Warms.warm`: the local backend's spare `sh`) once nothing
happened for this long, not right after a launch: a spare started beside the job that had just
begun slowed it (100-trial campaign, 4 jobs of 0.5 s on 2 cores: jobs ran 2-3% longer)."""
_IDLE_S = 5.0
"""Once nothing woke the daemon for this long, it truncates the store's write-ahead log (a burst of
jobs grew it; SQLite never shrinks it while the daemon's connection is open)."""


class Daemon(SchedulingPass):
    """The scheduling loop over one store and one backend (see the module docstring)."""

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
