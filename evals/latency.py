"""Launch and preemption latency of the compute layer, measured on the eval's daemon with the
compute benchmark's own probes (compute/latency.py)."""

from __future__ import annotations

import statistics
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from compute.latency import GRACE_S, launch_latencies, pct, preemption_overheads
from evals.env import DAEMON, EvalEnv


class Latency(BaseModel):
    """Seconds; launch is submit -> the job's first instruction, beside a bare Popen."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    launch_p50_s: float
    launch_p95_s: float
    popen_p50_s: float
    """The same command started with subprocess.Popen, no daemon (the floor)."""
    preemption_beyond_grace_s: list[float]
    """Per round: a high-priority job's start after submit, minus the victim's grace period."""
    launches: int


def measure(env: EvalEnv, launches: int, rounds: int, workdir: Path) -> Latency:
    """`launches` interleaved launches (after 2 warm-ups) and `rounds` preemptions."""
    assert env.client is not None
    if DAEMON.grace_s != GRACE_S:
        raise ValueError(f"the eval daemon's grace {DAEMON.grace_s} s differs from the probe's {GRACE_S} s")
    workdir.mkdir(parents=True, exist_ok=True)
    launch_latencies(env.client, 2, workdir)
    bare, jobs = launch_latencies(env.client, launches, workdir)
    preempt = preemption_overheads(env.client, rounds, DAEMON.min_runtime_s)
    return Latency(
        launch_p50_s=statistics.median(jobs), launch_p95_s=pct(jobs, 0.95), popen_p50_s=statistics.median(bare),
        preemption_beyond_grace_s=preempt, launches=launches,
    )  # fmt: skip
