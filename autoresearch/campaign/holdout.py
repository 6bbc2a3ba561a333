"""A hidden holdout: an evaluation the policy never sees, run for the leaders, to measure how much
the campaign overfit its validation metric.

`objective.holdout: {command, metric, every, top_k}` declares it. The runner runs the command as
a job of its own (never the trial's job) once the campaign completes, for the `top_k` best
complete trials (`every: true`: for every complete trial, submitted as each completes), and keeps
each result as a `HoldoutResult` in the ledger's facts (`CampaignFacts.holdouts`), apart from the
trial records: every view the policy gets of a trial is built from a `TrialRecord`, which has no
holdout field, so no tool, prompt or research-log entry can carry it. Status, the report, the UI
and MLflow (`holdout/<metric>` on the trial's run) show it to people, with `HoldoutSummary`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign.ranking import declared_ranking, ranked
from autoresearch.campaign.holdout_stats import holdout_data, spearman

if TYPE_CHECKING:
    from autoresearch.campaign.config import Campaign
    from autoresearch.campaign.records import TrialRecord


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class HoldoutResult(_Record):
    """The holdout evaluation of one trial (kept in the ledger's facts, never in a `TrialRecord`)."""

    trial: int
    """The trial evaluated."""
    job_id: str
    """The holdout's own job (not the trial's)."""
    value: float | None = None
    """The holdout metric; None when the job failed or printed no finite value (see `error`)."""
    error: str = ""
    """Why there is no value."""


class HoldoutRow(_Record):
    """A leader's validation value beside its holdout value."""

    trial: int
    validation: float
    """The objective value the campaign (and the policy) judged it by."""
    holdout: float | None
    """The holdout metric (None: see `error`)."""
    error: str = ""


class HoldoutSummary(_Record):
    """Validation vs holdout for the evaluated trials: how much the campaign overfit."""

    metric: str
    """The holdout metric."""
    rows: list[HoldoutRow]
    """The evaluated trials, best validation value first."""
    spearman: float | None
    """Rank correlation of validation and holdout values (None under 2 pairs, or a constant side)."""
    gap: float | None
    """The overfitting gap: mean validation minus mean holdout over the rows with both, signed by
    the mode so that a positive gap means validation flatters (holdout worse)."""


def holdout_summary(campaign: Campaign, trials: Iterable[TrialRecord],
                    results: Sequence[HoldoutResult]) -> HoldoutSummary | None:
    """The summary of `results`, or None when the campaign has no holdout or no result yet
    (`status_core.holdout_data`, as the record)."""
    data = holdout_data(campaign, trials, results)
    return None if data is None else HoldoutSummary.model_validate(data)


def render_holdout(campaign: Campaign, params: Mapping[str, Any], trial_number: int, *, seed_of: int,
                   trial_dir: Path, checkpoint_dir: Path) -> list[str]:
    """The holdout job's argv for one trial (the placeholders of `Campaign.render_command`, plus
    `{checkpoint_dir}`)."""
    holdout = campaign.objective.holdout
    assert holdout is not None
    values = {**params, "trial": trial_number, "seed": campaign.trial_seed(seed_of), "campaign": campaign.name,
              "trial_dir": str(trial_dir), "checkpoint_dir": str(checkpoint_dir)}  # fmt: skip
    return [item.format_map(values) for item in holdout.command]


def leaders(campaign: Campaign, trials: Iterable[TrialRecord]) -> list[TrialRecord]:
    """The trials the holdout evaluates at the end: every complete one (`every`), else the `top_k`
    best; with `confirm:`, the `top_k` first origins of the order the winner is declared in
    (`ranking.declared_ranking`: confirmed means first, no suspect)."""
    holdout = campaign.objective.holdout
    if holdout is None:
        return []
    trials = list(trials)
    best = ranked(trials, campaign.objective)
    if holdout.every:
        return best
    if campaign.confirm is not None:
        by_number = {t.number: t for t in trials}
        return [by_number[s.trial] for s in declared_ranking(trials, campaign)[: holdout.top_k]]
    return best[: holdout.top_k]


__all__ = ["HoldoutResult", "HoldoutRow", "HoldoutSummary", "holdout_summary", "leaders", "render_holdout", "spearman"]
