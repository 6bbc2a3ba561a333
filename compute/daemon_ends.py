"""Reaping and finishing attempts: poll the backend (adopting what an earlier daemon left running),
end a gang whose member failed, guard the logs (secrets masked, size capped), and record how each
attempt ended: classified, retried or not (compute/endings.py), its node blamed for infra failures."""

from __future__ import annotations

import logging
import random
import time

from compute.attempt_logs import cap_log, excerpt, log_tail
from compute.backends.base import AttemptExit
from compute.daemon_base import logs_of
from compute.daemon_stops import Stopping
from compute.endings import AttemptStopReason, JobBudget, decide_ending
from compute.gang_start import settle_preflight
from compute.health import Classification
from compute.lifecycle import LiveAttempt, end_attempt, job_budget_row, record_handle
from compute.records import AttemptOutcome, FailureClass

log = logging.getLogger("compute.daemon")


class Ending(Stopping):
    """The daemon's polls of running attempts and the end of each."""

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

    def _guard_logs(self, attempt: LiveAttempt, ended: bool = False) -> None:
        """Mask the attempt's secrets in what its logs gained (compute/log_secrets.py), then cut the
        middle of a log that passed `log_max_bytes` (one stat per log)."""
        logs = logs_of(attempt)
        self.masker.scan(attempt.key, logs, ended)
        for path in logs:
            cap_log(path, self.config.log_max_bytes)

    def _finish(self, attempt: LiveAttempt, ended: AttemptExit, at: float | None = None) -> None:
        """Record how the attempt ended (`at`: when, if known to be before now)."""
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
        end_attempt(self.store, attempt, ending, code, kept, verdict[0].rule if failed and verdict else None, at)
        self._tell_watchers()  # its waiter goes on now, not after this tick's other work
        if self.health is not None and verdict and ending.failure_class is FailureClass.infra:
            self.health.on_infra_failure(node, attempt.job_id, now)
        for path in logs_of(attempt):
            self.progress.forget(path)
        if attempt.members:
            self.gangs.release(attempt)
        else:
            self._tracked.discard(attempt.key)
            self.backend.release(attempt.key)
        self.masker.release(attempt.key)
        log.info("%s attempt %d: %s", attempt.job_id, attempt.number, ending.reason)
