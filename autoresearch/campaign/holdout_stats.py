"""The hidden holdout's numbers as plain data (no pydantic): the summary of the evaluated trials
(`holdout_data`, the JSON of `holdout.HoldoutSummary`), Spearman's rank correlation, and the line
people read (`holdout_line`). What a holdout is: `autoresearch.campaign.holdout`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from autoresearch.campaign.ranking import ranked

if TYPE_CHECKING:
    from autoresearch.campaign.config import Campaign
    from autoresearch.campaign.records import TrialRecord


class HoldoutResultLike(Protocol):
    """What the summary reads of a `holdout.HoldoutResult` (or its view)."""

    @property
    def trial(self) -> int: ...

    @property
    def value(self) -> float | None: ...

    @property
    def error(self) -> str: ...


def holdout_data(campaign: Campaign, trials: Iterable[TrialRecord], results: Sequence[HoldoutResultLike]) -> dict[str, Any] | None:
    """The JSON of the `HoldoutSummary` of `results` (`HoldoutResult`s), or None when the campaign has
    no holdout or no result yet."""
    holdout = campaign.objective.holdout
    if holdout is None or not results:
        return None
    by_trial = {r.trial: r for r in results}
    rows: list[dict[str, Any]] = [{"trial": t.number, "validation": t.value, "holdout": by_trial[t.number].value,
             "error": by_trial[t.number].error}
            for t in ranked(trials, campaign.objective) if t.number in by_trial and t.value is not None]  # fmt: skip
    pairs = [(r["validation"], r["holdout"]) for r in rows if r["holdout"] is not None]
    gap = None
    if pairs:
        diff = sum(v for v, _ in pairs) / len(pairs) - sum(h for _, h in pairs) / len(pairs)
        gap = diff if campaign.objective.direction == "maximize" else -diff
    return {"metric": holdout.metric, "rows": rows, "spearman": spearman(pairs), "gap": gap}


def spearman(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Spearman's rank correlation (ties get their average rank); None under 2 pairs or when one
    side is constant."""
    if len(pairs) < 2:
        return None
    a, b = _ranks([p[0] for p in pairs]), _ranks([p[1] for p in pairs])
    mean = (len(pairs) + 1) / 2
    cov = sum((x - mean) * (y - mean) for x, y in zip(a, b, strict=True))
    var_a, var_b = sum((x - mean) ** 2 for x in a), sum((y - mean) ** 2 for y in b)
    return None if var_a == 0 or var_b == 0 else cov / math.sqrt(var_a * var_b)


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def holdout_line(summary: Any) -> str:
    """One line for people: the rank correlation and the overfitting gap of the evaluated trials
    (`summary`: a `holdout.HoldoutSummary`, or its JSON as `status --json` prints it)."""
    data: Mapping[str, Any] = summary.model_dump(mode="json") if hasattr(summary, "model_dump") else summary
    rho = "n/a (fewer than 2 values)" if data["spearman"] is None else f"{data['spearman']:+.3f}"
    gap = "n/a" if data["gap"] is None else f"{data['gap']:+.6g}"
    pairs = ", ".join(f"#{r['trial']} {r['validation']:.6g}/{_value(r['holdout'])}" for r in data["rows"][:5])
    return (f"holdout {data['metric']} (validation/holdout, {len(data['rows'])} trials): {pairs}; "
            f"Spearman {rho}; overfitting gap {gap} (positive: validation flatters)")


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


__all__ = ["holdout_data", "holdout_line", "spearman"]
