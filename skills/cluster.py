"""The cluster_status skill: nodes with health and GPU slots, and the queue by priority."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from compute.records import HealthStatus, Job, JobState, NodeState
from compute.spec import priority_name
from skills.context import SkillContext
from skills.models import SkillInput, SkillOutput
from skills.views import compute_errors

_PAGE = 1000


class ClusterStatusInput(SkillInput):
    """No arguments."""


class NodeStatus(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    name: str
    state: NodeState
    """active takes work; quarantined and cordoned do not."""
    health: HealthStatus
    reason: str = ""
    """Why it is in its state or health (e.g. the failed probe)."""
    gpus_total: int
    gpus_used: int
    gpus_free: int
    """Free slots that can take work now (0 on a node that is not active)."""
    running_jobs: int
    virtual: bool = False
    """A virtual slice of a host (tests, fault drills)."""


class ClusterStatusOutput(SkillOutput):
    nodes: list[NodeStatus]
    gpus_total: int
    gpus_used: int
    gpus_free: int
    """Free slots on active nodes."""
    running: int
    """Jobs running now."""
    pending: int
    """Jobs waiting in the queue."""
    pending_by_priority: dict[str, int]
    """Queue depth by priority class (e.g. {"high": 2, "normal": 10})."""
    pending_gpus: int
    """GPU slots the pending jobs ask for in all."""


def cluster_status(ctx: SkillContext, args: ClusterStatusInput) -> ClusterStatusOutput:
    """Show the compute nodes (health, state, used and free GPU slots) and the queue depth by priority."""
    with compute_errors():
        nodes = ctx.client.nodes()
        running = _all(ctx, JobState.running)
        pending = _all(ctx, JobState.pending)
    used: dict[str, int] = {}
    jobs_on: dict[str, int] = {}
    for job in running:
        attempt = job.last_attempt
        if attempt is not None and attempt.ended_at is None:
            used[attempt.node] = used.get(attempt.node, 0) + len(attempt.gpus)
            jobs_on[attempt.node] = jobs_on.get(attempt.node, 0) + 1
    views = []
    for node in nodes:
        total, busy = len(node.gpus), used.get(node.name, 0)
        views.append(
            NodeStatus(
                name=node.name,
                state=node.state,
                health=node.health,
                reason=node.reason,
                gpus_total=total,
                gpus_used=busy,
                gpus_free=max(total - busy, 0) if node.state is NodeState.active else 0,
                running_jobs=jobs_on.get(node.name, 0),
                virtual=node.virtual,
            )
        )
    by_priority: dict[str, int] = {}
    for job in sorted(pending, key=lambda j: -j.priority):
        name = priority_name(job.priority)
        by_priority[name] = by_priority.get(name, 0) + 1
    return ClusterStatusOutput(
        nodes=views,
        gpus_total=sum(v.gpus_total for v in views),
        gpus_used=sum(v.gpus_used for v in views),
        gpus_free=sum(v.gpus_free for v in views),
        running=len(running),
        pending=len(pending),
        pending_by_priority=by_priority,
        pending_gpus=sum(job.spec.resources.gpus for job in pending),
    )


def _all(ctx: SkillContext, state: JobState) -> list[Job]:
    jobs: list[Job] = []
    while True:
        page = ctx.client.list(states=[state], limit=_PAGE, offset=len(jobs))
        jobs += page
        if len(page) < _PAGE:
            return jobs
