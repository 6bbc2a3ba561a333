"""Stopping attempts: cancel, time limit, a hang, a drain (SIGTERM, then SIGKILL after the grace
period), and the health check of each tick, which stops a quarantined node's attempts and runs the
armed fault drills (see compute/daemon.py)."""

from __future__ import annotations

import signal

from compute.attempt_logs import append_log
from compute.clock import Now
from compute.daemon_base import DaemonBase, logs_of
from compute.endings import AttemptStopReason, hang_reason
from compute.health import HANG_MARKER, MONITOR_KILL_MARKER
from compute.lifecycle import LiveAttempt, mark_killed, record_handle, request_stop
from compute.nodes import record_health
from compute.records import NodeState


class Stopping(DaemonBase):
    """The daemon's stops (SIGTERM, grace, SIGKILL) and its per-tick health check."""

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
                                   for path in logs_of(attempt))
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


def _nodes_of(attempt: LiveAttempt) -> list[str]:
    return [node for node, _ in attempt.placed()]
