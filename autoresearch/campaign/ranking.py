"""The best complete trial, computed once: every place that names a best trial (status, the
report, the policies' prompts and skills, chat) ranks trials with `ranked`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from autoresearch.campaign.config import Campaign, Objective
from autoresearch.campaign.records import TrialRecord, TrialState
from autoresearch.campaign.suspects import suspect_reasons


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
    """The best complete trial (the earliest among equals), or None before one completes."""
    best = ranked(trials, objective)
    return best[0] if best else None


def declared_best(trials: list[TrialRecord], campaign: Campaign) -> TrialRecord | None:
    """The best complete trial whose result is not suspect (docs/results.md); the best of all
    when every complete trial is suspect. What a campaign names as its best."""
    suspect = suspect_reasons(trials, campaign.validity.min_speed_ratio)
    return best_trial([t for t in trials if t.number not in suspect], campaign.objective) or best_trial(
        trials, campaign.objective)


def suspect_reruns_due(trials: list[TrialRecord], campaign: Campaign) -> list[TrialRecord]:
    """Suspect complete trials that would be the best and were not re-run yet (nor are re-runs
    themselves): each is re-run once on another node before it may be declared best."""
    if not campaign.validity.rerun_suspect:
        return []
    suspect = suspect_reasons(trials, campaign.validity.min_speed_ratio)
    trusted = best_trial([t for t in trials if t.number not in suspect], campaign.objective)
    rerun = {t.suspect_rerun_of for t in trials}
    return [t for t in ranked(trials, campaign.objective)
            if t.number in suspect and t.number not in rerun and t.suspect_rerun_of is None
            and (trusted is None or not campaign.objective.better(trusted.value, t.value))]


def running_best(values: list[float], objective: Objective) -> list[float]:
    """The best of `values[: i + 1]` for each i (the best-so-far curve of the report and the dashboard)."""
    out: list[float] = []
    for value in values:
        out.append(value if not out or objective.better(value, out[-1]) else out[-1])
    return out
