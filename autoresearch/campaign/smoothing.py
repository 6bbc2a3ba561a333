"""A noise-aware estimate of each origin's value, for choosing which leaders to confirm
(docs/results.md, "Which leaders are confirmed").

One reading of a noisy metric says little about its configuration, but its neighbours in the search
space say more: the function is smooth where a search converges. `estimates` fits a Gaussian
process (a Matern 5/2 kernel with one length scale per parameter, plus a white-noise term whose
level is fitted from the data) to every complete run of the origins (their own values and their
confirmations', at the origin's parameters), and returns its posterior mean at each origin: the
reading shrunk towards what its neighbours measured. At a noise level small beside the differences
between configurations, the fitted noise is small and the estimate is the reading.

It applies when the parameters describe the configuration: the campaign has a search space, no
origin carries a code patch, every origin has a value for every parameter in the space, and at
least `MIN_ORIGINS` origins are complete. Otherwise (and when the fit fails) it returns None and
the leaders are the best means. A pure function of the trials (the fit is deterministic), so a
resumed runner plans the same confirmations.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from autoresearch.campaign.config import Campaign, ParamSpec
from autoresearch.campaign.params import CategoricalParam
from autoresearch.campaign.records import TrialRecord
from autoresearch.campaign.states import TrialState

MIN_ORIGINS = 10
"""Fewer complete origins than this: no estimate (too few points to fit a noise level)."""
MAX_ORIGINS = 100
"""At most this many origins (the best by mean) enter the fit, so planning stays fast in long campaigns."""


def estimates(trials: Sequence[TrialRecord], campaign: Campaign) -> dict[int, float] | None:
    """The posterior mean at each complete origin (by trial number) of a Gaussian process fitted to
    the origins' complete runs, or None where it does not apply (see the module docstring)."""
    space = campaign.search_space
    origins = [t for t in trials if t.confirms is None and t.state is TrialState.complete and t.value is not None]
    if not space or len(origins) < MIN_ORIGINS or any(t.patch is not None for t in trials if t.confirms is None):
        return None
    runs: dict[int, list[float]] = {t.number: [float(t.value)] for t in origins if t.value is not None}
    for t in trials:
        if t.confirms in runs and t.state is TrialState.complete and t.value is not None:
            runs[t.confirms].append(float(t.value))
    sign = -1.0 if campaign.objective.direction == "maximize" else 1.0
    kept = sorted(origins, key=lambda t: (sign * math.fsum(runs[t.number]) / len(runs[t.number]), t.number))[:MAX_ORIGINS]
    points = [_encode(t.params, space) for t in kept]
    if any(p is None for p in points):
        return None
    xs = tuple(tuple(p) for p in points if p is not None)
    ys = tuple(tuple(runs[t.number]) for t in kept)
    fitted = _fit(xs, ys)
    return None if fitted is None else {t.number: mu for t, mu in zip(kept, fitted)}


def _encode(params: Mapping[str, Any], space: Mapping[str, ParamSpec]) -> list[float] | None:
    """The parameters as coordinates in [0, 1] (log scale where the parameter is; one 0/1
    coordinate per choice of a categorical), or None when one is missing or out of its range."""
    out: list[float] = []
    for name, spec in space.items():
        value = params.get(name)
        if isinstance(spec, CategoricalParam):
            hits = [value == c and type(value) is type(c) for c in spec.choices]
            if not any(hits):
                return None
            out += [float(h) for h in hits] if len(spec.choices) > 1 else []
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not spec.low <= value <= spec.high:
            return None
        if spec.log:
            out.append((math.log(value) - math.log(spec.low)) / (math.log(spec.high) - math.log(spec.low)))
        else:
            out.append((value - spec.low) / (spec.high - spec.low))
    return out or None


@functools.lru_cache(maxsize=8)
def _fit(xs: tuple[tuple[float, ...], ...], ys: tuple[tuple[float, ...], ...]) -> tuple[float, ...] | None:
    """The posterior mean at each point `xs[i]` of a GP fitted to the values `ys[i]` measured there
    (cached: the runner asks again each round with the same trials)."""
    import numpy as np
    from sklearn.gaussian_process import GaussianProcessRegressor  # type: ignore[import-untyped]
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel  # type: ignore[import-untyped]

    x = np.array([p for p, values in zip(xs, ys) for _ in values])
    y = np.array([v for values in ys for v in values])
    if float(np.ptp(y)) == 0.0:
        return tuple(float(values[0]) for values in ys)
    kernel = ConstantKernel(1.0) * Matern(length_scale=[0.2] * x.shape[1], length_scale_bounds=(1e-2, 10.0), nu=2.5) \
        + WhiteKernel(0.1, (1e-6, 10.0))
    with warnings.catch_warnings():  # a bound reached is a valid fit (e.g. no noise at all): not the user's concern
        warnings.simplefilter("ignore")
        try:
            model = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0).fit(x, y)
        except (ValueError, np.linalg.LinAlgError):
            return None
        mu = model.predict(np.array(xs))
    return tuple(float(m) for m in mu) if np.all(np.isfinite(mu)) else None


__all__ = ["MAX_ORIGINS", "MIN_ORIGINS", "estimates"]
