"""`objective.aggregate`: how a trial's reported points become its value.

- `last` (the default): the value at the last reported step.
- `best`: the best reported value (the largest with `mode: max`, the smallest with `mode: min`).
- `mean_last:K`: the mean of the last K reported points (all of them when fewer were reported).

The same rule reads pruning's intermediate values: the value reported to the pruner at a step is
the aggregate of the points up to that step (`running`): the running best for `best`, the mean of
the last K points so far for `mean_last:K`, the point itself for `last`.
"""

from __future__ import annotations

import enum
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

_FORM = re.compile(r"mean_last:(\d+)")
_SCHEMA = {
    "type": "string",
    "pattern": r"^(last|best|mean_last:[1-9][0-9]*)$",
    "description": "How a trial's value is read from its reported points: `last`, `best`, or `mean_last:K`.",
}


class AggregateKind(str, enum.Enum):
    last = "last"
    best = "best"
    mean_last = "mean_last"


@dataclass(frozen=True)
class Aggregate:
    """A parsed `objective.aggregate`."""

    kind: AggregateKind
    k: int = 1
    """For `mean_last`: how many of the last points are averaged."""

    def running(self, points: Sequence[tuple[int, float]], maximize: bool) -> list[tuple[int, float]]:
        """(step, aggregate of the points up to that step) for each of `points` (sorted by step)."""
        out: list[tuple[int, float]] = []
        best: float | None = None
        window: deque[float] = deque(maxlen=self.k)
        for step, value in points:
            if self.kind is AggregateKind.best:
                best = value if best is None else (max(best, value) if maximize else min(best, value))
                out.append((step, best))
            elif self.kind is AggregateKind.mean_last:
                window.append(value)
                out.append((step, sum(window) / len(window)))
            else:
                out.append((step, value))
        return out


def resolve_aggregate(text: str) -> Aggregate:
    """The one place `objective.aggregate` is read; a ValueError says what is expected."""
    if text in (AggregateKind.last.value, AggregateKind.best.value):
        return Aggregate(AggregateKind(text))
    found = _FORM.fullmatch(text)
    if found and int(found[1]) >= 1:
        return Aggregate(AggregateKind.mean_last, int(found[1]))
    hint = " (K must be a positive integer, e.g. mean_last:5)" if text.startswith("mean_last") else ""
    raise ValueError(f"aggregate {text!r} is not one of `last`, `best`, `mean_last:K`{hint}")


def _check(text: str) -> str:
    resolve_aggregate(text)
    return text


AggregateText = Annotated[str, AfterValidator(_check), WithJsonSchema(_SCHEMA)]
"""The config field's type: a string that `resolve_aggregate` reads."""
