"""A fleet in simulated time around the real `schedule` function: the property tests of projects
(tests/compute/scheduler/test_quota_properties.py) and benchmarks/fleet_sim.py drive it.

Each `step(now)` does what the daemon does per tick, without processes: attempts whose work is
done end; attempts stopped (preempted or reclaimed) exit `grace_s` after their SIGTERM (the worst
case: SIGKILL) and their jobs go back to pending from their last checkpoint (the work since is
lost); then one `schedule` pass over what is pending and running, whose preemptions and starts
are applied at once. A job checkpoints every `checkpoint_s` seconds of its attempt (touching
its checkpoint dir: `RunningAttempt.checkpoint_at`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from compute.quota_usage import UsageMeter
from compute.quota_view import ProjectView, borrowed_attempts
from compute.scheduler import Decision, NodeView, PendingJob, RunningAttempt, SchedulerConfig, schedule
from compute.spec import DEFAULT_PROJECT


@dataclass
class SimJob:
    """A job of the simulation: how much work it is, and how it checkpoints."""

    job_id: str
    gpus: int
    work_s: float
    """Seconds of running it needs in all (resumed attempts continue from the last checkpoint)."""
    submit_at: float
    project: str = DEFAULT_PROJECT
    priority: int = 50
    checkpoint_s: float = 600.0
    """Seconds between its checkpoints; the first one `checkpoint_phase_s` into each attempt."""
    checkpoint_phase_s: float | None = None
    borrowed_only: bool = False
    preemptible: bool = True
    seq: int = 0
    done_s: float = 0.0
    """Work saved so far (at its last checkpoint, or all of it when it ended)."""
    started_at: float | None = None
    """When its first attempt started (its wait ends)."""
    ended_at: float | None = None


@dataclass
class _Live:
    job: SimJob
    attempt: int
    node: str
    gpus: tuple[int, ...]
    started_at: float
    stop_at: float | None = None


@dataclass
class FleetSim:
    """The fleet, its jobs and what happened (see the module doc)."""

    nodes: Sequence[NodeView]
    projects: Sequence[ProjectView] = ()
    config: SchedulerConfig = SchedulerConfig()
    grace_s: float = 30.0
    pending: dict[str, SimJob] = field(default_factory=dict)
    live: dict[str, _Live] = field(default_factory=dict)
    queued_at: dict[str, float] = field(default_factory=dict)
    done: list[SimJob] = field(default_factory=list)
    lost_gpu_s: float = 0.0
    """GPU-seconds of work thrown away by stops (work since the victim's last checkpoint)."""
    busy_gpu_s: float = 0.0
    """GPU-seconds during which a slot was held (by useful or lost work)."""
    preemptions: int = 0
    last_decision: Decision = field(default_factory=Decision)
    last_running: list[RunningAttempt] = field(default_factory=list)
    meter: UsageMeter | None = None
    """The projects' decayed borrowed usage (fair share), as the daemon keeps it."""
    _attempts: dict[str, int] = field(default_factory=dict)
    _seq: int = 0
    _last: float | None = None

    def submit(self, job: SimJob, now: float) -> None:
        self._seq += 1
        job.seq = self._seq
        self.pending[job.job_id] = job
        self.queued_at[job.job_id] = now

    def _checkpoint_at(self, a: _Live, now: float) -> float | None:
        every = a.job.checkpoint_s
        first = every if a.job.checkpoint_phase_s is None else a.job.checkpoint_phase_s
        ran = now - a.started_at
        if ran < first:
            return None
        return a.started_at + first + ((ran - first) // every) * every

    def _saved(self, a: _Live, now: float) -> float:
        at = self._checkpoint_at(a, now)
        return a.job.done_s + (0.0 if at is None else at - a.started_at)

    def pending_view(self, j: SimJob) -> PendingJob:
        """The scheduler's view of a job that waits (or just started), queued since it last entered the queue."""
        return PendingJob(j.job_id, j.priority, j.gpus, j.seq, self.queued_at[j.job_id], project=j.project,
                          preemptible=j.preemptible, borrowed_only=j.borrowed_only)

    def running_views(self, now: float) -> list[RunningAttempt]:
        return [
            RunningAttempt(
                a.job.job_id,
                a.attempt,
                a.node,
                a.gpus,
                a.job.priority,
                a.job.preemptible,
                a.started_at,
                stopping=a.stop_at is not None,
                project=a.job.project,
                borrowed_only=a.job.borrowed_only,
                checkpoint_at=self._checkpoint_at(a, now),
            )
            for a in self.live.values()
        ]

    def borrowed_now(self, now: float) -> set[tuple[str, int]]:
        return borrowed_attempts(self.running_views(now), {p.name: p for p in self.projects})

    def step(self, now: float) -> Decision:
        """One tick at `now` (see the module doc)."""
        if self._last is not None:
            self.busy_gpu_s += sum(len(a.gpus) for a in self.live.values()) * (now - self._last)
        self._last = now
        for key, a in list(self.live.items()):
            if a.stop_at is not None and now >= a.stop_at + self.grace_s:
                saved = self._saved(a, a.stop_at)
                self.lost_gpu_s += len(a.gpus) * (a.job.done_s + (a.stop_at - a.started_at) - saved)
                a.job.done_s = saved
                del self.live[key]
                self.pending[a.job.job_id] = a.job
                self.queued_at[a.job.job_id] = now
            elif a.stop_at is None and a.job.done_s + (now - a.started_at) >= a.job.work_s:
                a.job.done_s, a.job.ended_at = a.job.work_s, now
                del self.live[key]
                self.done.append(a.job)
        running = self.running_views(now)
        pending = [self.pending_view(j) for j in self.pending.values()]
        projects = self.projects
        if projects:
            self.meter = self.meter or UsageMeter(self.config.usage_half_life_s)
            self.meter.account(running, projects, now)
            projects = self.meter.views(projects)
        decision = schedule(pending, running, self.nodes, now, self.config, projects)
        self.last_decision, self.last_running = decision, running
        for p in decision.preempt:
            a = self.live[f"{p.job_id}.{p.attempt}"]
            a.stop_at = now
            self.preemptions += 1
        for placement in decision.start:
            job = self.pending.pop(placement.job_id)
            number = self._attempts.get(job.job_id, 0) + 1
            self._attempts[job.job_id] = number
            if job.started_at is None:
                job.started_at = now
            self.live[f"{job.job_id}.{number}"] = _Live(job, number, placement.node, placement.gpus, now)
        return decision

    def in_use(self) -> dict[str, int]:
        """GPUs held per project (stopping attempts included)."""
        out: dict[str, int] = {}
        for a in self.live.values():
            out[a.job.project] = out.get(a.job.project, 0) + len(a.gpus)
        return out
