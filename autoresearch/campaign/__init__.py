"""Campaigns: the config, the trial ledger (the `TrialLedger` seam; an Optuna study), trial records
and status."""

from autoresearch.campaign.config import (
    BUILTIN_PLACEHOLDERS,
    Approvals,
    Budget,
    Campaign,
    CodeSettings,
    ComputeSettings,
    MetricSource,
    Metrics,
    Mode,
    Objective,
    ParamSpec,
    Tracking,
)
from autoresearch.campaign.datasets import Dataset
from autoresearch.campaign.failfast import first_line, repeated_failure
from autoresearch.campaign.ledger import FINAL_STATES, CampaignFacts, Ledger, LedgerError, OptunaBacked, TrialLedger
from autoresearch.campaign.loader import ConfigError, ConfigProblem, load_campaign
from autoresearch.campaign.params import CategoricalParam, FloatParam, IntParam, check_params
from autoresearch.campaign.policy_settings import (
    PolicyKind,
    FallbackKind,
    PolicySettings,
    ProviderKind,
    PrunerKind,
    SamplerKind,
    resolve_policy_kind,
)
from autoresearch.campaign.ranking import best_trial, ranked
from autoresearch.campaign.paths import CampaignPaths, campaign_dir, campaigns_root, known_campaigns
from autoresearch.campaign.records import (
    CampaignState,
    Note,
    Proposal,
    TrialFailure,
    TrialRecord,
    TrialState,
)
from autoresearch.campaign.status import (
    BudgetUsed,
    CampaignStatus,
    CampaignStopReason,
    TrialSummary,
    active_seconds,
    campaign_status,
    free_slots,
    stop_reason,
)

__all__ = [
    "BUILTIN_PLACEHOLDERS",
    "FINAL_STATES",
    "Approvals",
    "Budget",
    "BudgetUsed",
    "Campaign",
    "CampaignFacts",
    "CampaignPaths",
    "CampaignState",
    "CampaignStatus",
    "CategoricalParam",
    "CodeSettings",
    "ComputeSettings",
    "ConfigError",
    "ConfigProblem",
    "Dataset",
    "FloatParam",
    "IntParam",
    "Ledger",
    "LedgerError",
    "MetricSource",
    "Metrics",
    "Mode",
    "Note",
    "Objective",
    "OptunaBacked",
    "ParamSpec",
    "PolicyKind",
    "FallbackKind",
    "PolicySettings",
    "Proposal",
    "ProviderKind",
    "PrunerKind",
    "SamplerKind",
    "CampaignStopReason",
    "Tracking",
    "TrialFailure",
    "TrialLedger",
    "TrialRecord",
    "TrialState",
    "TrialSummary",
    "active_seconds",
    "best_trial",
    "campaign_dir",
    "campaign_status",
    "campaigns_root",
    "check_params",
    "first_line",
    "free_slots",
    "known_campaigns",
    "load_campaign",
    "ranked",
    "repeated_failure",
    "resolve_policy_kind",
    "stop_reason",
]
