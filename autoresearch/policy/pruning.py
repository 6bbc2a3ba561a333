"""Pruning through Optuna, written once for every policy: `OptunaPruning` judges a running trial
with the campaign's Optuna pruner (policy.pruner) on the ledger's study.

The gates of `PrunerSettings` (startup trials, warm-up steps, interval) are applied here, for every
kind, and so is the end rule: a trial is never pruned at or after the last step the campaign's
completed trials reported (nor before one has completed: that step is not known yet). A trial at
its last step has run to its end; a prune then would only race its job's exit. Optuna's own
pruners are built with their gates open, so the settings are read in one place.
"""

from __future__ import annotations

from collections.abc import Iterable

import optuna

from autoresearch.campaign import OptunaBacked, PrunerKind, PrunerSettings, TrialLedger, TrialRecord, TrialState
from autoresearch.policy.base import PolicyError, PruneDecision


def build_pruner(kind: PrunerKind) -> optuna.pruners.BasePruner:
    """Optuna's pruner for `kind`, its own gates open (`OptunaPruning` applies the settings')."""
    if kind is PrunerKind.median:
        return optuna.pruners.MedianPruner(n_startup_trials=0, n_warmup_steps=0, interval_steps=1)
    if kind is PrunerKind.successive_halving:
        return optuna.pruners.SuccessiveHalvingPruner()
    return optuna.pruners.NopPruner()


def campaign_end(trials: Iterable[TrialRecord]) -> int | None:
    """The last step the campaign's completed trials reported: where a trial has run to its end
    (None before a completed trial has reported steps)."""
    return max((max(t.intermediate_values) for t in trials if t.state is TrialState.complete and t.intermediate_values),
               default=None)  # fmt: skip


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

    def __init__(self, ledger: TrialLedger, settings: PrunerSettings) -> None:
        self.ledger = optuna_backed(ledger, "pruning")
        self.trials = ledger
        """The same ledger as a `TrialLedger` (the trials the gates count)."""
        self.settings = settings
        self.study = self.ledger.study_view(pruner=build_pruner(settings.kind))
        """A view of the ledger's study with the pruner (it reads the other trials' curves)."""

    def judge(self, trial: TrialRecord) -> PruneDecision:
        """Only a running trial with intermediate values, past the settings' gates and before the
        campaign's last step, can be pruned; a confirmation never is (its value is one more reading
        of a leader's, pruned or not)."""
        if trial.state is not TrialState.running or not trial.intermediate_values or trial.confirms is not None:
            return PruneDecision.keep
        step, trials = max(trial.intermediate_values), self.trials.trials()
        end = campaign_end(trials)
        completed = sum(t.state is TrialState.complete for t in trials)
        if end is None or step >= end or not self.settings.allows(step, completed):
            return PruneDecision.keep
        frozen = self.ledger.frozen_trial(trial.number)
        return PruneDecision.prune if self.study.pruner.prune(self.study, frozen) else PruneDecision.keep
