"""Benchmark functions to minimise, their search spaces and known minima. Standard library only.

Importable by the job script next to it and by evals (`from examples.synthetic.functions import ...`)
without starting a process.

- Branin (2-d), x1 in [-5, 10], x2 in [0, 15]: minimum 0.397887 at (-pi, 12.275), (pi, 2.275)
  and (9.42478, 2.475).
- Hartmann6 (6-d), each xi in [0, 1]: minimum -3.32237 at
  (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["BRANIN", "FUNCTIONS", "HARTMANN6", "Function", "branin", "hartmann6", "regret"]


def branin(x: Sequence[float]) -> float:
    """The Branin-Hoo function with its usual constants."""
    x1, x2 = x
    b = 5.1 / (4 * math.pi**2)
    c = 5 / math.pi
    t = 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


_H6_ALPHA = (1.0, 1.2, 3.0, 3.2)
_H6_A = (
    (10, 3, 17, 3.5, 1.7, 8),
    (0.05, 10, 17, 0.1, 8, 14),
    (3, 3.5, 1.7, 10, 17, 8),
    (17, 8, 0.05, 10, 0.1, 14),
)
_H6_P = (
    (0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886),
    (0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991),
    (0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650),
    (0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381),
)


def hartmann6(x: Sequence[float]) -> float:
    """The 6-d Hartmann function (negative: lower is better)."""
    if len(x) != 6:
        raise ValueError(f"hartmann6 takes 6 coordinates, got {len(x)}")
    total = 0.0
    for alpha, a_row, p_row in zip(_H6_ALPHA, _H6_A, _H6_P):
        total += alpha * math.exp(-sum(a * (xi - p) ** 2 for a, xi, p in zip(a_row, x, p_row)))
    return -total


@dataclass(frozen=True)
class Function:
    """A benchmark function with what a campaign and a regret computation need to know."""

    name: str
    """The name used on the command line (`--function`)."""
    fn: Callable[[Sequence[float]], float]
    """The function itself: coordinates -> value to minimise."""
    bounds: tuple[tuple[float, float], ...]
    """(low, high) of each coordinate x1, x2, ...; the search space."""
    minimum: float
    """The known global minimum value."""
    argmin: tuple[tuple[float, ...], ...]
    """Points where the minimum is reached."""
    spread: float
    """A typical gap between a random point's value and the minimum; scales learning curves."""

    def __call__(self, x: Sequence[float]) -> float:
        return self.fn(x)


BRANIN = Function(
    name="branin",
    fn=branin,
    bounds=((-5.0, 10.0), (0.0, 15.0)),
    minimum=0.397887,
    argmin=((-math.pi, 12.275), (math.pi, 2.275), (9.42478, 2.475)),
    spread=50.0,
)
HARTMANN6 = Function(
    name="hartmann6",
    fn=hartmann6,
    bounds=((0.0, 1.0),) * 6,
    minimum=-3.32237,
    argmin=((0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573),),
    spread=3.0,
)
FUNCTIONS: dict[str, Function] = {f.name: f for f in (BRANIN, HARTMANN6)}
"""Every benchmark function by name."""


def regret(name: str, value: float) -> float:
    """Simple regret of an objective value: how far above the known minimum it is (>= 0)."""
    return max(0.0, value - FUNCTIONS[name].minimum)
