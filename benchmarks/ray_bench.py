"""Ray at local speed: our Ray backend beside the local backend and plain Ray tasks, in one run.

    python benchmarks/ray_bench.py [--jobs 200] [--rounds 1]

Starts a Ray cluster of 2 nodes on this machine (ray.cluster_utils.Cluster: a head and one
worker, 2 logical GPUs and 2 CPUs each, a private RAY_TMPDIR), then measures the makespan
(first submit -> last exit) of N jobs of 1 GPU each on the 4 slots, for two commands:

- `true`: the per-attempt overhead (target: ours on Ray within 2x the local backend);
- `sleep 0.1`: ours on Ray against the same commands as plain Ray tasks (`num_gpus=1`, each a
  `subprocess.run` of the command on whichever node Ray picks, `max_calls=0` so that Ray reuses
  its worker processes as it does for CPU tasks; target: the same makespan).

Rows: each case, with ours (ray), the local backend (`--gpus 4`) and plain Ray tasks, and the
ratios ray/local and ray/plain. Each cell is the median of `--rounds` runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compute import Client, DaemonConfig, JobSpec, JobState, start_daemon, stop_daemon  # noqa: E402

CASES = [("true", ["true"]), ("sleep 0.1", ["sleep", "0.1"])]


def ours(home: Path, settings: dict[str, Any], argv: list[str], n: int) -> float:
    """Makespan of `n` jobs of `argv` (1 GPU each) on a daemon with `settings` (started here, warmed up)."""
    start_daemon(home, DaemonConfig(**settings), wait_s=180)
    client = Client(home, autostart=False)
    try:
        warm = [client.submit(JobSpec(argv=["true"], resources={"gpus": 1})).id for _ in range(8)]
        client.wait(warm, timeout=300)
        t0 = time.time()
        ids = [client.submit(JobSpec(argv=argv, resources={"gpus": 1})).id for _ in range(n)]
        jobs = client.wait(ids, timeout=900)
        assert all(j.state == JobState.succeeded for j in jobs), "some jobs failed"
        return max(j.attempts[-1].ended_at or t0 for j in jobs) - t0
    finally:
        client.close()
        stop_daemon(home, stop_jobs=True)


def plain_ray(address: str, argv: list[str], n: int) -> float:
    """Makespan of `n` plain Ray tasks (num_gpus=1) each running `argv` as a subprocess."""
    import ray

    @ray.remote(num_gpus=1, num_cpus=0, max_retries=0, max_calls=0)  # reuse workers (GPU tasks default to 1 call)
    def run(cmd: list[str]) -> float:
        subprocess.run(cmd, check=True)
        return time.time()

    ray.init(address=address, log_to_driver=False, configure_logging=False)
    try:
        ray.get([run.remote(["true"]) for _ in range(8)])  # warm: worker processes started
        t0 = time.time()
        ends = ray.get([run.remote(argv) for _ in range(n)])
        return max(ends) - t0
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200, help="Jobs per case (default 200).")
    parser.add_argument("--rounds", type=int, default=1, help="Runs per cell; the median is shown.")
    args = parser.parse_args()
    results: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="ar-raybench-", dir="/tmp") as tmp:
        os.environ.update(RAY_TMPDIR=str(Path(tmp) / "ray"), RAY_AUTH_MODE="disabled")
        os.environ.pop("RAY_ADDRESS", None)
        (Path(tmp) / "ray").mkdir()
        from ray.cluster_utils import Cluster

        repo = str(Path(__file__).resolve().parent.parent)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH")]))
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "num_gpus": 2,
                                                                "include_dashboard": False})
        cluster.add_node(num_cpus=2, num_gpus=2)
        try:
            for r in range(args.rounds):
                for case, argv in CASES:
                    for name, settings in (("ray", {"backend": "ray", "ray_address": cluster.address}),
                                           ("local", {"gpus": 4})):
                        home = Path(tmp) / f"{name}-{case.replace(' ', '')}-{r}"
                        results.setdefault((case, name), []).append(ours(home, settings, argv, args.jobs))
                    results.setdefault((case, "plain"), []).append(plain_ray(cluster.address, argv, args.jobs))
        finally:
            cluster.shutdown()
    load = os.getloadavg()[0]
    print(f"{args.jobs} jobs of 1 GPU on 4 slots over 2 Ray nodes, median of {args.rounds}; load {load:.1f}")
    header = ("case", "ours (ray)", "local backend", "plain Ray tasks", "ray / local", "ray / plain")
    rows = []
    for case, _ in CASES:
        ray_s, local_s, plain_s = (statistics.median(results[(case, k)]) for k in ("ray", "local", "plain"))
        rows.append((f"{args.jobs} x {case}", f"{ray_s:.2f} s", f"{local_s:.2f} s", f"{plain_s:.2f} s",
                     f"{ray_s / local_s:.2f}x", f"{ray_s / plain_s:.2f}x"))
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


if __name__ == "__main__":
    main()
