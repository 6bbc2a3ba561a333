"""The numbers an eval reports, as pure functions of what the runs recorded.

Regret is simple regret: the best objective found so far minus the known minimum (>= 0).
A run is a sequence of trials in proposal order; a trial without a value (failed, pruned,
cancelled) leaves the best-so-far curve where it was.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict
from scipy import stats

INF = math.inf


class Spread(BaseModel):
    """Median and interquartile range of one metric over seeds."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    median: float
    q25: float
    """25th percentile (linear interpolation between order statistics)."""
    q75: float
    """75th percentile."""
    n: int
    """How many values (seeds)."""


class PairedTest(BaseModel):
    """A paired, two-sided Wilcoxon signed-rank test of arm A against baseline B, seed by seed."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    n: int
    """Pairs (seeds) compared."""
    median_diff: float
    """Median of A - B over the pairs (negative: A found lower regret)."""
    p_value: float
    """Two-sided p-value; 1.0 when every pair is equal (nothing to test)."""
    wins: int
    """Pairs where A is strictly lower than B."""
    losses: int
    """Pairs where A is strictly higher than B."""


def best_so_far(values: Sequence[float | None], minimum: float) -> list[float]:
    """Regret of the best value among the first k trials, for k = 1 .. len(values).

    inf until the first trial with a value; NaN values count as no value."""
    curve, best = [], INF
    for value in values:
        if value is not None and math.isfinite(value):
            best = min(best, value)
        curve.append(max(0.0, best - minimum) if math.isfinite(best) else INF)
    return curve


def regret_at(curve: Sequence[float], n: int) -> float:
    """Regret after `n` trials; a run shorter than `n` gives its last value (inf when empty)."""
    if n < 1:
        raise ValueError(f"regret_at needs n >= 1, got {n}")
    if not curve:
        return INF
    return curve[min(n, len(curve)) - 1]


def spread(values: Sequence[float]) -> Spread:
    """Median and IQR of `values` (infinite values allowed: they sort last)."""
    if not values:
        raise ValueError("spread of no values")
    ordered = sorted(values)
    return Spread(median=_quantile(ordered, 0.5), q25=_quantile(ordered, 0.25), q75=_quantile(ordered, 0.75),
                  n=len(ordered))  # fmt: skip


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    if low == high or ordered[low] == ordered[high]:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


TIE = 1e-8
"""Paired differences this small are ties: subprocess jobs print their metric with 10
significant digits, so the same trial read from a job log and computed in-process differ by
up to ~1e-10."""


def paired_wilcoxon(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """Wilcoxon signed-rank test (two-sided, ties within `TIE` dropped) of a against b, paired
    by position (same seed). Raises ValueError on unequal lengths or non-finite values."""
    if len(a) != len(b):
        raise ValueError(f"paired test needs equal lengths (one value per seed), got {len(a)} and {len(b)}")
    if not all(math.isfinite(x) for x in (*a, *b)):
        raise ValueError("paired test needs finite values: a run without any completed trial has no regret")
    diffs = [0.0 if abs(x - y) <= TIE else x - y for x, y in zip(a, b)]
    wins, losses = sum(d < 0 for d in diffs), sum(d > 0 for d in diffs)
    median_diff = statistics.median(diffs) if diffs else 0.0
    if wins + losses == 0:
        return PairedTest(n=len(diffs), median_diff=median_diff, p_value=1.0, wins=0, losses=0)
    result = stats.wilcoxon(diffs, zero_method="wilcox", alternative="two-sided")
    return PairedTest(n=len(diffs), median_diff=median_diff, p_value=float(result.pvalue), wins=wins, losses=losses)


def time_curve(
    ends: Sequence[float | None], values: Sequence[float | None], minimum: float
) -> list[tuple[float, float]]:
    """(seconds since the start, best regret so far) at each trial's end, in time order.

    `ends[i]` is when trial i ended (None: never); trials with a value improve the curve."""
    points = sorted((end, value) for end, value in zip(ends, values) if end is not None)
    out, best = [], INF
    for end, value in points:
        if value is not None and math.isfinite(value):
            best = min(best, value)
        out.append((end, max(0.0, best - minimum) if math.isfinite(best) else INF))
    return out


def time_to_target(curve: Sequence[tuple[float, float]], target: float) -> float | None:
    """First time the regret curve is at or below `target`; None when it never is."""
    return next((t for t, regret in curve if regret <= target), None)


def regret_at_time(curve: Sequence[tuple[float, float]], t: float) -> float:
    """Best regret reached by time `t` (inf before the first result)."""
    reached = [regret for when, regret in curve if when <= t]
    return min(reached) if reached else INF


def regret_within_steps(
    steps: Sequence[int], values: Sequence[float | None], ends: Sequence[float | None], minimum: float, budget: int
) -> float:
    """Best regret among complete trials that ended while the training steps spent so far (all
    trials' steps, summed in order of their end) stayed within `budget`.

    The compute-matched comparison for pruning: a pruned trial spends fewer steps, so more
    trials fit in the same budget."""
    order = sorted((end, i) for i, end in enumerate(ends) if end is not None)
    spent, best = 0, INF
    for _, i in order:
        spent += steps[i]
        if spent > budget:
            break
        value = values[i]
        if value is not None and math.isfinite(value):
            best = min(best, value)
    return max(0.0, best - minimum) if math.isfinite(best) else INF


def utilization(work_s: float, slots: int, wall_s: float) -> float:
    """Share of the slots' time spent on `work_s` seconds of work: work / (slots x wall)."""
    if slots < 1 or wall_s <= 0:
        raise ValueError(f"utilization needs slots >= 1 and wall_s > 0, got {slots} and {wall_s}")
    return work_s / (slots * wall_s)


__all__ = [
    "PairedTest",
    "Spread",
    "best_so_far",
    "paired_wilcoxon",
    "regret_at",
    "regret_at_time",
    "regret_within_steps",
    "spread",
    "time_curve",
    "time_to_target",
    "utilization",
]
