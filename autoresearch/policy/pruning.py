"""Pruning through Optuna, written once for every policy: `OptunaPruning` judges a running trial
with the campaign's Optuna pruner (policy.pruner) on the ledger's study."""

from __future__ import annotations

import optuna

from autoresearch.campaign import OptunaBacked, PrunerKind, TrialLedger, TrialRecord, TrialState
from autoresearch.policy.base import PolicyError, PruneDecision


def build_pruner(kind: PrunerKind) -> optuna.pruners.BasePruner:
    """Optuna's pruner for `kind`, with Optuna's defaults (median: 5 startup trials)."""
    if kind is PrunerKind.median:
        return optuna.pruners.MedianPruner()
    if kind is PrunerKind.successive_halving:
        return optuna.pruners.SuccessiveHalvingPruner()
    return optuna.pruners.NopPruner()


def optuna_backed(ledger: TrialLedger, what: str) -> OptunaBacked:
    """`ledger` as an Optuna-backed one, or a PolicyError saying `what` needs it."""
    if not isinstance(ledger, OptunaBacked):
        raise PolicyError(
            f"campaign {ledger.campaign.name!r}: {what} needs a ledger backed by an Optuna study "
            f"(autoresearch.campaign.Ledger); {type(ledger).__name__} is not"
        )
    return ledger


class OptunaPruning:
    """Keeps or prunes running trials with an Optuna pruner, from the intermediate values the
    ledger holds. Both policies judge through it (the `Pruning` ability)."""

    def __init__(self, ledger: TrialLedger, kind: PrunerKind) -> None:
        self.ledger = optuna_backed(ledger, "pruning")
        self.study = self.ledger.study_view(pruner=build_pruner(kind))
        """A view of the ledger's study with the pruner (it reads the other trials' curves)."""

    def judge(self, trial: TrialRecord) -> PruneDecision:
        """Only a running trial with intermediate values can be pruned; a confirmation never is (its
        value is one more reading of a leader's, pruned or not)."""
        if trial.state is not TrialState.running or not trial.intermediate_values or trial.confirms is not None:
            return PruneDecision.keep
        frozen = self.ledger.frozen_trial(trial.number)
        return PruneDecision.prune if self.study.pruner.prune(self.study, frozen) else PruneDecision.keep
