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

import statistics
from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign.config import Campaign, Objective
from autoresearch.campaign.confirm_settings import ConfirmWhen
from autoresearch.campaign.records import Proposal, TrialRecord, TrialState


class Standing(BaseModel):
    """One origin's result over its runs."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    trial: int
    """The origin trial's number."""
    mean: float
    """Mean of the complete runs' values (the origin's and its confirmations')."""
    sd: float | None
    """Their sample standard deviation (None with one value)."""
    n: int
    """How many values the mean is over."""
    confirmations: list[int]
    """The origin's confirmation trials, by number (any state but cancelled)."""


def standings(trials: Iterable[TrialRecord], objective: Objective) -> list[Standing]:
    """Every complete origin's standing, best mean first (the earliest origin among equals)."""
    trials = list(trials)
    runs: dict[int, list[TrialRecord]] = defaultdict(list)
    for t in trials:
        if t.confirms is not None and t.state is not TrialState.cancelled:
            runs[t.confirms].append(t)
    out = []
    for t in trials:
        if t.confirms is not None or t.state is not TrialState.complete or t.value is None:
            continue
        values = [t.value] + [r.value for r in runs[t.number] if r.state is TrialState.complete and r.value is not None]
        sd = statistics.stdev(values) if len(values) >= 2 else None
        out.append(Standing(trial=t.number, mean=statistics.fmean(values), sd=sd, n=len(values),
                            confirmations=[r.number for r in runs[t.number]]))  # fmt: skip
    sign = -1.0 if objective.direction == "maximize" else 1.0
    return sorted(out, key=lambda s: (sign * s.mean, s.trial))


def declared_order(trials: Iterable[TrialRecord], objective: Objective) -> list[Standing]:
    """The order a winner is declared in: confirmed origins (n > 1) by mean, then the others by
    mean. A confirmed mean is never compared with a single reading: the best of many single
    readings is biased upward (the winner's curse: confirmed leaders fall back), and a lucky
    reading that was not re-run would win for that alone. Without confirmations, the mean order."""
    ranking = standings(trials, objective)
    return [s for s in ranking if s.n > 1] + [s for s in ranking if s.n <= 1]


def separable(winner: Standing, runner_up: Standing, objective: Objective) -> bool:
    """Whether `winner`'s mean beats `runner_up`'s, in the objective's direction, by more than 2 sd,
    sd being the larger of the two sample sds (False while neither has one: nothing shows they
    differ; False when the runner-up's mean is the better one, e.g. a single lucky reading)."""
    sds = [s.sd for s in (winner, runner_up) if s.sd is not None]
    lead = winner.mean - runner_up.mean if objective.direction == "maximize" else runner_up.mean - winner.mean
    return bool(sds) and lead > 2 * max(sds)


def mean_text(standing: Standing) -> str:
    """`0.9712 ± 0.0041 (n=3)`, or the value alone with one run (`0.9712 (n=1)`)."""
    sd = f" ± {standing.sd:.2g}" if standing.sd is not None else ""
    return f"{standing.mean:.6g}{sd} (n={standing.n})"


def winner_text(ranking: list[Standing], objective: Objective) -> str:
    """The declared best as people read it: `trial 3: val_accuracy 0.9712 ± 0.0041 (n=3); separable
    from the runner-up, trial 5 (0.965 ± 0.003 (n=3)): yes` (empty before any result)."""
    if not ranking:
        return ""
    text = f"trial {ranking[0].trial}: {objective.metric} {mean_text(ranking[0])}"
    if len(ranking) > 1:
        verdict = "yes" if separable(ranking[0], ranking[1], objective) else "no"
        text += f"; separable from the runner-up, trial {ranking[1].trial} ({mean_text(ranking[1])}): {verdict}"
    return text


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


__all__ = ["Standing", "confirmations_due", "confirmed_early", "declared_order", "exploration_room", "mean_text", "owed", "places",
           "separable", "standings", "winner_text"]
