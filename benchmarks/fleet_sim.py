"""A synthetic week of three projects on 64 simulated GPUs, through the real scheduler in simulated time.

    python benchmarks/fleet_sim.py [--days 7] [--tick 60] [--seed 1]

Projects (8 nodes x 8 GPUs):
- `urgent`: bursty, deadline-driven: weekday bursts of 6-16 jobs (2-8 GPUs, 20-90 min, priority urgent); quota 24.
- `training`: steady: a stream of 4-8 GPU runs of 2-10 h (priority normal) that asks for ~36 GPUs; quota 32.
- `sweeps`: background: 1-GPU trials of 20-60 min (priority low, borrowed only, as nightly sweeps run),
  a big batch every evening and a trickle all day; quota 8.

Every job checkpoints (`$AR_CHECKPOINT_DIR`) every 10-30 min at its own phase; a stopped job resumes
from its last checkpoint and the work since is lost. Grace 30 s. Side by side:
- `projects`: quotas, borrowing, reclaim by most recent checkpoint, fair share (compute/quota.py);
- `projects newest-first`: the same, reclaiming the most recently started attempts instead;
- `single queue`: today's scheduler with no projects (priority and preemption decide);
- `static`: each project alone on its own nodes (3 / 4 / 1 nodes).

Printed: GPU utilization (slot-time held / fleet time), each project's p50/p95 wait (submit -> first
start; jobs never started count until the end), reclaim latency (jobs submitted while their project
was under its quota by at least their size: first pass that sees it -> start, p50/max, target grace + 1 tick), and
GPU-hours of progress lost to preemption.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compute.latency import pct  # noqa: E402
from compute.quota_view import ProjectView, VictimOrder  # noqa: E402
from compute.scheduler import NodeView, SchedulerConfig  # noqa: E402
from compute.testing.fleet import FleetSim, SimJob  # noqa: E402

DAY = 86_400.0
GRACE_S = 30.0
NODES = [NodeView(f"n{i}", tuple(range(8))) for i in range(8)]
QUOTAS = {"urgent": 24, "training": 32, "sweeps": 8}
STATIC_NODES = {"urgent": NODES[:3], "training": NODES[3:7], "sweeps": NODES[7:]}
PROJECTS = [ProjectView(name, quota) for name, quota in QUOTAS.items()]


def week(days: int, seed: int) -> list[SimJob]:
    """The synthetic workload (same for every scheduler)."""
    rng = random.Random(seed)
    jobs: list[SimJob] = []

    def add(project: str, at: float, gpus: int, work_s: float, priority: int, borrowed_only: bool = False) -> None:
        every = rng.uniform(600.0, 1800.0)
        jobs.append(
            SimJob(
                f"{project}-{len(jobs)}",
                gpus,
                work_s,
                at,
                project,
                priority,
                checkpoint_s=every,
                checkpoint_phase_s=rng.uniform(0.0, every),
                borrowed_only=borrowed_only,
            )
        )

    horizon = days * DAY
    for day in range(days):
        if day % 7 < 5:  # weekday bursts of urgent work
            for _ in range(rng.randint(1, 3)):
                start = day * DAY + rng.uniform(8, 18) * 3600
                for _ in range(rng.randint(6, 16)):
                    add("urgent", start + rng.uniform(0, 900), rng.choice([2, 4, 4, 8]), rng.uniform(1200, 5400), 90)
        evening = day * DAY + 20 * 3600
        for _ in range(rng.randint(150, 300)):  # the nightly sweep batch
            add("sweeps", evening + rng.uniform(0, 600), 1, rng.uniform(1200, 3600), 25, borrowed_only=True)
    t = 0.0
    while t < horizon:  # steady training: ~36 GPUs of demand on average
        gpus, work = rng.choice([4, 8, 8]), rng.uniform(2, 10) * 3600
        add("training", t, gpus, work, 50)
        t += rng.expovariate(36.0 / (gpus * work))
    t = 0.0
    while t < horizon:  # a daytime trickle of sweep trials
        add("sweeps", t, 1, rng.uniform(1200, 3600), 25, borrowed_only=True)
        t += rng.expovariate(1 / 600.0)
    return sorted(jobs, key=lambda j: j.submit_at)


@dataclass
class Result:
    name: str
    busy_gpu_s: float = 0.0
    lost_gpu_s: float = 0.0
    waits: dict[str, list[float]] = field(default_factory=dict)
    reclaim: list[float] = field(default_factory=list)
    seconds: float = 0.0


def run(
    name: str,
    jobs: Sequence[SimJob],
    nodes: Sequence[NodeView],
    projects: Sequence[ProjectView],
    config: SchedulerConfig,
    horizon: float,
    tick: float,
    result: Result | None = None,
) -> Result:
    """Replay `jobs` through one FleetSim, stepping every `tick` simulated seconds."""
    t0 = time.perf_counter()
    jobs = [
        SimJob(
            j.job_id,
            j.gpus,
            j.work_s,
            j.submit_at,
            j.project,
            j.priority,
            j.checkpoint_s,
            j.checkpoint_phase_s,
            j.borrowed_only,
        )
        for j in jobs
    ]  # fresh copies: runs share the workload
    sim = FleetSim(nodes, projects, config, grace_s=GRACE_S)
    quotas = {p.name: p.quota_gpus for p in projects}
    eligible: list[tuple[float, SimJob]] = []
    now, i = 0.0, 0
    while now <= horizon:
        while i < len(jobs) and jobs[i].submit_at <= now:
            job = jobs[i]
            if job.project in quotas and not job.borrowed_only:
                use = sum(
                    len(a.gpus) for a in sim.live.values() if a.job.project == job.project and not a.job.borrowed_only
                )
                queued = sum(j.gpus for j in sim.pending.values() if j.project == job.project and not j.borrowed_only)
                if use + queued + job.gpus <= quotas[job.project]:
                    eligible.append((now, job))  # from the pass that first sees it (a submit wakes the daemon)
            sim.submit(job, now)
            i += 1
        sim.step(now)
        now += tick
    out = result or Result(name)
    out.busy_gpu_s += sim.busy_gpu_s
    out.lost_gpu_s += sim.lost_gpu_s
    for job in jobs:
        start = job.started_at if job.started_at is not None else horizon
        out.waits.setdefault(job.project, []).append(max(0.0, start - job.submit_at))
    out.reclaim += [(j.started_at if j.started_at is not None else horizon) - seen for seen, j in eligible]
    out.seconds += time.perf_counter() - t0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--tick", type=float, default=60.0, help="simulated seconds between scheduling passes")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    horizon = args.days * DAY
    jobs = week(args.days, args.seed)
    base = SchedulerConfig(min_runtime_s=60.0)
    results = [
        run("projects", jobs, NODES, PROJECTS, base, horizon, args.tick),
        run(
            "projects newest-first",
            jobs,
            NODES,
            PROJECTS,
            SchedulerConfig(min_runtime_s=60.0, reclaim_order=VictimOrder.newest),
            horizon,
            args.tick,
        ),
        run("single queue", jobs, NODES, (), base, horizon, args.tick),
    ]
    static = Result("static")
    for project, nodes in STATIC_NODES.items():
        run("static", [j for j in jobs if j.project == project], nodes, (), base, horizon, args.tick, static)
    results.append(static)
    fleet_s = len(NODES) * 8 * horizon
    print(
        f"{len(jobs)} jobs over {args.days} days on 64 GPUs, tick {args.tick:g}s, grace {GRACE_S:g}s, seed {args.seed}"
    )
    header = ["", *(r.name for r in results)]
    rows = [["GPU utilization", *(f"{100 * r.busy_gpu_s / fleet_s:.1f}%" for r in results)]]
    for project in QUOTAS:
        rows.append(
            [
                f"{project} wait p50 / p95 (min)",
                *(f"{pct(r.waits[project], 0.5) / 60:.1f} / {pct(r.waits[project], 0.95) / 60:.1f}" for r in results),
            ]
        )
    rows.append(
        [
            f"reclaim latency p50 / max (s; target <= {GRACE_S + args.tick:g})",
            *(
                f"{pct(r.reclaim, 0.5):.0f} / {max(r.reclaim):.0f} (n={len(r.reclaim)})"
                if r.reclaim
                else "- (no quotas)"
                for r in results
            ),
        ]
    )
    rows.append(["GPU-hours lost to preemption", *(f"{r.lost_gpu_s / 3600:.1f}" for r in results)])
    rows.append(["simulation wall time (s)", *(f"{r.seconds:.1f}" for r in results)])
    widths = [max(len(row[c]) for row in [header, *rows]) for c in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    ours, single, newest = results[0], results[2], results[1]
    print(
        f"\nutilization vs single queue: {100 * (ours.busy_gpu_s - single.busy_gpu_s) / fleet_s:+.1f} points; "
        f"lost progress vs newest-first: {ours.lost_gpu_s / max(newest.lost_gpu_s, 1e-9):.2f}x"
    )


if __name__ == "__main__":
    main()
