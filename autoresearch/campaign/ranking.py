"""The best complete trial (the best mean, with confirmations), computed once: every place that names a best trial (status, the
report, the policies' prompts and skills, chat) ranks trials with `ranked`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from autoresearch.campaign.config import Objective
from autoresearch.campaign.confirmation import declared_order
from autoresearch.campaign.records import TrialRecord, TrialState


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
    """The declared best: the confirmed origin with the best mean over its runs (itself and its
    confirmations), else (none confirmed) the best complete trial; the earliest among equals;
    None before one completes (`confirmation.declared_order`)."""
    trials = list(trials)
    best = declared_order(trials, objective)
    return next(t for t in trials if t.number == best[0].trial) if best else None


def running_best(values: list[float], objective: Objective) -> list[float]:
    """The best of `values[: i + 1]` for each i (the best-so-far curve of the report and the dashboard)."""
    out: list[float] = []
    for value in values:
        out.append(value if not out or objective.better(value, out[-1]) else out[-1])
    return out
