"""Where a campaign stands: the `CampaignStatus` record (`autoresearch status --json`) and
the budget check that decides when it ends."""

from __future__ import annotations

import enum
import os
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.holdout import HoldoutSummary
from autoresearch.campaign.ledger import CampaignFacts, LedgerReader, TrialLedger
from autoresearch.campaign.paths import CampaignPaths, known_campaigns
from autoresearch.campaign.records import TrialRecord
from autoresearch.campaign.states import CampaignState, TrialFailure, TrialState
from autoresearch.campaign.status_core import Waiting, budget_data, hours_text, overview_data, status_data, store_waiting


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class BudgetUsed(_Record):
    """How much of the budget is spent."""

    trials: int
    """Trials in the ledger, cancelled ones excepted (running and proposed ones included)."""
    gpu_hours: float
    """Hours of GPU slots the trials that ended held (what `budget.max_gpu_hours` counts): GPU-hours
    when `real_gpus`, else slot-hours (virtual slots of a host without GPUs)."""
    real_gpus: bool = False
    """Every ended trial that held slots held physical GPUs (false before any did)."""
    llm_usd: float
    """Dollars spent on LLM calls."""
    elapsed: float
    """Seconds runners have driven the campaign: its runs summed, the live one so far; the hours
    it sat paused, ended or without a runner between runs do not count."""


    def hours_text(self, digits: str = ".2f") -> str:
        """`0.13 slot-hours`, or `0.13 GPU-hours` on physical GPUs."""
        return hours_text(self.gpu_hours, self.real_gpus, digits)


class TrialSummary(_Record):
    """One trial, as `status` shows it."""

    number: int
    state: TrialState
    params: dict[str, Any]
    value: float | None
    """Objective value (complete trials; the last intermediate value for pruned ones)."""
    job_id: str | None
    mlflow_run_id: str | None
    failure_class: TrialFailure | None = None
    """Why it failed (failed trials only)."""
    reason: str | None = None
    """Failed trials: the error (the first line of their log excerpt); cancelled ones: why."""
    confirms: int | None = None
    """A confirmation: the trial (its origin) it re-runs with a new seed."""
    mean: float | None = None
    """Complete origins: the mean of its value and its complete confirmations' values."""
    sd: float | None = None
    """Their sample standard deviation (None with one value)."""
    n: int | None = None
    """How many values `mean` is over (1: not confirmed)."""
    suspect: bool = False
    """Its result may be biased by its hardware (docs/results.md): never declared best unless all are."""
    suspect_reason: str | None = None
    """Why it is suspect: the degradation its node's probes saw, or its speed against its peers'."""
    nodes: list[str] = []
    """The nodes its attempts ran on (empty before its job ended)."""
    suspect_rerun_of: int | None = None
    """The suspect trial it re-runs on another node, if any."""
    waiting_reason: str | None = None
    """A running trial whose job still waits in the compute queue: why (the job's `waiting_reason`);
    None once it runs, or where the compute store was not read (shown as `queued`, not running)."""


class CampaignStatus(_Record):
    """A campaign at a glance; its JSON is what `autoresearch status --json` prints."""

    name: str
    state: CampaignState
    state_reason: str = ""
    """Why it is in that state (why it stopped, completed or failed)."""
    budget_used: BudgetUsed
    best_trial: TrialSummary | None
    """The declared best: the confirmed trial with the best mean over its runs (its confirmations
    included; before any is confirmed, the best complete trial), or None before one completes."""
    runner_up: int | None = None
    """The next trial in the same order (None with fewer than two complete origins)."""
    separable: bool | None = None
    """Whether the best's mean beats the runner-up's by more than 2 sd (the larger of their two
    sample sds); None without a runner-up."""
    trials: list[TrialSummary]
    """Every trial, by number."""
    tracking_pending: int = 0
    """MLflow writes of the campaign not applied yet (its runs and metrics in MLflow are complete
    once this is 0; the campaign's result, in the ledger, is complete already)."""
    tracking_writer_pid: int | None = None
    """The live process applying them (a runner, or the writer a runner left); None: none is
    running, and the next `autoresearch resume NAME` applies them first."""
    holdout: HoldoutSummary | None = None
    """Validation vs the hidden holdout for the evaluated leaders, with their rank correlation and the
    overfitting gap (`objective.holdout`; never shown to the policy)."""


class CampaignStopReason(str, enum.Enum):
    """Why a campaign stops proposing trials."""

    max_trials = "max_trials"
    max_gpu_hours = "max_gpu_hours"
    max_llm_usd = "max_llm_usd"
    deadline = "deadline"
    target_reached = "target_reached"
    confirmed = "confirmed"
    """`confirm:`: the leaders are confirmed and only the reserve for a new leader's confirmations is left."""


