"""The report's PNG plots, drawn with matplotlib's object API on the Agg canvas (no pyplot,
no display, no global state)."""

from __future__ import annotations

import sys
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from autoresearch.campaign import Objective, TrialRecord, TrialState
from autoresearch.campaign.ranking import best_trial, running_best
from autoresearch.report.scale import value_scale


def _figure() -> tuple[Figure, Axes]:
    fig = Figure(figsize=(7, 4), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


_LINEAR_UP_TO = 1e15
"""Objective values beyond +-this are drawn on a symmetric log axis: a linear one cannot span
them (matplotlib's ticks overflow near +-1e308) nor show anything useful at that scale."""


def _value_axis(ax: Axes, values: list[float]) -> None:
    """A y axis that can hold `values`: linear, or symmetric log when they are enormous (with
    limits set here: autoscaling overflows there too)."""
    if any(abs(v) > _LINEAR_UP_TO for v in values):
        ax.set_yscale("symlog")
        with np.errstate(over="ignore"):  # its inverse transform overflows to inf near +-1e308: harmless
            ax.set_ylim(_outward(min(values), up=False), _outward(max(values), up=True))


def _outward(value: float, *, up: bool) -> float:
    """`value` moved a decade away from the data (up or down), within the largest float."""
    away = value * 10 if (value > 0) == up else value / 10
    return max(-sys.float_info.max, min(sys.float_info.max, away))


def save(fig: Figure, path: Path) -> Path:
    """Write `fig` as a PNG at `path`."""
    with np.errstate(over="ignore"):  # so does drawing a symlog axis near +-1e308 (`_value_axis`)
        fig.savefig(path, format="png")
    return path


def _scored(trials: list[TrialRecord], by_end: bool) -> list[TrialRecord]:
    """Complete and pruned trials with a value (a pruned trial's: its last intermediate value)."""
    done = [t for t in trials if t.state in (TrialState.complete, TrialState.pruned) and t.value is not None]
    if by_end:
        return sorted(done, key=lambda t: (t.ended_at is None, t.ended_at or datetime.min, t.number))
    return sorted(done, key=lambda t: t.number)


def _apply_scale(ax: Axes, values: list[float], keep: list[float]) -> str:
    """Log or clipped value axis when the values call for it (`scale.value_scale`), symmetric log when
    they are enormous (`_value_axis`); the note to show."""
    if any(abs(v) > _LINEAR_UP_TO for v in values):
        _value_axis(ax, values)
        return f"symmetric log scale: values beyond +-{_LINEAR_UP_TO:.0e}"
    scale = value_scale(values, keep)
    if scale.log:
        ax.set_yscale("log")
    elif scale.limits is not None:
        ax.set_ylim(*scale.limits)
    return scale.note


def _integer_x(ax: Axes, xs: list[int]) -> None:
    """Whole-number ticks on the x axis (trial numbers, steps): never 0.2, 0.4 for a 2-trial campaign."""
    if len(set(xs)) > 1:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    else:
        ax.set_xticks(sorted(set(xs)))  # one value: one tick, not a fractional range around it


def _title(ax: Axes, title: str, notes: list[str]) -> None:
    ax.set_title(title + "".join(f"\n({n})" for n in notes if n), fontsize=11)


def draw_best_by_trial(trials: list[TrialRecord], objective: Objective) -> Figure:
    """Each complete trial's value, each pruned trial's last value (x), and the best so far (of
    complete trials: a pruned value is not a result) against the trial number, on integer ticks."""
    scored = _scored(trials, by_end=False)
    done = [t for t in scored if t.state is TrialState.complete]
    pruned = [t for t in scored if t.state is TrialState.pruned]
    fig, ax = _figure()
    values = [cast(float, t.value) for t in done]  # scored trials have values
    ax.scatter([t.number for t in done], values, s=14, alpha=0.6, label="complete trial")
    if pruned:
        ax.scatter([t.number for t in pruned], [cast(float, t.value) for t in pruned], marker="x", s=22,
                   color="C7", label="pruned (last value before the cut)")  # fmt: skip
    best = running_best(values, objective)
    if done:
        ax.step([t.number for t in done], best, where="post", color="C1", label="best so far")
    note = _apply_scale(ax, [cast(float, t.value) for t in scored], best[-1:])
    _integer_x(ax, [t.number for t in scored])
    ax.set_xlabel("trial number")
    ax.set_ylabel(f"{objective.metric} ({objective.mode.value})")
    _title(ax, "Best so far against trials", [note])
    ax.legend(loc="best")
    return fig


def draw_best_by_time(trials: list[TrialRecord], objective: Objective, started_at: datetime) -> Figure:
    """The best value so far against the time complete trials ended, since the campaign started."""
    done = [t for t in _scored(trials, by_end=True) if t.state is TrialState.complete]
    seconds = [max(0.0, ((t.ended_at or started_at) - started_at).total_seconds()) for t in done]
    span = max(seconds, default=0.0)
    unit, factor = ("seconds", 1.0) if span < 120 else ("minutes", 60.0) if span < 3 * 3600 else ("hours", 3600.0)
    fig, ax = _figure()
    best = running_best([cast(float, t.value) for t in done], objective)
    ax.step([s / factor for s in seconds], best, where="post", color="C1", marker=".")
    note = _apply_scale(ax, best, best[-1:])
    ax.set_xlabel(f"{unit} since the campaign started")
    ax.set_ylabel(f"best {objective.metric}")
    _title(ax, "Best so far against time", [note])
    return fig


def draw_learning_curves(trials: list[TrialRecord], objective: Objective) -> Figure:
    """Every trial's intermediate values against the step, pruned trials grey with an x where they
    were cut, the best complete trial on top.

    Optuna draws this too (`optuna.visualization.matplotlib.plot_intermediate_values`): ours is drawn
    on the Agg canvas without pyplot's global figures, marks where pruned trials were cut, and keeps
    one legend entry per state where Optuna's lists every trial (unreadable at 200 trials).
    """
    curves = [t for t in trials if t.intermediate_values]
    fig, ax = _figure()
    best = best_trial(trials, objective)
    for t in curves:
        steps = sorted(t.intermediate_values)
        values = [t.intermediate_values[s] for s in steps]
        if t.state is TrialState.pruned:
            ax.plot(steps, values, color="C7", alpha=0.5, linewidth=1, marker=".", markersize=3)
            ax.scatter(steps[-1:], values[-1:], marker="x", color="C3", s=24, zorder=3)
        elif best is None or t.number != best.number:
            ax.plot(steps, values, color="C0", alpha=0.35, linewidth=1, marker=".", markersize=3)
    if best is not None and best.intermediate_values:
        steps = sorted(best.intermediate_values)
        ax.plot(steps, [best.intermediate_values[s] for s in steps], color="C1", linewidth=2, marker=".",
                label=f"best: #{best.number}")  # fmt: skip
    ax.plot([], [], color="C0", label="other trials")
    if any(t.state is TrialState.pruned for t in curves):
        ax.plot([], [], color="C7", marker="x", markeredgecolor="C3", label="pruned, x where cut")
    note = _apply_scale(ax, [v for t in curves for v in t.intermediate_values.values()], [])
    _integer_x(ax, [s for t in curves for s in t.intermediate_values])
    ax.set_xlabel("step")
    ax.set_ylabel(objective.metric)
    _title(ax, "Learning curves", [note])
    ax.legend(loc="best")
    return fig


def draw_importances(importances: dict[str, float]) -> Figure:
    """Horizontal bars, most important parameter on top."""
    names = list(importances)[::-1]
    fig, ax = _figure()
    ax.barh(names, [importances[n] for n in names], color="C0")
    ax.set_xlabel("importance (fANOVA, normalized)")
    ax.set_title("Parameter importances")
    return fig


def failure_counts(trials: list[TrialRecord]) -> Counter[str]:
    """Failed trials by failure class (`unknown` when none was recorded)."""
    return Counter(
        t.failure_class.value if t.failure_class else "unknown" for t in trials if t.state is TrialState.failed
    )


def draw_failures(counts: Counter[str]) -> Figure:
    fig, ax = _figure()
    names = sorted(counts, key=lambda k: -counts[k])
    ax.bar(names, [counts[n] for n in names], color="C3")
    ax.set_ylabel("failed trials")
    ax.set_title("Failures by class")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return fig
