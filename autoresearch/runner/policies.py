"""Building a campaign's policy: the one place `policy.kind` becomes a `Policy` object.

`POLICY_BUILDERS` maps a resolved kind to a builder `(campaign, ledger) -> Policy`: optuna,
and llm (`build_llm_policy`: the provider from policy.provider/model/base_url/api_key_env).
`register_policy` replaces a builder (tests use it for fast retries).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from autoresearch.campaign import Campaign, Ledger, PolicyKind, resolve_policy_kind
from autoresearch.policy import OptunaPolicy, Policy, PolicyError, build_llm_policy

PolicyBuilder = Callable[[Campaign, Ledger], Policy]

POLICY_BUILDERS: dict[PolicyKind, PolicyBuilder] = {
    PolicyKind.optuna: lambda campaign, ledger: OptunaPolicy(ledger, campaign.policy),
    PolicyKind.llm: build_llm_policy,
}
"""Resolved policy kind -> builder. Extension point for the LLM policy."""


def register_policy(kind: PolicyKind, builder: PolicyBuilder) -> None:
    """Make `kind` buildable (the LLM policy module calls this when imported)."""
    POLICY_BUILDERS[kind] = builder


def build_policy(
    campaign: Campaign, ledger: Ledger, *, environ: Mapping[str, str] | None = None
) -> tuple[Policy, PolicyKind]:
    """The policy the campaign asks for, and the kind it resolved to.

    `kind: auto` resolves to llm when a provider and its key are configured; if no LLM policy
    is registered it uses optuna. Raises `PolicyError` saying what to change.
    """
    kind = resolve_policy_kind(campaign.policy, environ)
    builder = POLICY_BUILDERS.get(kind)
    if builder is None and campaign.policy.kind is PolicyKind.auto:
        kind, builder = PolicyKind.optuna, POLICY_BUILDERS[PolicyKind.optuna]
    if builder is None:
        raise PolicyError(
            f"campaign {campaign.name!r}: policy.kind {kind.value} is not available in this installation; "
            f"use policy.kind: optuna (or auto)"
        )
    return builder(campaign, ledger), kind
