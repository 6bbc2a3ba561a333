"""Two or more trials side by side: which parameters differ, final and best values, whether each
curve is still improving, and how code-edit trials' patches differ. The `compare_trials` skill
(agents, MCP, the LLM policy) returns it."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign.config import Objective
from autoresearch.campaign.records import TrialRecord
from autoresearch.campaign.states import TrialFailure, TrialState

SLOPE_POINTS = 5
"""The curve's slope is fitted over its last this many points."""
PATCH_DIFF_CHARS = 4000
"""A patch diff longer than this is cut (with a note saying so)."""
MAX_COMPARED = 10
"""The most trials one comparison takes."""


class UnknownTrial(ValueError):
    """A trial number the campaign does not have."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)


class CurveSummary(_Record):
    """A trial's intermediate curve in a few numbers."""

    points: int
    """How many (step, value) points it has."""
    first: tuple[int, float]
    """(step, value) of its first point."""
    last: tuple[int, float]
    """(step, value) of its last point (where a pruned trial was cut)."""
    best: tuple[int, float]
    """(step, value) of its best point for the objective's direction."""
    slope: float | None
    """Least-squares change of the value per step over the last `SLOPE_POINTS` points (None: one point)."""
    improving: bool | None
    """The slope points in the objective's better direction (still improving when it ended)."""


class ComparedTrial(_Record):
    """One trial of a comparison."""

    number: int
    state: TrialState
    final_value: float | None
    """Its objective value (complete trials; a pruned trial's last intermediate value)."""
    best_value: float | None
    """The best intermediate value it reported (None without a curve)."""
    curve: CurveSummary | None
    """Its intermediate curve in brief (None: it reported none)."""
    parent_trial: int | None = None
    """Code-edit campaigns: the trial whose code it starts from."""
    failure_class: TrialFailure | None = None
    hypothesis: str = ""


class ParamDiff(_Record):
    """A parameter whose value is not the same in every compared trial."""

    name: str
    values: dict[int, Any]
    """Trial number -> its value (None: the trial has no such parameter)."""


class PatchDiff(_Record):
    """How one trial's patch differs from another's (unified diff of the two patches' text)."""

    base: int
    """The reference trial (the first one asked for)."""
    other: int
    diff: str
    """Unified diff, patch of `base` -> patch of `other` ('' when they are the same)."""
    cut: bool = False
    """The diff was longer than `PATCH_DIFF_CHARS` and was cut."""


class Comparison(_Record):
    """Trials side by side, in the order asked for."""

    trials: list[ComparedTrial]
    differing_params: list[ParamDiff]
    """Parameters that differ between the trials."""
    same_params: dict[str, Any]
    """Parameters every trial shares, with their value."""
    patch_diffs: list[PatchDiff]
    """Code-edit trials: each other trial's patch against the first trial's (empty without patches)."""


def chosen(trials: list[TrialRecord], numbers: list[int]) -> list[TrialRecord]:
    """The trials `numbers` names, in that order, each once (the first is the patch diffs'
    reference). UnknownTrial for a number the campaign does not have; ValueError for fewer than two
    different trials, or more than `MAX_COMPARED`."""
    by_number = {t.number: t for t in trials}
    unknown = [n for n in numbers if n not in by_number]
    if unknown:
        raise UnknownTrial(f"no trial {', '.join(map(str, unknown))}; trials are 0..{len(trials) - 1}")
    picked = list(dict.fromkeys(numbers))
    if len(picked) < 2:
        raise ValueError("name at least two different trials")
    if len(picked) > MAX_COMPARED:
        raise ValueError(f"compare at most {MAX_COMPARED} trials at once ({len(picked)} named)")
    return [by_number[n] for n in picked]


def compare(trials: list[TrialRecord], objective: Objective) -> Comparison:
    """Compare `trials` (two or more, in the order given)."""
    names = sorted({name for t in trials for name in t.params})
    differing, same = [], {}
    for name in names:
        values = {t.number: t.params.get(name) for t in trials}
        if len({repr(v) for v in values.values()}) > 1 or any(name not in t.params for t in trials):
            differing.append(ParamDiff(name=name, values=values))
        else:
            same[name] = trials[0].params[name]
    base = trials[0]
    diffs = [_patch_diff(base, t) for t in trials[1:] if base.patch or t.patch]
    return Comparison(trials=[_compared(t, objective) for t in trials], differing_params=differing,
                      same_params=same, patch_diffs=diffs)  # fmt: skip


def summarize_curve(values: dict[int, float], objective: Objective) -> CurveSummary | None:
    """First, last and best point of a curve, and the slope of its last `SLOPE_POINTS` points."""
    points = sorted(values.items())
    if not points:
        return None
    best = points[0]
    for point in points[1:]:
        if objective.better(point[1], best[1]):
            best = point
    tail = points[-SLOPE_POINTS:]
    slope = _slope(tail) if len(tail) >= 2 else None
    improving = None if slope is None else (slope > 0 if objective.direction == "maximize" else slope < 0)
    return CurveSummary(points=len(points), first=points[0], last=points[-1], best=best, slope=slope,
                        improving=improving)  # fmt: skip


def downsample(values: dict[int, float], limit: int, better: Callable[[float, float], bool]) -> list[tuple[int, float]]:
    """At most `limit` evenly spaced points of a curve, always with its first, last and best."""
    points = sorted(values.items())
    if len(points) <= limit:
        return points
    best = 0
    for i, (_, v) in enumerate(points):
        if better(v, points[best][1]):
            best = i
    keep = {0, len(points) - 1, best}
    slots = limit - len(keep)
    keep |= {round(k * (len(points) - 1) / (slots + 1)) for k in range(1, slots + 1)}
    return [points[i] for i in sorted(keep)][:limit]


def _compared(t: TrialRecord, objective: Objective) -> ComparedTrial:
    curve = summarize_curve(t.intermediate_values, objective)
    return ComparedTrial(
        number=t.number, state=t.state, final_value=t.value, best_value=curve.best[1] if curve else None, curve=curve,
        parent_trial=t.parent_trial, failure_class=t.failure_class, hypothesis=t.hypothesis[:300],
    )  # fmt: skip


def _slope(points: list[tuple[int, float]]) -> float:
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else 0.0


def _patch_diff(base: TrialRecord, other: TrialRecord) -> PatchDiff:
    lines = difflib.unified_diff((base.patch or "").splitlines(keepends=True), (other.patch or "").splitlines(keepends=True),
                                 f"trial-{base.number}.patch", f"trial-{other.number}.patch")  # fmt: skip
    text = "".join(lines)
    cut = len(text) > PATCH_DIFF_CHARS
    return PatchDiff(base=base.number, other=other.number, diff=text[:PATCH_DIFF_CHARS], cut=cut)
