"""Benchmark the compute layer; prints one table.

    python benchmarks/compute_bench.py [--backend local|ray|both] [--quick]

With `--backend ray` the jobs run through the Ray backend on a one-node Ray cluster this
script starts (4 logical GPUs, 2 CPUs, private RAY_TMPDIR); `both` measures local and
Ray one after the other and prints them side by side.

- launch: submit -> the command's first instruction, p50/p95, beside a bare Popen of
  the same command (a Python one-liner that prints time.time()); ratio of p50s.
- makespan: N short jobs (`sleep 0.2`, 1 GPU each) on 4 slots, from the first submit to
  the last exit, beside the ideal ceil(N/4) x the command's bare run time.
- preemption: a high-priority job submitted while a low-priority job that ignores SIGTERM
  holds every slot; time to the high job's start minus the victim's grace period.
- scheduling pass: one call of `compute.scheduler.schedule` over 10,000 pending jobs
  (random priorities, 1-8 GPUs) and 1,000 nodes of 8 GPUs, median of 5: once on an idle
  cluster, once with 4,000 running attempts (half the slots, random priorities, 80%
  preemptible), where blocked jobs search for victims; the baseline column is the same pass
  without the bound on attempts stopped per pass (`preempt_max_victims=0`, 2,500 preemptions).
- gang pass: the same over 2,000 pending gangs of 2-8 nodes (1-8 GPUs per node) and 1,000
  nodes of 8 GPUs, idle and with 4,000 running attempts.
- 50 projects: the scheduling pass again, its jobs and attempts spread over 50 projects whose
  quotas cover 80% of the fleet (quotas, borrowing, fair share; with attempts running, reclaim).
`--passes-only` prints only the scheduling-pass rows (no daemon is started).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compute import (  # noqa: E402
    DEFAULT_PROJECT, Client, DaemonConfig, JobSpec, JobState, NodeView, PendingJob, ProjectView, RunningAttempt,
    SchedulerConfig, schedule, start_daemon, stop_daemon,
)
from compute.latency import GRACE_S, launch_latencies, pct, preemption_overheads  # noqa: E402

SHORT = ["sleep", "0.2"]


def bare_runtime(argv: list[str], n: int = 5) -> float:
    runs = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def makespan(client: Client, n: int, slots: int) -> tuple[float, float]:
    ideal = math.ceil(n / slots) * bare_runtime(SHORT)
    t0 = time.time()
    ids = [client.submit(JobSpec(argv=SHORT, resources={"gpus": 1})).id for _ in range(n)]
    jobs = client.wait(ids, timeout=600)
    assert all(j.state == JobState.succeeded for j in jobs), "some makespan jobs failed"
    return max(j.attempts[-1].ended_at for j in jobs) - t0, ideal


def pass_inputs(pending_n: int = 10_000, nodes_n: int = 1_000, gpus_per_node: int = 8, running_n: int = 4_000,
                gangs: bool = False, projects_n: int = 0) -> tuple[list[PendingJob], list[RunningAttempt],
                                                                   list[NodeView], float, list[ProjectView]]:
    """One benchmark state: (pending, running, nodes, now, projects); `gangs`: the pending jobs span 2-8
    nodes each; with `projects_n`, jobs and attempts spread over that many projects whose quotas cover
    80% of the fleet (random weights and usage; every 5th does not lend)."""
    rng = random.Random(7)
    names = [f"proj{i:02d}" for i in range(projects_n)]
    quota = int(0.8 * nodes_n * gpus_per_node / projects_n) if projects_n else 0
    projects = [ProjectView(n, quota, rng.uniform(0.5, 2.0), lend=i % 5 != 0, usage=rng.uniform(0, 3.6e6))
                for i, n in enumerate(names)]

    def project(k: int) -> str:
        return names[k % projects_n] if projects_n else DEFAULT_PROJECT

    now = 1_000_000.0
    nodes = [NodeView(f"n{i:04d}", tuple(range(i * gpus_per_node, (i + 1) * gpus_per_node))) for i in range(nodes_n)]
    running = []
    for k in range(running_n):
        node = nodes[k % nodes_n]
        slot = node.gpus[k // nodes_n]
        running.append(RunningAttempt(f"r{k}", 1, node.name, (slot,), rng.randint(0, 100), rng.random() < 0.8,
                                      now - rng.uniform(0, 3600), project=project(k),
                                      checkpoint_at=now - rng.uniform(0, 1800)))
    pending = [PendingJob(f"p{k}", rng.randint(0, 100), rng.choice([1, 1, 2, 4, 8]), k, now - rng.uniform(0, 3600),
                          nodes=rng.randint(2, 8) if gangs else 1, project=project(k))
               for k in range(pending_n)]
    return pending, running, nodes, now, projects


def scheduling_pass_ms(config: SchedulerConfig = SchedulerConfig(), **case: Any) -> float:
    """Median of 5 passes over `pass_inputs(**case)`."""
    pending, running, nodes, now, projects = pass_inputs(**case)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        schedule(pending, running, nodes, now, config, projects)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


@contextlib.contextmanager
def ray_cluster(tmp: Path, gpus: int = 4) -> Iterator[str]:
    """A one-node Ray cluster with `gpus` logical GPUs, in a private RAY_TMPDIR; yields its address."""
    os.environ.update(RAY_TMPDIR=str(tmp / "ray"), RAY_AUTH_MODE="disabled")
    (tmp / "ray").mkdir()
    from ray.cluster_utils import Cluster

    head = {"num_cpus": 2, "num_gpus": gpus, "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    try:
        yield cluster.address
    finally:
        cluster.shutdown()


def measure(home: Path, workdir: Path, settings: dict[str, Any], launches: int, jobs_n: int, rounds: int,
            min_runtime: float) -> dict[str, Any]:
    """Launch latencies, makespan and preemption overhead of one daemon with `settings`."""
    start_daemon(home, DaemonConfig(grace_s=GRACE_S, min_runtime_s=min_runtime, tick_s=1.0, **settings), wait_s=120)
    client = Client(home, autostart=False)
    try:
        launch_latencies(client, 2, workdir)  # warm up caches (and the node's first health probe)
        bare, lat = launch_latencies(client, launches, workdir)
        span, ideal = makespan(client, jobs_n, 4)
        preempt = preemption_overheads(client, rounds, min_runtime)
    finally:
        client.close()
        stop_daemon(home, stop_jobs=True)
    return {"bare": bare, "lat": lat, "span": span, "ideal": ideal, "preempt": preempt}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["local", "ray", "both"], default="local",
                        help="Backend to run jobs on; `both` prints local and ray side by side.")
    parser.add_argument("--quick", action="store_true", help="Fewer repetitions (about 30 s per backend).")
    parser.add_argument("--passes-only", action="store_true", help="Only the scheduling-pass rows (no daemon).")
    args = parser.parse_args()
    if args.passes_only:
        print_table(("metric", "pure function", "baseline", "target"), pass_rows(1))
        return
    launches, jobs_n, rounds = (8, 40, 1) if args.quick else (30, 200, 3)
    min_runtime = 0.5
    backends = ["local", "ray"] if args.backend == "both" else [args.backend]
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="ar-bench-") as tmp:
        for name in backends:
            work = Path(tmp) / name
            work.mkdir()
            if name == "ray":
                with ray_cluster(work) as address:
                    settings = {"backend": "ray", "ray_address": address}
                    results[name] = measure(work / "home", work, settings, launches, jobs_n, rounds, min_runtime)
            else:
                results[name] = measure(work / "home", work, {"gpus": 4}, launches, jobs_n, rounds, min_runtime)

    def cells(fmt: Any) -> list[str]:
        return [fmt(r) for r in results.values()]

    first = next(iter(results.values()))
    rows = [
        ("launch p50 (submit -> running)", *cells(lambda r: f"{pct(r['lat'], .5) * 1000:.1f} ms "
                                                  f"({pct(r['lat'], .5) / pct(r['bare'], .5):.2f}x)"),
         f"Popen {pct(first['bare'], .5) * 1000:.1f} ms", "<= 1.3x (local)"),
        ("launch p95", *cells(lambda r: f"{pct(r['lat'], .95) * 1000:.1f} ms "
                                        f"({pct(r['lat'], .95) / pct(r['bare'], .95):.2f}x)"),
         f"Popen {pct(first['bare'], .95) * 1000:.1f} ms", ""),
        (f"makespan {jobs_n} x sleep 0.2 on 4 slots",
         *cells(lambda r: f"{r['span']:.2f} s ({r['span'] / r['ideal']:.2f}x)"),
         f"ideal {first['ideal']:.2f} s", "<= 1.15x (local)"),
        ("preemption: start beyond grace", *cells(lambda r: f"{max(r['preempt']):.3f} s (max of {rounds})"),
         f"grace {GRACE_S:g} s", "<= 0.5 s"),
        *pass_rows(len(results)),
    ]
    print(f"backends: {', '.join(results)}{' (quick)' if args.quick else ''}")
    print_table(("metric", *results, "baseline", "target"), rows)


PASS_CASES: list[tuple[str, dict[str, Any]]] = [
    ("scheduling pass 10k pending, 1k idle nodes", {"running_n": 0}),
    ("same, 4k attempts running", {"running_n": 4_000}),
    ("gang pass 2k gangs of 2-8 nodes, 1k idle nodes", {"pending_n": 2_000, "running_n": 0, "gangs": True}),
    ("same, 4k attempts running", {"pending_n": 2_000, "running_n": 4_000, "gangs": True}),
    ("10k pending, 1k idle nodes, 50 projects (quotas, borrowing, fair share)", {"running_n": 0, "projects_n": 50}),
    ("same, 4k attempts running (reclaim)", {"running_n": 4_000, "projects_n": 50}),
]
"""The scheduling-pass rows: (name, `pass_inputs` arguments); benchmarks/sched_equivalence.py runs them too."""


def pass_rows(columns: int) -> list[tuple[str, ...]]:
    """The pure scheduling-pass rows (the same value in every backend column); the baseline column
    is the same pass without the bound on attempts stopped per pass (`preempt_max_victims=0`)."""
    unbounded = SchedulerConfig(preempt_max_victims=0)
    rows = []
    for name, kw in PASS_CASES:
        ours = scheduling_pass_ms(**kw)
        base = f"{scheduling_pass_ms(**kw, config=unbounded):.1f} ms unbounded" if kw["running_n"] else ""
        rows.append((name, *[f"{ours:.1f} ms"] * columns, base, "<= 50 ms"))
    return rows


def print_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


if __name__ == "__main__":
    main()
