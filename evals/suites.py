"""The two suites: `quick` (a smoke-sized measurement, minutes on 2 cores) and `full` (the
counts the claims need: 20 seeds, 100 trials, 20 campaigns per fault)."""

from __future__ import annotations

import enum

from pydantic import BaseModel, ConfigDict


class Part(str, enum.Enum):
    """The sections a suite runs; `--only` picks some."""

    quality = "quality"
    """Random vs plain TPE, in-process objective (the function itself), sequential."""
    stack = "stack"
    """The full stack with the Optuna policy on subprocess jobs, paired with plain TPE."""
    llm = "llm"
    """The full stack with the LLM policy (scripted model unless --llm names a provider)."""
    wallclock = "wallclock"
    """Time to a target regret with 1 and 4 slots: the stack and plain TPE running the same jobs."""
    pruning = "pruning"
    """Median pruning vs none at equal training steps, normal and deceptive curves."""
    robustness = "robustness"
    """Campaigns under each fault type, checked for a correct end."""
    latency = "latency"
    """Compute launch and preemption latency; per-trial overhead beside a plain Optuna loop and Ray Tune."""
    digits = "digits"
    """Real training: the digits MLP, stack vs plain TPE running the same jobs."""


class Suite(BaseModel):
    """How much of everything to run."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    name: str
    checkpoints: tuple[int, ...] = (20, 50, 100)
    """Trial counts where simple regret is reported."""
    functions: tuple[str, ...] = ("branin", "hartmann6")
    """Synthetic functions of the quality, stack and llm parts."""
    quality_seeds: int
    quality_trials: int
    stack_seeds: int
    stack_trials: int
    stack_slots: tuple[int, ...] = (1, 4)
    llm_seeds: int
    llm_trials: int
    llm_slots: int = 4
    wallclock_seeds: int
    wallclock_targets: dict[str, float]
    """Task -> target regret."""
    wallclock_max_trials: int
    wallclock_step_s: float = 0.1
    """Seconds per training step of the wall-clock jobs (5 steps each)."""
    pruning_seeds: int
    pruning_trials: int
    pruning_budgets: tuple[int, ...]
    """Compute budgets, in full-trial equivalents (x 10 steps), where regret is compared."""
    robustness_campaigns: int
    robustness_trials: int = 8
    latency_launches: int
    latency_rounds: int
    latency_peer_trials: int = 0
    """Trials of the campaign benchmark's rows beside peers (benchmarks/campaign_bench.py, Hartmann6,
    4 slots, seed 0): per-trial overhead of the stack, a plain Optuna loop and Ray Tune; 0: none."""
    latency_peers: tuple[str, ...] = ("optuna", "ray-tune")
    """The peer arms of those rows."""
    digits_seeds: int
    digits_trials: int
    digits_epochs: int = 10


QUICK = Suite(
    name="quick",
    quality_seeds=10, quality_trials=100,
    stack_seeds=3, stack_trials=20, stack_slots=(4,),
    llm_seeds=3, llm_trials=20,
    wallclock_seeds=2, wallclock_targets={"branin": 0.5}, wallclock_max_trials=40,
    pruning_seeds=2, pruning_trials=20, pruning_budgets=(6, 12),
    robustness_campaigns=2,
    latency_launches=8, latency_rounds=1, latency_peer_trials=20,
    digits_seeds=1, digits_trials=6,
)  # fmt: skip
"""About 5 minutes on 2 idle cores (10 under heavy load); indicative numbers (few seeds), not
claims. The stack runs at 4 slots only (the 1-slot stack reproduces plain TPE trial for trial:
tests/evals checks it)."""

FULL = Suite(
    name="full",
    quality_seeds=20, quality_trials=100,
    stack_seeds=20, stack_trials=100,
    llm_seeds=10, llm_trials=100,
    wallclock_seeds=10, wallclock_targets={"branin": 0.1, "hartmann6": 0.3}, wallclock_max_trials=100,
    pruning_seeds=10, pruning_trials=40, pruning_budgets=(10, 20),
    robustness_campaigns=20,
    latency_launches=30, latency_rounds=3, latency_peer_trials=100,
    digits_seeds=3, digits_trials=20,
)  # fmt: skip
"""The full counts: what docs/benchmarks.md claims rest on. Hours on 2 shared cores."""

SUITES = {s.name: s for s in (QUICK, FULL)}
