"""Staging ("pre-dispatch") on backends that can (`StagesNext`: the Ray backend): the next job for a
slot waits on the slot's node, which starts it the moment the attempt holding the slot exits. No
round trip to the daemon lies between one attempt's exit and the next start on its slot (the
exit's answer, the end record, a scheduling pass, the launch call: ~10-15 ms per attempt on one
host, more across hosts), as with a Ray worker lease that gets its next task.

Rules:

- At most one staged job per running single-node attempt with GPUs (its predecessor): the job the
  scheduler would start on the predecessor's GPUs were it to end now, with every other attempt
  running (`schedule` on the predecessor's node only; priorities, quotas and exclusions apply as in
  any pass). Gang jobs and jobs without GPUs are not staged; they start through a pass as before.
- A staged job stays pending in the store, untouched. Its attempt is recorded only once its node
  says it started, with the time the node started it (`started_at`, the `started` event); its
  waiting reason meanwhile is `staged`.
- It is recalled (pending as before, no attempt spent) when its job leaves the queue (cancelled),
  its predecessor is being stopped (preempted, cancelled, time limit) or is gone, its node takes no
  work (quarantined, suspect, cordoned, unprobed), the daemon drains, a pass starts it elsewhere or
  preempts for it, or a job new to the queue would now be chosen for the slot instead (a higher
  priority). A staged job its node started before the recall arrived runs on and is recorded; if its
  job was cancelled meanwhile, it is stopped at once and recorded so (an attempt `cancelled`, killed).
  A node lost with its staged job leaves it pending.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from compute.backends.base import AttemptExit, StagesNext
from compute.daemon_starts import Starting, secrets_of
from compute.endings import AttemptStopReason
from compute.lifecycle import LiveAttempt, next_attempt, record_handle, record_unwanted_start, start_attempt
from compute.quota_view import ProjectView
from compute.scheduler import NodeView, PendingJob, Placement, RunningAttempt, schedule
from compute.waiting import KIND, WaitEntry

log = logging.getLogger("compute.daemon")


@dataclass(frozen=True)
class Staged:
    """A job staged on a node behind a running attempt."""

    job_id: str
    number: int
    """The attempt number it will have (its job's next)."""
    after: str
    """Key of the attempt whose GPUs it takes when that attempt exits."""
    node: str
    gpus: tuple[int, ...]
    borrowed: bool
    """It will run beyond its project's quota (as the scheduler placed it)."""
    handle: dict[str, Any]
    queue: frozenset[tuple[str, int]]
    """(job id, priority) of the queue when it was chosen: a job new to the queue has the choice made again."""

    @property
    def key(self) -> str:
        return f"{self.job_id}.{self.number}"


class Staging(Starting):
    """The daemon's staged jobs (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.staged: dict[str, Staged] = {}
        """Job id -> where it is staged."""
        self._stager = self.backend if isinstance(self.backend, StagesNext) else None

    def _stop(self, attempt: LiveAttempt, stop: AttemptStopReason, reason: str, now: float) -> float:
        """An attempt being stopped keeps no staged successor: its GPUs may be meant for the job it is
        preempted for, or its node for no job at all (quarantine). Taken back before the signal."""
        staged = next((s for s in self.staged.values() if s.after == attempt.key), None)
        if staged is not None:
            self._recall(staged.job_id)
        return super()._stop(attempt, stop, reason, now)

    def _finish(self, attempt: LiveAttempt, ended: AttemptExit, at: float | None = None) -> None:
        """Record the attempt's end, then the job staged behind it as started when its node started it
        (the attempt had exited by then: its end is recorded at that time too), or leave that job
        pending as it was (it did not start)."""
        staged = next((s for s in self.staged.values() if s.after == attempt.key), None)
        if staged is None or self._stager is None:
            return super()._finish(attempt, ended, at)
        del self.staged[staged.job_id]
        began = self._stager.began(staged.key)
        super()._finish(attempt, ended, began)
        if began is None:
            self.masker.release(staged.key)
            return None
        if start_attempt(self.store, staged.job_id, staged.node, staged.gpus, borrowed=staged.borrowed,
                         at=began) is None:  # cancelled after its node started it: nobody wants it
            self.backend.signal(staged.key, signal.SIGKILL)
            self.backend.release(staged.key)
            self.masker.release(staged.key)
            record_unwanted_start(self.store, staged.job_id, staged.number, staged.node, staged.gpus, began)
            return None
        self._tracked.add(staged.key)
        record_handle(self.store, staged.job_id, staged.number, staged.handle)
        return None

    def _recall(self, job_id: str) -> bool:
        """Take a staged job back: True, it is pending as before (or was not staged); False, its node
        started it already (it is recorded with its predecessor's end)."""
        staged = self.staged.get(job_id)
        if staged is None or self._stager is None:
            return True
        if self._stager.recall(staged.key) is not None:
            return False
        del self.staged[job_id]
        self.masker.release(staged.key)
        return True

    def _restage(self, pending: Sequence[PendingJob], running: Sequence[LiveAttempt], stopping: set[str],
                 views: list[RunningAttempt], nodes: Sequence[NodeView], projects: Sequence[ProjectView], now: float,
                 waiting: dict[str, WaitEntry]) -> None:
        """Recall the staged jobs that may no longer start so, then stage a job behind each running attempt
        that has none and is not `stopping` (`pending`: the queue this pass left; `waiting`: its reasons,
        `staged` set here)."""
        live = {a.key for a in running}
        taking = {n.name for n in nodes if n.schedulable}
        queued = {j.job_id: j for j in pending}
        if any(j.nodes > 1 for j in pending):  # a waiting gang: its reservations are a whole pass's to make
            queued = {}
        for gone in [s for s in self.staged.values()
                     if s.job_id not in queued or s.node not in taking or s.after not in live]:
            self._recall(gone.job_id)
        queue = frozenset((j.job_id, j.priority) for j in pending)
        candidates = [j for j in pending if j.gpus >= 1 and j.job_id in queued and j.job_id not in self.staged]
        behind = {s.after: s for s in self.staged.values()}
        for before in running:
            s = behind.get(before.key)
            if s is None:
                if not candidates or before.members or not before.gpus or before.key in stopping \
                        or before.stop is not None or before.node not in taking:
                    continue
                choice = self._choose(before, candidates, views, nodes, projects, now)
            elif s.job_id not in queued or queue <= s.queue:  # started already, or nobody new: the choice stands
                continue
            else:
                choice = self._choose(before, [*candidates, queued[s.job_id]], views, nodes, projects, now)
                if choice is not None and choice.job_id == s.job_id:
                    self.staged[s.job_id] = replace(s, queue=queue)
                    continue
                if not self._recall(s.job_id):
                    continue
                candidates.append(queued[s.job_id])
            if choice is not None and self._stage(choice, before, queue):
                candidates = [j for j in candidates if j.job_id != choice.job_id]
        for s in self.staged.values():
            if s.job_id in waiting:
                waiting[s.job_id] = (KIND.staged, waiting[s.job_id][1], (s.node, s.after))

    def _choose(self, before: LiveAttempt, candidates: list[PendingJob], views: list[RunningAttempt],
                nodes: Sequence[NodeView], projects: Sequence[ProjectView], now: float) -> Placement | None:
        """The job the scheduler would start on `before`'s GPUs were it to end now, all else as it is."""
        node = next(n for n in nodes if n.name == before.node)
        others = [v for v in views if v.job_id != before.job_id or v.attempt != before.number]
        decision = schedule(candidates, others, [node], now, self.sched_config, projects)
        cpus = {j.job_id: j.cpus for j in candidates}
        return next((p for p in decision.start
                     if not p.members and set(p.gpus) <= set(before.gpus) and cpus[p.job_id] <= before.cpus), None)

    def _stage(self, placement: Placement, before: LiveAttempt, queue: frozenset[tuple[str, int]]) -> bool:
        """Hand the placed job to its node, to start when `before` exits; False if it cannot be staged
        (it then starts the usual way, through a pass)."""
        started = next_attempt(self.store, placement.job_id)
        if started is None or self._stager is None:
            return False
        key = f"{started.job_id}.{started.number}"
        try:
            request = self._request(started, placement)
            self.masker.begin(key, secrets_of(started.spec), [str(started.log_path)])
            handle = self._stager.stage(request, before.key)
        except Exception as err:  # LaunchError, or anything else
            log.info("%s not staged behind %s: %s", placement.job_id, before.key, err)
            self.masker.release(key)
            return False
        self.staged[placement.job_id] = Staged(placement.job_id, started.number, before.key, placement.node,
                                               placement.gpus, placement.borrowed, handle, queue)
        return True
