"""What a trial records of where its job ran and how fast, read from compute when the job ends.

Per attempt: its node and GPUs, the GPU model and driver the node's last gpu probe before its end
saw (`virtual` on virtual slots, `unknown` where no probe reported them),
and what the node's probes reported at degraded or worse while it ran (the `probe` events the
daemon stores). Speed: the steps the objective was reported at over the seconds the attempts ran,
or the mean of `validity.speed_metric` parsed from the job's logs.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from autoresearch.campaign import Campaign
from autoresearch.campaign.validity import UNKNOWN_GPU, AttemptProvenance, Provenance
from compute import Client, ComputeError, Job, Node
from tracking import LogScan

_BAD = ("degraded", "critical")


def provenance_of(job: Job, client: Client, steps: Sequence[int], campaign: Campaign,
                  nodes: dict[str, Node]) -> Provenance:
    """The provenance of a job that ended; `steps`: the steps its objective was reported at;
    `nodes`: the compute nodes by name (for virtual, GPU model and driver)."""
    attempts = [_attempt(client, a.number, a.node, a.gpus, a.started_at, a.ended_at, nodes.get(a.node))
                for a in job.attempts]
    metric = campaign.validity.speed_metric
    if metric is not None:
        scan = LogScan(metric, campaign.metric_rules)
        scan.update({a.number: Path(a.log_path) for a in job.attempts}, final=True)
        speed = statistics.fmean(scan.values.values()) if scan.values else None
        return Provenance(attempts=attempts, speed=speed, speed_unit=metric)
    seconds = sum((a.ended_at or a.started_at) - a.started_at for a in job.attempts)
    speed = max(steps) / seconds if steps and max(steps) > 0 and seconds > 0 else None
    return Provenance(attempts=attempts, speed=speed)


def _attempt(client: Client, number: int, node: str, gpus: list[int], started: float, ended: float | None,
             info: Node | None) -> AttemptProvenance:
    try:
        probes = client.events(node=node, kind="probe", newest=True)
    except ComputeError:
        probes = []
    degraded: list[str] = []
    for event in probes:
        if event.data.get("status") in _BAD and started <= event.ts <= (ended or event.ts):
            for check in event.data.get("failing", []):
                text = f"{check.get('name')}: {check.get('message')}"
                if text not in degraded:
                    degraded.append(text)
    seen = [e.data["hardware"] for e in probes if e.data.get("hardware") and e.ts <= (ended or e.ts)]
    if info is None or info.virtual:
        return AttemptProvenance(attempt=number, node=node, gpus=list(gpus), started_at=started, ended_at=ended,
                                 degraded=degraded)
    last = seen[-1] if seen else {}
    return AttemptProvenance(attempt=number, node=node, gpus=list(gpus), started_at=started, ended_at=ended,
                             degraded=degraded, gpu_model=last.get("gpu_model") or UNKNOWN_GPU,
                             driver=last.get("driver", ""))
