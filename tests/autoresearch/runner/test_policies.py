"""`run_campaign(policy_factory=...)`: the factory builds the policy of the resolved kind; the
default builds optuna, and `with_llm` swaps only the llm kind (no global registry to patch)."""

from __future__ import annotations

from autoresearch.campaign import Campaign, Ledger, PolicyKind
from autoresearch.policy import OptunaPolicy
from autoresearch.runner import build_policy, default_policy, with_llm


def _campaign(policy: dict) -> Campaign:
    return Campaign.model_validate({
        "name": "factory", "command": ["python", "train.py", "{x}"], "objective": {"metric": "loss", "mode": "min"},
        "search_space": {"x": {"type": "float", "low": 0, "high": 1}}, "budget": {"max_trials": 4}, "policy": policy,
    }, context={"check_paths": False})  # fmt: skip


class _Marked(OptunaPolicy):
    """An optuna policy the test can tell apart from the default one."""


def test_the_factory_builds_the_resolved_kind(tmp_path):
    optuna_campaign = _campaign({"kind": "optuna"})
    ledger = Ledger.open(optuna_campaign, tmp_path)
    policy, kind = build_policy(optuna_campaign, ledger)
    assert kind is PolicyKind.optuna and type(policy) is OptunaPolicy

    llm = with_llm(lambda campaign, ledger: _Marked(ledger, campaign.policy))
    llm_campaign = _campaign({"kind": "auto", "provider": "openai", "model": "gpt-x", "api_key_env": "AR_TEST_KEY"})
    policy, kind = build_policy(llm_campaign, ledger, environ={"AR_TEST_KEY": "sk-1"}, factory=llm)
    assert kind is PolicyKind.llm and isinstance(policy, _Marked)
    policy, kind = build_policy(llm_campaign, ledger, environ={}, factory=llm)  # auto without a key: optuna
    assert kind is PolicyKind.optuna and type(policy) is OptunaPolicy
    assert type(default_policy(PolicyKind.optuna, optuna_campaign, ledger)) is OptunaPolicy
