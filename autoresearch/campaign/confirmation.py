"""Confirmation of the leaders, computed once from a campaign's trials (docs/results.md).

An *origin* is a trial that is not a confirmation; its *runs* are itself and its confirmations
(trials whose `confirms` names it: the same parameters and code, a new `{seed}`). Its standing is
the mean, sample standard deviation and count of its complete runs' values. The leaders to
confirm are the best by a noise-aware estimate (`leaders_to_confirm`: a Gaussian process's
posterior mean over the parameters, `smoothing.estimates`; the best means where it does not
apply); the declared best is the confirmed origin with the best mean (`declared_order`,
`ranking.best_trial`); it is *separable* when its mean beats the runner-up's by more than twice the
larger of the two sds (the run-to-run noise of one run).

Planning is a pure function of the trials, so a runner killed at any point and resumed proposes
exactly the confirmations still missing (a confirmation in the ledger, whatever its state but
cancelled, counts as done): nothing is lost or run twice.
"""

from __future__ import annotations

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.confirm_settings import ConfirmWhen
from autoresearch.campaign.records import Proposal, TrialRecord
from autoresearch.campaign.smoothing import estimates
from autoresearch.campaign.standing import Standing, standings
from autoresearch.campaign.states import TrialState


def places(campaign: Campaign) -> int:
    """How many leaders are confirmed: `confirm.top_k`, or fewer when `budget.max_trials` cannot hold
    each with its `seeds` confirmations (0: no confirmation fits, or none is asked)."""
    if campaign.confirm is None:
        return 0
    return min(campaign.confirm.top_k, campaign.budget.max_trials // (1 + campaign.confirm.seeds))


def leaders_to_confirm(campaign: Campaign, trials: list[TrialRecord]) -> list[Standing]:
    """The origins to confirm: the first `places` by the noise-aware estimate
    (`smoothing.estimates`), else (it does not apply) by mean. The best single readings of a noisy
    search are mostly its luckiest (the winner's curse): a mean of a few re-runs cannot tell apart
    leaders picked that way, while their neighbours' readings can (docs/results.md)."""
    ranking = standings(trials, campaign.objective)
    k = places(campaign)
    estimate = estimates(trials, campaign) if k and len(ranking) > k else None
    if estimate is None:
        return ranking[:k]
    sign = -1.0 if campaign.objective.direction == "maximize" else 1.0
    inf = float("inf")
    return sorted(ranking, key=lambda s: (sign * estimate[s.trial] if s.trial in estimate else inf, s.trial))[:k]


def owed(campaign: Campaign, trials: list[TrialRecord]) -> int:
    """Confirmations the current leaders (`leaders_to_confirm`) still need."""
    if campaign.confirm is None:
        return 0
    seeds = campaign.confirm.seeds
    if not any(t.confirms is not None and t.state is not TrialState.cancelled for t in trials):  # no fit needed
        return seeds * min(places(campaign), len(standings(trials, campaign.objective)))
    return sum(max(0, seeds - len(s.confirmations)) for s in leaders_to_confirm(campaign, trials))


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
    reserve = owed(campaign, trials) + max(0, k - len(ranking)) * seeds
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
    """Up to `n` confirmations to propose now, first leader first: the leader's whenever it has a
    new best (`when: new_best`), every leader's once exploration has no room left."""
    if campaign.confirm is None or n <= 0:
        return []
    exploring = exploration_room(campaign, trials) > 0
    if exploring and campaign.confirm.when is not ConfirmWhen.new_best:
        return []
    chosen = leaders_to_confirm(campaign, trials)[: 1 if exploring else None]
    by_number = {t.number: t for t in trials}
    out: list[Proposal] = []
    for s in chosen:
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


__all__ = ["confirmations_due", "confirmed_early", "exploration_room", "leaders_to_confirm", "owed", "places"]
