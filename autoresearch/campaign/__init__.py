"""Campaigns: the config, the trial ledger (the `TrialLedger` seam; an Optuna study), trial records
and status. Names are imported on first use (PEP 562): `from autoresearch.campaign import CampaignPaths`
loads the paths, not the config models, Optuna or SQLAlchemy, so a reader that needs little (the
dashboard, `autoresearch status`) pays for little."""

import typing as _typing

from compute.lazy_exports import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from autoresearch.campaign.config import (
        BUILTIN_PLACEHOLDERS, Approvals, Budget, Campaign, CodeSettings, ComputeSettings, MetricSource, Metrics,
        Mode, Objective, ParamSpec, Tracking,
    )
    from autoresearch.campaign.confirm_settings import ConfirmSettings, ConfirmWhen
    from autoresearch.campaign.confirmation import confirmations_due, confirmed_early, exploration_room
    from autoresearch.campaign.standing import Standing, declared_order, mean_text, separable, standings, winner_text
    from autoresearch.campaign.changes import config_changes, refused_change
    from autoresearch.campaign.datasets import Dataset
    from autoresearch.campaign.failfast import first_line, fruitless, repeated_failure
    from autoresearch.campaign.holdout import HoldoutResult, HoldoutSummary, holdout_summary
    from autoresearch.campaign.holdout_stats import holdout_line
    from autoresearch.campaign.holdout_settings import Holdout
    from autoresearch.campaign.ledger.facts import FINAL_STATES, CampaignFacts
    from autoresearch.campaign.ledger.optuna_ledger import Ledger
    from autoresearch.campaign.errors import LedgerError
    from autoresearch.campaign.ledger._base import OptunaBacked, TrialLedger
    from autoresearch.campaign.ledger._sqlite_reader import LedgerReader, LedgerSnapshot
    from autoresearch.campaign.loader import ConfigError, ConfigProblem, load_campaign
    from autoresearch.campaign.params import CategoricalParam, FloatParam, IntParam, check_params
    from autoresearch.campaign.policy_settings import (
        PolicyKind, FallbackKind, PolicySettings, ProviderKind, SamplerKind, resolve_policy_kind,
    )
    from autoresearch.campaign.pruner_settings import PrunerKind, PrunerSettings
    from autoresearch.campaign.aggregate import Aggregate, AggregateKind, resolve_aggregate
    from autoresearch.campaign.ranking import best_trial, declared_ranking, ranked
    from autoresearch.campaign.paths import CampaignPaths, campaign_dir, campaigns_root, known_campaigns
    from autoresearch.campaign.records import Note, Proposal, TrialRecord
    from autoresearch.campaign.states import CampaignState, TrialFailure, TrialState
    from autoresearch.campaign.status import (
        BudgetUsed, CampaignOverview, CampaignStatus, CampaignStopReason, TrialSummary, budget_used, campaign_status,
        free_slots, overview, read_overviews, read_status, status_of, stop_reason,
    )
    from autoresearch.campaign.status_core import active_seconds, hours_unit, on_real_gpus

