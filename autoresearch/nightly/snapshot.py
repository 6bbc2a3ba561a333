"""Per-night snapshots: where each campaign stood when a night ended, to diff the next one against.

`$AUTORESEARCH_HOME/nightly/snapshots/<night id>.json`; the night id is the local start time
(`2026-11-30T22-00-05`), so several nights a day (tests, reruns) stay apart and sort in order.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from autoresearch.campaign import Ledger, TrialState, campaign_status


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class CampaignSnapshot(_Record):
    """One campaign at the end of a night."""

    name: str
    state: str
    """The campaign's state (running, paused, completed ...)."""
    reason: str = ""
    trials: int
    """Trials counted against the budget (cancelled ones excepted)."""
    complete: int
    max_trials: int
    best_number: int | None = None
    best_value: float | None = None
    best_params: dict[str, object] = Field(default_factory=dict)
    gpu_hours: float
    """Hours of GPU slots all the campaign's ended trials held so far (GPU-hours when `real_gpus`)."""
    real_gpus: bool = False
    """Those slots were physical GPUs (else slot-hours: virtual slots)."""
    failures: dict[str, int] = Field(default_factory=dict)
    """Failure class -> failed trials so far."""


class NightSnapshot(_Record):
    """Every campaign of one night."""

    night: str
    """The night id (its local start time)."""
    campaigns: dict[str, CampaignSnapshot] = Field(default_factory=dict)


def snapshot_campaign(ledger: Ledger) -> CampaignSnapshot:
    status = campaign_status(ledger)
    trials = ledger.trials()
    best = ledger.best()
    failures = Counter(t.failure_class.value for t in trials if t.state is TrialState.failed and t.failure_class)
    return CampaignSnapshot(
        name=ledger.campaign.name, state=ledger.state.value, reason=ledger.state_reason,
        trials=status.budget_used.trials, complete=sum(t.state is TrialState.complete for t in trials),
        max_trials=ledger.campaign.budget.max_trials, best_number=best.number if best else None,
        best_value=best.value if best else None, best_params=dict(best.params) if best else {},
        gpu_hours=status.budget_used.gpu_hours, real_gpus=status.budget_used.real_gpus, failures=dict(failures),
    )  # fmt: skip


def snapshots_dir(home: str | os.PathLike[str] | None) -> Path:
    from compute import resolve_home

    return resolve_home(home) / "nightly" / "snapshots"


def save_snapshot(snapshot: NightSnapshot, home: str | os.PathLike[str] | None) -> Path:
    folder = snapshots_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{snapshot.night}.json"
    path.write_text(snapshot.model_dump_json(indent=2))
    return path


def previous_snapshot(night: str, home: str | os.PathLike[str] | None) -> NightSnapshot | None:
    """The latest snapshot of a night before `night`, if any."""
    earlier = sorted(p for p in snapshots_dir(home).glob("*.json") if p.stem < night)
    return NightSnapshot.model_validate_json(earlier[-1].read_text()) if earlier else None
