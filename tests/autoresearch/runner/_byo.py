"""Campaigns on tests/autoresearch/runner/jobs/byo_job.py, a script in log styles we did not write."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from autoresearch.campaign import Campaign
from tracking import TrackingConfig

JOBS = Path(__file__).resolve().parent / "jobs"
NANOGPT_PATTERNS = [
    r"step (?P<step>\d+): train loss (?P<train_loss>[-+.\deE]+), val loss (?P<val_loss>[-+.\deE]+)",
    r"iter (?P<iter>\d+): loss (?P<loss>[-+.\deE]+)",
]


def byo_config(tracking: TrackingConfig, fmt: str, *, steps: int = 4, step_seconds: float = 0.0,
               command: list[str] | None = None, **overrides: Any) -> dict[str, Any]:
    """A campaign over `--x` in [-1, 1] (the last val_loss is x^2 + 1/steps), as campaign.yaml holds it."""
    data: dict[str, Any] = {
        "name": f"byo-{fmt}-{uuid.uuid4().hex[:8]}",
        "command": command or ["python", "byo_job.py", "--format", fmt, "--x", "{x}", "--steps", str(steps),
                               "--step-seconds", str(step_seconds), "--out-dir", "{trial_dir}/out"],
        "cwd": str(JOBS),
        "objective": {"metric": "val_loss", "mode": "min"},
        "search_space": {"x": {"type": "float", "low": -1.0, "high": 1.0}},
        "budget": {"max_trials": 2, "max_parallel": 2},
        "policy": {"kind": "optuna", "seed": 1, "pruner": "none"},
        "tracking": {"uri": tracking.tracking_uri},
    }  # fmt: skip
    for key, value in overrides.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) and key in data else value
    return data


def campaign_of(data: dict[str, Any]) -> Campaign:
    return Campaign.model_validate(data, context={"base_dir": JOBS})


def last_val_loss(x: float, steps: int) -> float:
    return round(x**2 + 1.0 / steps, 4)
