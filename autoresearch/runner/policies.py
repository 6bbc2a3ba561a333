"""Building a campaign's policy: the one place `policy.kind` becomes a `Policy` object.

A `PolicyFactory` `(kind, campaign, ledger) -> Policy` builds the policy of a resolved kind;
`run_campaign(policy_factory=...)` takes one (evals and tests pass their own, e.g. an LLM policy
on a scripted provider or with fast retries). `default_policy` builds optuna, and llm with
`build_llm_policy` (the provider from policy.provider/model/base_url/api_key_env).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from autoresearch.campaign import Campaign, Ledger, PolicyKind, resolve_policy_kind
from autoresearch.policy import OptunaPolicy, Policy, build_llm_policy

PolicyFactory = Callable[[PolicyKind, Campaign, Ledger], Policy]
"""Builds the policy of a resolved kind (optuna or llm) for a campaign and its ledger."""


def default_policy(kind: PolicyKind, campaign: Campaign, ledger: Ledger) -> Policy:
    """Optuna for `optuna`, the configured LLM provider's policy for `llm`."""
    if kind is PolicyKind.llm:
        return build_llm_policy(campaign, ledger)
    return OptunaPolicy(ledger, campaign.policy)


def with_llm(builder: Callable[[Campaign, Ledger], Policy]) -> PolicyFactory:
    """The default factory, except that kind llm is built by `builder`."""

    def factory(kind: PolicyKind, campaign: Campaign, ledger: Ledger) -> Policy:
        return builder(campaign, ledger) if kind is PolicyKind.llm else default_policy(kind, campaign, ledger)

    return factory


def build_policy(
    campaign: Campaign,
    ledger: Ledger,
    *,
    environ: Mapping[str, str] | None = None,
    factory: PolicyFactory | None = None,
) -> tuple[Policy, PolicyKind]:
    """The policy the campaign asks for, and the kind it resolved to (`kind: auto` resolves to llm
    when a provider and its key are configured). Raises `PolicyError` saying what to change."""
    kind = resolve_policy_kind(campaign.policy, environ)
    return (factory or default_policy)(kind, campaign, ledger), kind
