"""`OptunaPolicy`: proposals from an Optuna sampler over the campaign's ledger study.

The policy holds its own `optuna.Study` view of the ledger's study (`OptunaBacked.study_view`),
with the sampler of the campaign's policy settings, so the sampler sees every trial in the
ledger (including ones an LLM or a person proposed) but confirmations: a confirmation re-runs
its origin's parameters with a new seed, and is no new sample of the objective (the sampler
learns from the origin's first value; the confirmations only decide the declared winner).
It prunes through `OptunaPruning`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Container
from typing import Any, cast

import optuna
from optuna.trial import FrozenTrial, TrialState

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


class _WithoutConfirmations(optuna.samplers.BaseSampler):
    """A sampler that reads the study without its confirmation trials (user attribute `confirms`)."""

    def __init__(self, sampler: optuna.samplers.BaseSampler) -> None:
        self.sampler = sampler

    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial) -> Any:
        return self.sampler.infer_relative_search_space(_view(study), trial)

    def sample_relative(self, study: optuna.Study, trial: FrozenTrial, search_space: Any) -> dict[str, Any]:
        return self.sampler.sample_relative(_view(study), trial, search_space)

    def sample_independent(self, study: optuna.Study, trial: FrozenTrial, name: str, distribution: Any) -> Any:
        return self.sampler.sample_independent(_view(study), trial, name, distribution)

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self.sampler.before_trial(_view(study), trial)

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState, values: Any) -> None:
        self.sampler.after_trial(_view(study), trial, state, values)

    def reseed_rng(self) -> None:
        self.sampler.reseed_rng()


class _StudyView:
    """A study as a sampler reads it (`get_trials`, and the `_get_trials` Optuna's samplers call),
    less the confirmation trials; everything else is the study's."""

    def __init__(self, study: optuna.Study) -> None:
        self._study = study

    def __getattr__(self, name: str) -> Any:
        return getattr(self._study, name)

    @property
    def trials(self) -> list[FrozenTrial]:
        return self.get_trials()

    def get_trials(self, deepcopy: bool = True, states: Container[TrialState] | None = None) -> list[FrozenTrial]:
        return _samples(self._study.get_trials(deepcopy=deepcopy, states=states))

    def _get_trials(self, deepcopy: bool = True, states: Container[TrialState] | None = None,
                    use_cache: bool = False) -> list[FrozenTrial]:
        return _samples(self._study._get_trials(deepcopy=deepcopy, states=states, use_cache=use_cache))


def _view(study: optuna.Study) -> optuna.Study:
    return cast(optuna.Study, _StudyView(study))  # what a sampler reads of a study, duck-typed


def _samples(trials: list[FrozenTrial]) -> list[FrozenTrial]:
    return [t for t in trials if t.user_attrs.get("confirms") is None]


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
        self.study = optuna_backed(ledger, "the optuna policy").study_view(sampler=_WithoutConfirmations(sampler))
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
