"""Policies: what proposes a campaign's trials (Optuna, or an LLM) and replans."""

from autoresearch.policy.base import (
    Policy,
    PolicyContext,
    PolicyError,
    PruneDecision,
    Pruning,
    ReplanAction,
    ReplanDecision,
)
from autoresearch.policy.optuna_policy import OptunaPolicy, build_pruner, build_sampler

__all__ = [
    "OptunaPolicy",
    "Policy",
    "PolicyContext",
    "PolicyError",
    "PruneDecision",
    "Pruning",
    "ReplanAction",
    "ReplanDecision",
    "build_pruner",
    "build_sampler",
]