def campaign_status(ledger: TrialLedger, now: datetime | None = None, waiting: Waiting | None = None) -> CampaignStatus:
    """The status of the campaign whose ledger this is (`waiting`: see `status_of`)."""
    return status_of(ledger.campaign, ledger.facts(), ledger.trials(), getattr(ledger, "folder", None), now, waiting)


def status_of(
    campaign: Campaign,
    facts: CampaignFacts,
    trials: list[TrialRecord],
    folder: Path | None,
    now: datetime | None = None,
    waiting: Waiting | None = None,
) -> CampaignStatus:
    """The status of a campaign from what its ledger holds (`campaign_status` of a ledger, or of
    a `LedgerSnapshot`'s fields): `status_core.status_data`, the one computation, as the record.
    `folder`: where its runner lock is (None: not looked at); `waiting`: job ids -> why those still
    pending wait (`Client.pending_reasons`), so a running trial whose job waits says why."""
    return CampaignStatus.model_validate(status_data(campaign, facts, trials, folder, now, waiting))


def budget_used(facts: CampaignFacts, trials: list[TrialRecord], now: datetime, *, live: bool) -> BudgetUsed:
    """How much of the budget `trials` and `facts` spent by `now` (`live`: a runner drives the
    campaign now; see `status_core.active_seconds`). The part of a status the runner reads every round."""
    return BudgetUsed.model_validate(budget_data(facts, trials, now, live=live))


def read_status(
    name: str, home: str | os.PathLike[str] | None = None, now: datetime | None = None
) -> tuple[Campaign, CampaignStatus]:
    """Campaign `name`'s config (as it last ran) and status, read straight from its ledger file
    (`LedgerReader`: no Optuna, no SQLAlchemy): what `campaign_status(Ledger.load(name))` gives, in a
    fraction of the time, with the compute queue's word on its running trials (`store_waiting`).
    LedgerError when there is no such campaign or its ledger is lost."""
    reader = LedgerReader(name, home)
    try:
        snapshot = reader.read()
    finally:
        reader.close()
    current = status_of(snapshot.campaign, snapshot.facts, snapshot.trials, snapshot.paths.root, now,
                        store_waiting(home))  # fmt: skip
    return snapshot.campaign, current


def read_overviews(home: str | os.PathLike[str] | None = None) -> list[CampaignOverview]:
    """The `autoresearch status` line of every campaign under `home`, by name (`read_status` each)."""
    lines = []
    for paths in known_campaigns(home):
        campaign, current = read_status(paths.name, home)
        lines.append(overview(campaign, current, paths))
    return lines


class CampaignOverview(_Record):
    """One line of `autoresearch status` without a name."""

    name: str
    state: CampaignState
    trials: int
    """Trials counted against the budget."""
    max_trials: int
    best_value: float | None
    """The declared best's objective value (its mean over its confirmations, when it has some)."""
    runner_pid: int | None
    """The live runner's pid, if one runs the campaign now."""


def overview(campaign: Campaign, current: CampaignStatus, paths: CampaignPaths) -> CampaignOverview:
    """The `autoresearch status` line of the campaign whose config, status and folder these are."""
    return CampaignOverview.model_validate(overview_data(campaign, current.model_dump(mode="json"), paths))


def stop_reason(
    campaign: Campaign,
    used: BudgetUsed,
    best_value: float | None,
    started_at: datetime,
    now: datetime | None = None,
) -> CampaignStopReason | None:
    """The first budget limit reached (or the target), or None to go on proposing."""
    now = now or datetime.now(UTC)
    budget = campaign.budget
    deadline = budget.deadline_at(started_at)
    if campaign.objective.reached(best_value):
        return CampaignStopReason.target_reached
    if used.trials >= budget.max_trials:
        return CampaignStopReason.max_trials
    if budget.max_gpu_hours is not None and used.gpu_hours >= budget.max_gpu_hours:
        return CampaignStopReason.max_gpu_hours
    if budget.max_llm_usd is not None and used.llm_usd >= budget.max_llm_usd:
        return CampaignStopReason.max_llm_usd
    if deadline is not None and now >= deadline:
        return CampaignStopReason.deadline
    return None


def free_slots(campaign: Campaign, trials: list[TrialRecord]) -> int:
    """How many new trials to propose now: idle parallel slots, capped by the trials left in the budget.

    Proposed-but-unlaunched trials hold a slot: launch those first (after a crash, too).
    """
    active = sum(t.state in (TrialState.proposed, TrialState.running) for t in trials)
    counted = sum(t.state is not TrialState.cancelled for t in trials)
    return max(0, min(campaign.budget.max_parallel - active, campaign.budget.max_trials - counted))
