"""Where each origin stands over its runs: the mean, sd and count of an origin's complete runs,
the order a winner is declared in, and whether it is separable from the runner-up (docs/results.md,
"Confirmation of the leaders"; planning the confirmations is `autoresearch.campaign.confirmation`).

Pure functions of the trials (`TrialRecord`s, or any records with the same fields: the plain views
`autoresearch status` reads), importing no pydantic.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from autoresearch.campaign.states import TrialState

if TYPE_CHECKING:
    from autoresearch.campaign.config import Objective
    from autoresearch.campaign.records import TrialRecord as Trial


@dataclass(frozen=True)
class Standing:
    """One origin's result over its runs."""

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


def standings(trials: Iterable[Trial], objective: Objective) -> list[Standing]:
    """Every complete origin's standing, best mean first (the earliest origin among equals)."""
    trials = list(trials)
    runs: dict[int, list[Trial]] = defaultdict(list)
    for t in trials:
        if t.confirms is not None and t.state is not TrialState.cancelled:
            runs[t.confirms].append(t)
    out = []
    for t in trials:
        if t.confirms is not None or t.state is not TrialState.complete or t.value is None:
            continue
        values = [t.value] + [r.value for r in runs[t.number] if r.state is TrialState.complete and r.value is not None]
        sd = _stdev(values) if len(values) >= 2 else None
        mean = math.fsum(values) / len(values)  # what statistics.fmean computes
        out.append(Standing(trial=t.number, mean=mean, sd=sd, n=len(values),
                            confirmations=[r.number for r in runs[t.number]]))  # fmt: skip
    sign = -1.0 if objective.direction == "maximize" else 1.0
    return sorted(out, key=lambda s: (sign * s.mean, s.trial))


def _stdev(values: list[float]) -> float:
    """The sample standard deviation (`statistics.stdev`, imported here: `statistics` costs a short
    command such as `autoresearch status` ~5 ms of start-up, and only confirmed origins need it)."""
    import statistics

    return statistics.stdev(values)


def declared_order(trials: Iterable[Trial], objective: Objective) -> list[Standing]:
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


__all__ = ["Standing", "declared_order", "mean_text", "separable", "standings", "winner_text"]
