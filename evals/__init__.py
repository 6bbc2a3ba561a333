"""evals: the framework measured against baselines, with the same seeds.

`python -m evals run --suite quick` (minutes) or `--suite full` (the counts docs/benchmarks.md reports).
"""

from evals.checks import CampaignSnapshot, JobEnd, TrialEnd, check_end
from evals.metrics import (
    PairedTest,
    Spread,
    best_so_far,
    paired_wilcoxon,
    regret_at,
    regret_at_time,
    regret_within_steps,
    spread,
    time_curve,
    time_to_target,
    utilization,
)
from evals.records import Arm, FaultKind, RunRecord, TrialPoint
from evals.suites import FULL, QUICK, SUITES, Part, Suite

__all__ = [
    "FULL",
    "QUICK",
    "SUITES",
    "Arm",
    "CampaignSnapshot",
    "FaultKind",
    "JobEnd",
    "PairedTest",
    "Part",
    "RunRecord",
    "Spread",
    "Suite",
    "TrialEnd",
    "TrialPoint",
    "best_so_far",
    "check_end",
    "paired_wilcoxon",
    "regret_at",
    "regret_at_time",
    "regret_within_steps",
    "spread",
    "time_curve",
    "time_to_target",
    "utilization",
]
