"""How the report scales its objective axes, decided once for the PNG and the HTML plots: values
that span decades (a first trial at 214, the rest near 0.4), or a few outliers that would squash
the rest, get a log axis; when some values are not positive, the axis is clipped to the bulk of the
values instead, and the chart says how many points lie off it. Trial-number axes get integer ticks (see `integer_ticks`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

LOG_DECADES = 2.0
"""A value axis goes logarithmic when its (all positive) values span at least this many powers of ten."""
ENORMOUS = 1e15
"""Beyond +-this, ratios and quartiles of the values may overflow: no log or clipped axis is chosen."""
CLIP_RATIO = 20.0
"""A value axis is clipped when the full range is this many times the interquartile range."""


@dataclass(frozen=True)
class ValueScale:
    """How to draw one objective axis."""

    log: bool = False
    """A logarithmic axis."""
    limits: tuple[float, float] | None = None
    """Clipped to these bounds (linear axes only); None: fit every value."""
    note: str = ""
    """What the reader must know about the axis ('' for a plain linear axis)."""


def value_scale(values: Sequence[float], keep: Sequence[float] = ()) -> ValueScale:
    """The axis for `values`: log when they are positive and span `LOG_DECADES` or a few outliers
    would squash the rest; with values <= 0, clipped in that case (never clipping a value of `keep`,
    such as the best); else linear."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2 or any(abs(v) > ENORMOUS for v in finite):
        return ValueScale()  # enormous values: the PNGs draw them on a symmetric log axis (`plots`)
    low, high = min(finite), max(finite)
    squashed = False
    if len(finite) >= 4:
        q1, _, q3 = statistics.quantiles(finite, n=4, method="inclusive")
        squashed = q3 > q1 and high - low > CLIP_RATIO * (q3 - q1)
    if low > 0 and (squashed or math.log10(high / low) >= LOG_DECADES):
        return ValueScale(log=True, note=f"log scale: values span {math.log10(high / low):.1f} decades")
    if squashed:
        spread = q3 - q1
        kept = [v for v in keep if math.isfinite(v)]
        limits = (min([q1 - 2 * spread, *kept]), max([q3 + 2 * spread, *kept]))
        off = sum(not limits[0] <= v <= limits[1] for v in finite)
        return ValueScale(limits=limits, note=f"clipped: {off} outlying value(s) off the chart")
    return ValueScale()


def integer_step(first: int, last: int, most: int = 10) -> int:
    """The gap between trial-number ticks: 1, 2, 5, 10, 20, 50 ..., so that at most `most` whole
    numbers cover `first`..`last` (a 2-trial campaign gets ticks 0 and 1, never 0.2 or 0.4)."""
    span, step = max(last - first, 0), 1
    while span // step + 1 > most:
        digits = len(str(step)) - 1
        lead = step // 10**digits
        step = (2 if lead == 1 else 5 if lead == 2 else 10) * 10**digits
    return step
