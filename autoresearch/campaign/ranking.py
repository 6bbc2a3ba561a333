"""The best complete trial (the best mean, with confirmations), computed once: every place that names a best trial (status, the
report, the policies' prompts and skills, chat) ranks trials with `ranked`. Imports no pydantic
(`autoresearch status` ranks plain views of the trials)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, TypeVar

from autoresearch.campaign.standing import Standing, declared_order
from autoresearch.campaign.states import TrialState
from autoresearch.campaign.suspects import suspect_reasons

if TYPE_CHECKING:
    from autoresearch.campaign.config import Campaign, Objective
    from autoresearch.campaign.records import TrialRecord


class Rankable(Protocol):
    """What ranking reads of a trial (a `TrialRecord`, or the `TrialSummary` that status shows)."""

    @property
    def number(self) -> int: ...

    @property
    def state(self) -> TrialState: ...

    @property
    def value(self) -> float | None: ...


T = TypeVar("T", bound=Rankable)


def ranked(trials: Iterable[T], objective: Objective) -> list[T]:
    """Complete trials with a value, best first; among equal values the earliest trial first."""
    sign = -1.0 if objective.direction == "maximize" else 1.0
    done = [t for t in trials if t.state is TrialState.complete and t.value is not None]
    return sorted(done, key=lambda t: (sign * t.value, t.number))  # type: ignore[operator]


def best_trial(trials: Iterable[TrialRecord], objective: Objective) -> TrialRecord | None:
    """The first of `confirmation.declared_order`: the confirmed origin with the best mean over its
    runs (itself and its confirmations), else (none confirmed) the best complete trial; the earliest
    among equals; None before one completes. Blind to suspects: what a campaign names as its best
    is `declared_best`."""
    trials = list(trials)
    best = declared_order(trials, objective)
    return next(t for t in trials if t.number == best[0].trial) if best else None


def declared_ranking(trials: list[TrialRecord], campaign: Campaign) -> list[Standing]:
    """The one order a campaign's winner is declared in: `confirmation.declared_order` (confirmed
    origins by mean, then the others) over the trials whose result is not suspect (docs/results.md),
    over all trials when every complete one is suspect. A suspect re-run is an origin of its own."""
    suspect = suspect_reasons(trials, campaign.validity.min_speed_ratio)
    trusted = declared_order([t for t in trials if t.number not in suspect], campaign.objective)
    return trusted or declared_order(trials, campaign.objective)


def declared_best(trials: list[TrialRecord], campaign: Campaign) -> TrialRecord | None:
    """What a campaign names as its best: the first trial of `declared_ranking` (None before one
    completes)."""
    ranking = declared_ranking(trials, campaign)
    return next(t for t in trials if t.number == ranking[0].trial) if ranking else None


def suspect_reruns_due(trials: list[TrialRecord], campaign: Campaign) -> list[TrialRecord]:
    """Suspect complete trials that would be the best (their value beats the trusted leader's
    mean) and were not re-run yet (nor are re-runs themselves): each is re-run once on another
    node before it may be declared best."""
    if not campaign.validity.rerun_suspect:
        return []
    suspect = suspect_reasons(trials, campaign.validity.min_speed_ratio)
    trusted = declared_order([t for t in trials if t.number not in suspect], campaign.objective)
    rerun = {t.suspect_rerun_of for t in trials}
    return [t for t in ranked(trials, campaign.objective)
            if t.number in suspect and t.number not in rerun and t.suspect_rerun_of is None
            and t.confirms is None
            and (not trusted or not campaign.objective.better(trusted[0].mean, t.value))]


def running_best(values: list[float], objective: Objective) -> list[float]:
    """The best of `values[: i + 1]` for each i (the best-so-far curve of the report and the dashboard)."""
    out: list[float] = []
    for value in values:
        out.append(value if not out or objective.better(value, out[-1]) else out[-1])
    return out
