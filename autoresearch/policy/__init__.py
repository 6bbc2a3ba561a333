"""Policies: what proposes a campaign's trials (Optuna, or an LLM) and replans."""

from autoresearch.policy.agent_skills import AgentContext, ResearchLogEntry, agent_registry
from autoresearch.policy.base import (
    Policy,
    PolicyContext,
    PolicyError,
    PolicyPause,
    PruneDecision,
    Pruning,
    ReplanAction,
    ReplanDecision,
)
from autoresearch.policy.lineage import Lineage, lineage
from autoresearch.policy.llm_policy import LLMPolicy, build_llm_policy
from autoresearch.policy.optuna_policy import OptunaPolicy, build_sampler
from autoresearch.policy.pruning import OptunaPruning, build_pruner, campaign_end, optuna_backed

__all__ = [
    "AgentContext",
    "LLMPolicy",
    "Lineage",
    "OptunaPolicy",
    "OptunaPruning",
    "Policy",
    "PolicyContext",
    "PolicyError",
    "PolicyPause",
    "PruneDecision",
    "Pruning",
    "ReplanAction",
    "ReplanDecision",
    "ResearchLogEntry",
    "agent_registry",
    "build_llm_policy",
    "build_pruner",
    "build_sampler",
    "campaign_end",
    "lineage",
    "optuna_backed",
]
