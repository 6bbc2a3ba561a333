"""`CampaignFacts`: what a ledger knows about its campaign as a whole, besides the config."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign.holdout import HoldoutResult
from autoresearch.campaign.records import Note
from autoresearch.campaign.states import CampaignState

FINAL_STATES = (CampaignState.completed, CampaignState.stopped, CampaignState.failed)
"""Campaign states that end it (a resume may start it again)."""


class CampaignFacts(BaseModel):
    """Campaign-level facts, read with `TrialLedger.facts()` and written only through the ledger."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    started_at: datetime
    """When the campaign first opened its ledger (part of every idempotency key)."""
    state: CampaignState = CampaignState.running
    """Where the campaign is."""
    state_reason: str = ""
    """Why it is in that state (the budget limit reached, who paused it, the runner's error ...)."""
    ended_at: datetime | None = None
    """When it reached a final state; None while it runs or is paused."""
    llm_usd: float = 0.0
    """Dollars spent on LLM calls so far, across restarts (what budget.max_llm_usd is checked against)."""
    llm_usage: dict[str, Any] | None = None
    """The LLM policy's saved usage report (JSON of `autoresearch.llm.UsageReport`): its meter
    starts from it after a restart. None before the first model call."""
    llm_run_id: str | None = None
    """The MLflow run (`llm-policy`) the LLM usage is logged to, once made."""
    mlflow_experiment_id: str | None = None
    """The campaign's MLflow experiment, once the first trial was launched."""
    notes: tuple[Note, ...] = ()
    """The research log, oldest first."""
    active_s: float = 0.0
    """Seconds runners have driven the campaign, summed over its ended runs (idle time between
    runs does not count: this is the `elapsed` that status and the report show)."""
    run_started_at: datetime | None = None
    """When the run in progress began; None between runs (set but no runner alive: it was killed)."""
    holdouts: tuple[HoldoutResult, ...] = ()
    """Hidden-holdout results, one per evaluated trial (never shown to the policy: docs/results.md)."""
