"""The cluster_status skill: nodes with health and GPU slots, and the queue by priority."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from compute.nodes import slot_usage
from compute.records import HealthStatus, Job, JobState, NodeState
from compute.priority import priority_name
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
    """Its GPU slots have no physical GPU behind them (a host without GPUs, or a slice of one for
    tests and fault drills): its hours are slot-hours, not GPU-hours."""


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
    held = [(a.node, a.gpus) for job in running if (a := job.last_attempt) is not None and a.ended_at is None]
    views = [
        NodeStatus(name=n.name, state=n.state, health=n.health, reason=n.reason, gpus_total=len(n.gpus),
                   gpus_used=n.gpus_used, gpus_free=n.gpus_free, running_jobs=n.running, virtual=n.virtual)
        for n in slot_usage(nodes, held)
    ]
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
