"""Confirmation of the leaders, computed once from a campaign's trials (docs/results.md).

An *origin* is a trial that is not a confirmation; its *runs* are itself and its confirmations
(trials whose `confirms` names it: the same parameters and code, a new `{seed}`). Its standing is
the mean, sample standard deviation and count of its complete runs' values. The leaders to
confirm are the best by mean (`standings`); the declared best is the confirmed origin with the
best mean (`declared_order`, `ranking.best_trial`); it is *separable* when its mean beats the
runner-up's by more than twice the larger of the two sds (the run-to-run noise of one run).

Planning is a pure function of the trials, so a runner killed at any point and resumed proposes
exactly the confirmations still missing (a confirmation in the ledger, whatever its state but
cancelled, counts as done): nothing is lost or run twice.
"""

from __future__ import annotations

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.confirm_settings import ConfirmWhen
from autoresearch.campaign.records import Proposal, TrialRecord
from autoresearch.campaign.standing import Standing, standings
from autoresearch.campaign.states import TrialState


def places(campaign: Campaign) -> int:
    """How many leaders are confirmed: `confirm.top_k`, or fewer when `budget.max_trials` cannot hold
    each with its `seeds` confirmations (0: no confirmation fits, or none is asked)."""
    if campaign.confirm is None:
        return 0
    return min(campaign.confirm.top_k, campaign.budget.max_trials // (1 + campaign.confirm.seeds))


def owed(campaign: Campaign, ranking: list[Standing]) -> int:
    """Confirmations the current leaders (the first `places` origins by mean) still need."""
    if campaign.confirm is None:
        return 0
    seeds = campaign.confirm.seeds
    return sum(max(0, seeds - len(s.confirmations)) for s in ranking[: places(campaign)])


def exploration_room(campaign: Campaign, trials: list[TrialRecord]) -> int:
    """How many new (non-confirmation) trials the budget leaves room for: `max_trials` less the
    counted trials, less the reserve: the confirmations the leaders still need, plus `seeds` for
    each leader's place no origin fills yet, and never less than `seeds` (for a new leader's
    confirmations). At 0, confirmation takes precedence over exploration. Before any result, and
    with nothing running, there is room for one trial (a first result is needed to confirm one)."""
    counted = sum(t.state is not TrialState.cancelled for t in trials)
    left = max(0, campaign.budget.max_trials - counted)
    k = places(campaign)
    if campaign.confirm is None or k == 0:
        return left
    ranking = standings(trials, campaign.objective)
    seeds = campaign.confirm.seeds
    reserve = owed(campaign, ranking) + max(0, k - len(ranking)) * seeds
    room = max(0, left - max(reserve, seeds))
    if not ranking and not any(t.state in (TrialState.proposed, TrialState.running) for t in trials):
        room = max(room, min(1, left))
    return room


def confirmed_early(campaign: Campaign, trials: list[TrialRecord]) -> int:
    """Trials of the budget left unused because the leaders are confirmed and only the reserve for
    a new leader remains (a result explored with them could not be confirmed): 0 otherwise."""
    counted = sum(t.state is not TrialState.cancelled for t in trials)
    left = campaign.budget.max_trials - counted
    if places(campaign) == 0 or left <= 0 or exploration_room(campaign, trials) > 0:
        return 0
    if not standings(trials, campaign.objective) or confirmations_due(campaign, trials, 1):
        return 0
    return left


def confirmations_due(campaign: Campaign, trials: list[TrialRecord], n: int) -> list[Proposal]:
    """Up to `n` confirmations to propose now, best leader first: the leader's whenever it has a
    new best (`when: new_best`), every leader's once exploration has no room left."""
    if campaign.confirm is None or n <= 0:
        return []
    ranking = standings(trials, campaign.objective)
    leaders = ranking[: places(campaign)]
    if exploration_room(campaign, trials) > 0:
        leaders = leaders[:1] if campaign.confirm.when is ConfirmWhen.new_best else []
    by_number = {t.number: t for t in trials}
    out: list[Proposal] = []
    for s in leaders:
        for _ in range(campaign.confirm.seeds - len(s.confirmations)):
            out.append(_confirmation(by_number[s.trial], s))
    return out[:n]


def _confirmation(origin: TrialRecord, standing: Standing) -> Proposal:
    return Proposal(
        params=origin.params,
        patch=origin.patch,
        parent_trial=origin.parent_trial,
        confirms=origin.number,
        rationale=(f"confirmation of trial {origin.number} with a new seed (mean {standing.mean:.6g} over "
                   f"{standing.n} run{'s' if standing.n != 1 else ''} so far)"),
        hypothesis=origin.hypothesis,
        expected_effect=origin.expected_effect,
    )  # fmt: skip


__all__ = ["confirmations_due", "confirmed_early", "exploration_room", "owed", "places"]
