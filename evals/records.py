"""What one eval run records: its trials, in proposal order, with when each ended."""

from __future__ import annotations

import enum

from pydantic import BaseModel, ConfigDict, Field


class Arm(str, enum.Enum):
    """Who proposes the trials, and through what."""

    random = "random"
    """Optuna's RandomSampler, in-process objective (the function itself)."""
    plain_tpe = "plain-tpe"
    """Plain Optuna TPE with pinned settings, in-process objective, no autoresearch code."""
    plain_tpe_jobs = "plain-tpe-jobs"
    """Plain Optuna TPE with pinned settings running the same job.py subprocesses from threads."""
    stack_optuna = "stack-optuna"
    """The full stack (runner graph, ledger, MLflow, compute daemon, subprocess jobs), Optuna policy."""
    stack_llm = "stack-llm"
    """The full stack with the LLM policy (a scripted model, or a real provider when one is given)."""


class FaultKind(str, enum.Enum):
    """The faults a robustness campaign is put through."""

    crash = "crash"
    """Each job crashes with p=0.1 (a traceback, exit 1)."""
    hang = "hang"
    """Each job wedges with p=0.1 (ignores SIGTERM); the per-attempt time limit must end it."""
    nan = "nan"
    """Each job's metric turns NaN with p=0.1 (the job's nan guard exits 3)."""
    worker_kill = "worker-kill"
    """Running job processes are SIGKILLed from outside (one in three jobs)."""
    runner_kill = "runner-kill"
    """The campaign runner process is SIGKILLed mid-campaign, then the campaign is resumed."""


class TrialPoint(BaseModel):
    """One trial of a run."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    number: int
    """Proposal order (0, 1, 2 ...)."""
    state: str
    """complete, pruned, failed or cancelled."""
    value: float | None = None
    """Its objective value, complete trials only."""
    ended_s: float | None = None
    """Seconds from the run's start to the trial's end."""
    steps: int = 0
    """Training steps it ran (`step:` / `epoch:` lines in its job's output; 0 for in-process runs)."""


class RunRecord(BaseModel):
    """One run of one arm on one task with one seed."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    part: str = ""
    """The suite part that ran it (quality, stack, llm, wallclock, pruning, digits)."""
    arm: Arm
    task: str
    """branin, hartmann6, branin-deceptive, digits ..."""
    seed: int
    slots: int = 1
    """Trials run at the same time."""
    pruner: str = "none"
    target_regret: float | None = None
    """The run stopped once this regret was reached (None: it ran its whole trial budget)."""
    wall_s: float
    """Seconds from the first proposal to the end of the run."""
    busy_s: float | None = None
    """Seconds job processes ran, summed over attempts (subprocess arms)."""
    useful_s: float | None = None
    """Training-step seconds: steps run x step time (subprocess arms with a known step time)."""
    trials: list[TrialPoint] = Field(default_factory=list)

    @property
    def values(self) -> list[float | None]:
        return [t.value for t in self.trials]

    @property
    def ends(self) -> list[float | None]:
        return [t.ended_s for t in self.trials]
