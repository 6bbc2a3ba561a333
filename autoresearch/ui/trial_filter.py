"""What the campaign page's trial table (and the charts drawn beside it) shows: trials by state,
by a range of each numeric parameter, and by a set of choices of each categorical one, read from
the page's query (`?state=complete&min.lr=0.001&max.lr=0.01&in.opt=adam&in.opt=sgd`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlencode

if TYPE_CHECKING:
    from autoresearch.campaign import TrialRecord, TrialSummary

TRIAL_STATES = ("proposed", "running", "complete", "pruned", "failed", "cancelled")


class _Query(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...
    def getlist(self, key: str) -> list[str]: ...
    def keys(self) -> Any: ...


@dataclass(frozen=True)
class TrialFilter:
    """Which trials a campaign page shows; empty, it shows them all."""

    state: str | None = None
    ranges: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """Numeric parameter -> (lowest, highest) value shown, either end open (None)."""
    choices: dict[str, frozenset[str]] = field(default_factory=dict)
    """Categorical parameter -> the choices shown (as text)."""

    def keeps(self, trial: TrialRecord | TrialSummary) -> bool:
        if self.state and trial.state.value != self.state:
            return False
        for name, (low, high) in self.ranges.items():
            value = trial.params.get(name)
            if not isinstance(value, int | float) or isinstance(value, bool):
                return False
            if (low is not None and value < low) or (high is not None and value > high):
                return False
        return all(str(trial.params.get(name)) in shown for name, shown in self.choices.items())

    def apply(self, trials: Sequence[Any]) -> list[Any]:
        return [t for t in trials if self.keeps(t)] if self else list(trials)

    def __bool__(self) -> bool:
        return bool(self.state or self.ranges or self.choices)

    def query(self) -> str:
        """The filter as a query string (without `?`), for links that keep it."""
        pairs: list[tuple[str, str]] = [("state", self.state)] if self.state else []
        for name, (low, high) in self.ranges.items():
            pairs += [(f"min.{name}", f"{low:g}")] if low is not None else []
            pairs += [(f"max.{name}", f"{high:g}")] if high is not None else []
        pairs += [(f"in.{name}", choice) for name, shown in self.choices.items() for choice in sorted(shown)]
        return urlencode(pairs)


def parse_filter(query: _Query, search_space: Mapping[str, Any]) -> TrialFilter:
    """The filter a page's query asks for; ValueError naming the field and what it takes."""
    state = query.get("state") or None
    if state and state not in TRIAL_STATES:
        raise ValueError(f"state={state!r}: use one of {', '.join(TRIAL_STATES)}")
    ranges: dict[str, tuple[float | None, float | None]] = {}
    choices: dict[str, frozenset[str]] = {}
    for key in query.keys():
        kind, dot, name = key.partition(".")
        if not dot or kind not in ("min", "max", "in"):
            continue
        spec = search_space.get(name)
        if spec is None:
            raise ValueError(f"{key}: the campaign has no parameter {name!r}; its parameters: {', '.join(search_space)}")
        numeric = spec.type != "categorical"
        if kind == "in":
            if numeric:
                raise ValueError(f"{key}: {name} is a {spec.type} parameter: filter it with min.{name} / max.{name}")
            known = {str(c) for c in spec.choices}
            picked = frozenset(v for v in query.getlist(key) if v)
            unknown = sorted(picked - known)
            if unknown:
                raise ValueError(f"{key}={unknown[0]!r}: not a choice of {name}; its choices: {', '.join(sorted(known))}")
            if picked:
                choices[name] = picked
            continue
        if not numeric:
            raise ValueError(f"{key}: {name} is categorical: filter it with in.{name}=CHOICE")
        text = (query.get(key) or "").strip()
        if not text:
            continue
        try:
            bound = float(text)
        except ValueError:
            raise ValueError(f"{key}={text!r}: a number (the {kind}imum {name} shown)") from None
        if not math.isfinite(bound):
            raise ValueError(f"{key}={text!r}: a finite number")
        low, high = ranges.get(name, (None, None))
        ranges[name] = (bound, high) if kind == "min" else (low, bound)
    return TrialFilter(state=state, ranges=ranges, choices=choices)
