"""Latency probes of a running compute daemon, through its `Client`.

`benchmarks/compute_bench.py` and the evals (evals/latency.py) measure with these same
probes: launch latency (submit -> the command's first instruction, beside a bare Popen of
the same command) and preemption overhead beyond the victim's grace period.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

from compute.client import Client
from compute.records import JobState
from compute.priority import Priority
from compute.spec import JobSpec, Resources

PRINT_TIME = [sys.executable, "-c", "import time; print(repr(time.time()), flush=True)"]
"""The probed command: prints the time of its first instruction."""
GRACE_S = 1.0
"""The victim's grace period in `preemption_overheads` (a daemon measured with it should use the same)."""


def pct(values: list[float], q: float) -> float:
    """The q-quantile of `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def first_output_time(path: Path) -> float:
    """The time a PRINT_TIME command printed, from its output file."""
    return float(path.read_text().split()[0])


def launch_latencies(client: Client, n: int, workdir: Path) -> tuple[list[float], list[float]]:
    """(bare Popen, job) latencies to the command's first instruction, interleaved so that
    load from other processes on the machine hits both alike."""
    bare, jobs = [], []
    for i in range(n):
        path = workdir / f"bare-{i}.out"
        with open(path, "wb") as fh:
            t0 = time.time()
            subprocess.Popen(PRINT_TIME, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True).wait()
        bare.append(first_output_time(path) - t0)
        t0 = time.time()
        job = client.submit(JobSpec(argv=PRINT_TIME, resources=Resources(gpus=1)))
        client.wait(job.id, timeout=120)
        jobs.append(first_output_time(client.log_path(job.id)) - t0)
    return bare, jobs


def preemption_overheads(client: Client, rounds: int, min_runtime_s: float) -> list[float]:
    """Per round: a high job's start after submit, minus GRACE_S, while a SIGTERM-ignoring low job holds 4 slots."""
    out = []
    stubborn = ["sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"]
    for _ in range(rounds):
        victim = client.submit(JobSpec(argv=stubborn, priority=Priority.low, resources=Resources(gpus=4), grace_s=GRACE_S))
        while client.get(victim.id).state != JobState.running:
            time.sleep(0.01)
        time.sleep(min_runtime_s + 0.1)
        t0 = time.time()
        high = client.submit(JobSpec(argv=["true"], priority=Priority.high, resources=Resources(gpus=4)))
        done = client.wait(high.id, timeout=120)[0]
        out.append(done.attempts[0].started_at - t0 - GRACE_S)
        client.cancel(victim.id)
        client.wait(victim.id, timeout=120)
    return out
