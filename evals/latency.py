"""Launch and preemption latency of the compute layer, measured on the eval's daemon with the
compute benchmark's own probes (compute/latency.py); and per-trial overhead of the whole stack
beside a plain Optuna loop and Ray Tune on the same jobs (benchmarks/campaign_bench.py, run as a script)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from compute.latency import GRACE_S, launch_latencies, pct, preemption_overheads
from evals.env import DAEMON, SLOTS, EvalEnv

CAMPAIGN_BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "campaign_bench.py"
"""The peer benchmark: a script of the repository (not installed), run in a subprocess."""


class PeerRow(BaseModel):
    """One arm of the campaign benchmark (Hartmann6, TPE, seed 0, `SLOTS` in parallel)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    arm: str
    """autoresearch, optuna (a plain loop, one thread per slot) or ray-tune (Tuner + OptunaSearch)."""
    trials: int
    """Trials that completed (all of them, or the benchmark raises)."""
    wall_s: float
    """First proposal -> last result."""
    regret: float
    """Simple regret of the best trial."""
    per_trial_overhead_ms: float
    """(wall clock - ideal makespan of the arm's own job durations on the slots) / trials."""
    refill_gap_ms: float
    """Median job end -> start of the job that takes its slot."""


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
    peers: list[PeerRow] = []
    """Per-trial overhead of the stack and its peers; empty when the suite asks for none."""


def measure(env: EvalEnv, launches: int, rounds: int, workdir: Path, peers: Sequence[str] = (),
            peer_trials: int = 0) -> Latency:  # fmt: skip
    """`launches` interleaved launches (after 2 warm-ups), `rounds` preemptions, and with
    `peer_trials` one seed of the campaign benchmark through the stack and `peers`."""
    assert env.client is not None
    if DAEMON.grace_s != GRACE_S:
        raise ValueError(f"the eval daemon's grace {DAEMON.grace_s} s differs from the probe's {GRACE_S} s")
    workdir.mkdir(parents=True, exist_ok=True)
    launch_latencies(env.client, 2, workdir)
    bare, jobs = launch_latencies(env.client, launches, workdir)
    preempt = preemption_overheads(env.client, rounds, DAEMON.min_runtime_s)
    rows = peer_rows(peers, peer_trials) if peer_trials else []
    return Latency(
        launch_p50_s=statistics.median(jobs), launch_p95_s=pct(jobs, 0.95), popen_p50_s=statistics.median(bare),
        preemption_beyond_grace_s=preempt, launches=launches, peers=rows,
    )  # fmt: skip


def peer_rows(peers: Sequence[str], trials: int) -> list[PeerRow]:
    """One seed of `benchmarks/campaign_bench.py --json` (its own daemon and home) through the
    stack and `peers`; raises with the script's stderr when it fails."""
    argv = [sys.executable, str(CAMPAIGN_BENCH), "--trials", str(trials), "--seeds", "1", "--parallel", str(SLOTS),
            "--peers", ",".join(peers), "--json"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
    return [PeerRow(arm=r["arm"], trials=r["completed"], wall_s=r["wall_s"], regret=r["regret"],
                    per_trial_overhead_ms=r["per_trial_overhead_ms"], refill_gap_ms=r["refill_gap_ms"])
            for r in json.loads(done.stdout)["rows"]]  # fmt: skip
