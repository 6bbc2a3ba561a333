"""`OptunaPolicy`: proposals from an Optuna sampler over the campaign's ledger study.

The policy holds its own `optuna.Study` view of the ledger's study (`OptunaBacked.study_view`),
with the sampler of the campaign's policy settings, so the sampler sees every trial in the
ledger (including ones an LLM or a person proposed). It prunes through `OptunaPruning`.
"""

from __future__ import annotations

import importlib.util

import optuna

from autoresearch.campaign import PolicySettings, Proposal, SamplerKind, TrialLedger, TrialRecord
from autoresearch.policy.base import PolicyContext, PolicyError, PruneDecision, ReplanDecision
from autoresearch.policy.pruning import OptunaPruning, optuna_backed


def build_sampler(settings: PolicySettings, trials_so_far: int = 0) -> optuna.samplers.BaseSampler:
    """The sampler for `settings`. TPE is multivariate with the constant liar, so proposals
    drawn while others run differ.

    A seeded sampler is seeded with `seed + trials_so_far`: a fresh campaign reproduces plain
    Optuna with that seed; a resumed one does not replay the draws it already made.
    """
    seed = None if settings.seed is None else settings.seed + trials_so_far
    if settings.sampler is SamplerKind.tpe:
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)
    if settings.sampler is SamplerKind.random:
        return optuna.samplers.RandomSampler(seed=seed)
    if importlib.util.find_spec("cmaes") is None:
        raise PolicyError(
            "policy.sampler cmaes needs the `cmaes` package, which is not installed: "
            "`pip install cmaes`, or use sampler: tpe"
        )
    return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)


class OptunaPolicy:
    """Proposes trials with an Optuna sampler; prunes with an Optuna pruner; never stops early."""

    def __init__(self, ledger: TrialLedger, settings: PolicySettings | None = None) -> None:
        self.ledger = ledger
        self.settings = settings or ledger.campaign.policy
        self.search_space = ledger.campaign.search_space
        if not self.search_space:
            raise PolicyError(
                f"campaign {ledger.campaign.name!r} has no search_space: the optuna policy only tunes "
                f"parameters; a code-edit campaign needs policy.kind: llm"
            )
        sampler = build_sampler(self.settings, len(ledger.trials()))
        self.study = optuna_backed(ledger, "the optuna policy").study_view(sampler=sampler)
        """The policy's view of the ledger's study, with its sampler."""
        self.pruning = OptunaPruning(ledger, self.settings.pruner)

    def propose(self, ctx: PolicyContext, n: int) -> list[Proposal]:
        """Ask `n` trials and draw all their parameters now, before any of them is told."""
        proposals = []
        for _ in range(n):
            trial = self.study.ask()
            params = {name: spec.suggest(trial, name) for name, spec in self.search_space.items()}
            rationale = f"{self.settings.sampler.value} sample"
            proposals.append(Proposal(params=params, rationale=rationale, trial_number=trial.number))
        return proposals

    def replan(self, ctx: PolicyContext) -> ReplanDecision:
        return ReplanDecision(reason="the sampler keeps sampling until the budget or the target ends the campaign")

    def judge(self, trial: TrialRecord) -> PruneDecision:
        """The campaign's Optuna pruner on a running trial's intermediate values."""
        return self.pruning.judge(trial)
