"""One tick of the daemon: answer submissions, reap, stop what is due, check health, then call the
pure `schedule` (compute/scheduler.py) on the nodes that may take work and carry out its decision."""

from __future__ import annotations

from dataclasses import replace

from compute.backends.base import ChangesNodes, SuspectsNodes
from compute.clock import Now
from compute.daemon_staging import Staging
from compute.endings import AttemptStopReason
from compute.lifecycle import LiveAttempt, live_attempts, pending_jobs, sync_nodes
from compute.records import Node, NodeState
from compute.scheduler import Decision, NodeView, PendingJob, RunningAttempt, schedule
from compute.submission_answers import answer as answer_submissions
from compute.usage import checkpoint_time


class SchedulingPass(Staging):
    """The daemon's tick: everything due, then the scheduling pass."""

    def tick(self) -> float | None:
        """Do everything that is due; return the next time something will be due (or None)."""
        answer_submissions(self.store)  # first: a job submitted through the daemon is scheduled in this tick
        clock = Now.read()  # durations on the boot clock: stored instants come rebased (compute/clock.py)
        now = clock.wall
        deadlines: list[float] = []
        running: list[LiveAttempt] = []
        finished, staged = False, bool(self.staged)
        for attempt in live_attempts(self.store, clock):
            ended = self._poll(attempt)
            if ended is not None:
                self._finish(attempt, ended)
                finished = True
            else:
                running.append(attempt)
        if finished and staged:  # staged attempts that began in their place hold their slots
            running = live_attempts(self.store, clock)
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
            for job_id in list(self.staged):
                self._recall(job_id)
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
                self._recall(p.for_job)  # it goes where its victims are, not where it was staged
                victim = by_key[(p.job_id, p.attempt)]
                stopping.add(victim.key)
                reason = (f"reclaimed for {p.for_job}: project {p.reclaim_for} needs its quota back and this attempt "
                          "was borrowing (least progress lost since its last checkpoint)" if p.reclaim_for
                          else f"preempted for {p.for_job} (higher priority)")
                deadlines.append(self._stop(victim, AttemptStopReason.preempt, reason, now))
            for placement in decision.start:
                if self._recall(placement.job_id):  # else its node started it where it was staged
                    self._start(placement)
            if len(decision.start) < len(pending):
                deadlines += [a.started_at + self.config.min_runtime_s for a in running
                              if a.preemptible and a.key not in stopping and now - a.started_at < self.config.min_runtime_s]
        if self._stager is not None and (pending or self.staged):
            if decision.start:  # the attempts just started hold their slots and may have successors
                running = live_attempts(self.store, clock)
                views = self._views(running, {a.key for a in running if a.stop is not None}, bool(projects))
            started = {p.job_id for p in decision.start}
            self._restage([j for j in pending if j.job_id not in started], running, stopping, views, nodes, projects,
                          now, decision.waiting)
        self.waitboard.update(decision.waiting, backing_off, pending, running, nodes, now)
        return min(deadlines, default=None)

    def _views(self, running: list[LiveAttempt], stopping: set[str], projects: bool) -> list[RunningAttempt]:
        """The scheduler's view of the running attempts; with projects, with their last checkpoint time."""
        return [
            RunningAttempt(a.job_id, a.number, node, gpus, a.priority, a.preemptible, a.started_at,
                           stopping=a.key in stopping, project=a.project, borrowed_only=a.borrowed_only,
                           checkpoint_at=checkpoint_time(a.checkpoint_dir) if projects and a.preemptible else None,
                           cpus=a.cpus)
            for a in running
            for node, gpus in a.placed()
        ]

    def _placeable(self, pending: list[PendingJob], now: float) -> tuple[list[PendingJob], list[NodeView]]:
        """The nodes that may take work now (active, with a fresh passing probe) and each job's
        exclusions: multi-GPU jobs also skip nodes without a fresh NCCL check. A job whose every
        node big enough is excluded by its past infra failures (a one-node host) may go back."""
        health = self.health
        suspect = self.backend.suspect_nodes() if isinstance(self.backend, SuspectsNodes) else {}
        views = [NodeView(n.name, tuple(n.gpus), not why, why, n.cpus) for n in self.nodes
                 for why in [suspect.get(n.name) or self._unready(n, now)]]
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