_WHERE = {
    "BUILTIN_PLACEHOLDERS": "autoresearch.campaign.config",
    "Approvals": "autoresearch.campaign.config",
    "Budget": "autoresearch.campaign.config",
    "Campaign": "autoresearch.campaign.config",
    "CodeSettings": "autoresearch.campaign.config",
    "ComputeSettings": "autoresearch.campaign.config",
    "MetricSource": "autoresearch.campaign.config",
    "Metrics": "autoresearch.campaign.config",
    "Mode": "autoresearch.campaign.config",
    "Objective": "autoresearch.campaign.config",
    "ParamSpec": "autoresearch.campaign.config",
    "Tracking": "autoresearch.campaign.config",
    "ConfirmSettings": "autoresearch.campaign.confirm_settings",
    "ConfirmWhen": "autoresearch.campaign.confirm_settings",
    "Standing": "autoresearch.campaign.standing",
    "confirmations_due": "autoresearch.campaign.confirmation",
    "confirmed_early": "autoresearch.campaign.confirmation",
    "declared_order": "autoresearch.campaign.standing",
    "exploration_room": "autoresearch.campaign.confirmation",
    "separable": "autoresearch.campaign.standing",
    "mean_text": "autoresearch.campaign.standing",
    "winner_text": "autoresearch.campaign.standing",
    "standings": "autoresearch.campaign.standing",
    "config_changes": "autoresearch.campaign.changes",
    "refused_change": "autoresearch.campaign.changes",
    "Dataset": "autoresearch.campaign.datasets",
    "first_line": "autoresearch.campaign.failfast",
    "fruitless": "autoresearch.campaign.failfast",
    "repeated_failure": "autoresearch.campaign.failfast",
    "HoldoutResult": "autoresearch.campaign.holdout",
    "HoldoutSummary": "autoresearch.campaign.holdout",
    "holdout_line": "autoresearch.campaign.holdout_stats",
    "holdout_summary": "autoresearch.campaign.holdout",
    "Holdout": "autoresearch.campaign.holdout_settings",
    "FINAL_STATES": "autoresearch.campaign.ledger.facts",
    "CampaignFacts": "autoresearch.campaign.ledger.facts",
    "Ledger": "autoresearch.campaign.ledger.optuna_ledger",
    "LedgerError": "autoresearch.campaign.errors",
    "LedgerReader": "autoresearch.campaign.ledger._sqlite_reader",
    "LedgerSnapshot": "autoresearch.campaign.ledger._sqlite_reader",
    "OptunaBacked": "autoresearch.campaign.ledger._base",
    "TrialLedger": "autoresearch.campaign.ledger._base",
    "ConfigError": "autoresearch.campaign.loader",
    "ConfigProblem": "autoresearch.campaign.loader",
    "load_campaign": "autoresearch.campaign.loader",
    "CategoricalParam": "autoresearch.campaign.params",
    "FloatParam": "autoresearch.campaign.params",
    "IntParam": "autoresearch.campaign.params",
    "check_params": "autoresearch.campaign.params",
    "PolicyKind": "autoresearch.campaign.policy_settings",
    "FallbackKind": "autoresearch.campaign.policy_settings",
    "PolicySettings": "autoresearch.campaign.policy_settings",
    "ProviderKind": "autoresearch.campaign.policy_settings",
    "PrunerKind": "autoresearch.campaign.pruner_settings",
    "PrunerSettings": "autoresearch.campaign.pruner_settings",
    "Aggregate": "autoresearch.campaign.aggregate",
    "AggregateKind": "autoresearch.campaign.aggregate",
    "resolve_aggregate": "autoresearch.campaign.aggregate",
    "SamplerKind": "autoresearch.campaign.policy_settings",
    "resolve_policy_kind": "autoresearch.campaign.policy_settings",
    "best_trial": "autoresearch.campaign.ranking",
    "declared_ranking": "autoresearch.campaign.ranking",
    "ranked": "autoresearch.campaign.ranking",
    "CampaignPaths": "autoresearch.campaign.paths",
    "campaign_dir": "autoresearch.campaign.paths",
    "campaigns_root": "autoresearch.campaign.paths",
    "known_campaigns": "autoresearch.campaign.paths",
    "CampaignState": "autoresearch.campaign.states",
    "Note": "autoresearch.campaign.records",
    "Proposal": "autoresearch.campaign.records",
    "TrialFailure": "autoresearch.campaign.states",
    "TrialRecord": "autoresearch.campaign.records",
    "TrialState": "autoresearch.campaign.states",
    "BudgetUsed": "autoresearch.campaign.status",
    "CampaignOverview": "autoresearch.campaign.status",
    "CampaignStatus": "autoresearch.campaign.status",
    "CampaignStopReason": "autoresearch.campaign.status",
    "TrialSummary": "autoresearch.campaign.status",
    "active_seconds": "autoresearch.campaign.status_core",
    "budget_used": "autoresearch.campaign.status",
    "campaign_status": "autoresearch.campaign.status",
    "free_slots": "autoresearch.campaign.status",
    "hours_unit": "autoresearch.campaign.status_core",
    "on_real_gpus": "autoresearch.campaign.status_core",
    "overview": "autoresearch.campaign.status",
    "read_overviews": "autoresearch.campaign.status",
    "read_status": "autoresearch.campaign.status",
    "status_of": "autoresearch.campaign.status",
    "stop_reason": "autoresearch.campaign.status",
}
"""Public name -> the module that defines it."""

__getattr__ = _lazy_exports(__name__, _WHERE)


__all__ = [
    "BUILTIN_PLACEHOLDERS",
    "FINAL_STATES",
    "Aggregate",
    "AggregateKind",
    "Approvals",
    "Budget",
    "BudgetUsed",
    "Campaign",
    "CampaignFacts",
    "CampaignOverview",
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
    "Holdout",
    "HoldoutResult",
    "HoldoutSummary",
    "IntParam",
    "Ledger",
    "LedgerError",
    "LedgerReader",
    "LedgerSnapshot",
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
    "PrunerSettings",
    "SamplerKind",
    "CampaignStopReason",
    "ConfirmSettings",
    "ConfirmWhen",
    "Standing",
    "Tracking",
    "TrialFailure",
    "TrialLedger",
    "TrialRecord",
    "TrialState",
    "TrialSummary",
    "active_seconds",
    "best_trial",
    "budget_used",
    "campaign_dir",
    "campaign_status",
    "campaigns_root",
    "check_params",
    "confirmations_due",
    "confirmed_early",
    "declared_order",
    "declared_ranking",
    "exploration_room",
    "config_changes",
    "first_line",
    "free_slots",
    "holdout_line",
    "holdout_summary",
    "hours_unit",
    "on_real_gpus",
    "fruitless",
    "known_campaigns",
    "load_campaign",
    "mean_text",
    "overview",
    "ranked",
    "read_overviews",
    "read_status",
    "refused_change",
    "repeated_failure",
    "resolve_aggregate",
    "resolve_policy_kind",
    "separable",
    "standings",
    "status_of",
    "stop_reason",
    "winner_text",
]
