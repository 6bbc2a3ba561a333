"""Campaigns: the config, the trial ledger (an Optuna study), trial records and status."""

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
from autoresearch.campaign.failfast import first_line, repeated_failure
from autoresearch.campaign.ledger import Ledger, LedgerError
from autoresearch.campaign.loader import ConfigError, ConfigProblem, load_campaign
from autoresearch.campaign.params import CategoricalParam, FloatParam, IntParam, check_params
from autoresearch.campaign.policy_settings import (
    PolicyKind,
    PolicySettings,
    PrunerKind,
    ProviderKind,
    SamplerKind,
    resolve_policy_kind,
)
from autoresearch.campaign.paths import campaign_dir, campaigns_root
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
    StopReason,
    TrialSummary,
    campaign_status,
    free_slots,
    stop_reason,
)

__all__ = [
    "BUILTIN_PLACEHOLDERS",
    "Approvals",
    "Budget",
    "BudgetUsed",
    "Campaign",
    "CampaignState",
    "CampaignStatus",
    "CategoricalParam",
    "CodeSettings",
    "ComputeSettings",
    "ConfigError",
    "ConfigProblem",
    "FloatParam",
    "IntParam",
    "Ledger",
    "LedgerError",
    "MetricSource",
    "Metrics",
    "Mode",
    "Note",
    "Objective",
    "ParamSpec",
    "PolicyKind",
    "PolicySettings",
    "Proposal",
    "PrunerKind",
    "ProviderKind",
    "SamplerKind",
    "StopReason",
    "Tracking",
    "TrialFailure",
    "TrialRecord",
    "TrialState",
    "TrialSummary",
    "campaign_dir",
    "campaign_status",
    "campaigns_root",
    "check_params",
    "first_line",
    "free_slots",
    "load_campaign",
    "repeated_failure",
    "resolve_policy_kind",
    "stop_reason",
]
