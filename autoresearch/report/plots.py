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

from autoresearch.campaign import Objective, TrialRecord, TrialState
from autoresearch.campaign.ranking import running_best


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


def _save(fig: Figure, path: Path) -> Path:
    with np.errstate(over="ignore"):  # so does drawing a symlog axis near +-1e308 (`_value_axis`)
        fig.savefig(path, format="png")
    return path


def _complete(trials: list[TrialRecord], by_end: bool) -> list[TrialRecord]:
    done = [t for t in trials if t.state is TrialState.complete and t.value is not None]
    if by_end:
        return sorted(done, key=lambda t: (t.ended_at is None, t.ended_at or datetime.min, t.number))
    return sorted(done, key=lambda t: t.number)


def plot_best_by_trial(trials: list[TrialRecord], objective: Objective, path: Path) -> Path:
    """Each complete trial's value, and the best so far, against the trial number."""
    done = _complete(trials, by_end=False)
    values = [cast(float, t.value) for t in done]  # complete trials have values
    fig, ax = _figure()
    ax.scatter([t.number for t in done], values, s=14, alpha=0.5, label="trial value")
    best = running_best(values, objective)
    ax.step([t.number for t in done], best, where="post", color="C1", label="best so far")
    _value_axis(ax, values)
    ax.set_xlabel("trial number")
    ax.set_ylabel(f"{objective.metric} ({objective.mode.value})")
    ax.set_title("Best so far against trials")
    ax.legend(loc="best")
    return _save(fig, path)


def plot_best_by_time(trials: list[TrialRecord], objective: Objective, started_at: datetime, path: Path) -> Path:
    """The best value so far against the time complete trials ended, since the campaign started."""
    done = _complete(trials, by_end=True)
    seconds = [max(0.0, ((t.ended_at or started_at) - started_at).total_seconds()) for t in done]
    span = max(seconds, default=0.0)
    unit, scale = ("seconds", 1.0) if span < 120 else ("minutes", 60.0) if span < 3 * 3600 else ("hours", 3600.0)
    fig, ax = _figure()
    best = running_best([cast(float, t.value) for t in done], objective)
    ax.step([s / scale for s in seconds], best, where="post", color="C1", marker=".")
    _value_axis(ax, best)
    ax.set_xlabel(f"{unit} since the campaign started")
    ax.set_ylabel(f"best {objective.metric}")
    ax.set_title("Best so far against time")
    return _save(fig, path)


def plot_importances(importances: dict[str, float], path: Path) -> Path:
    """Horizontal bars, most important parameter on top."""
    names = list(importances)[::-1]
    fig, ax = _figure()
    ax.barh(names, [importances[n] for n in names], color="C0")
    ax.set_xlabel("importance (fANOVA, normalized)")
    ax.set_title("Parameter importances")
    return _save(fig, path)


def failure_counts(trials: list[TrialRecord]) -> Counter[str]:
    """Failed trials by failure class (`unknown` when none was recorded)."""
    return Counter(
        t.failure_class.value if t.failure_class else "unknown" for t in trials if t.state is TrialState.failed
    )


def plot_failures(counts: Counter[str], path: Path) -> Path:
    fig, ax = _figure()
    names = sorted(counts, key=lambda k: -counts[k])
    ax.bar(names, [counts[n] for n in names], color="C3")
    ax.set_ylabel("failed trials")
    ax.set_title("Failures by class")
    ax.yaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]  # matplotlib stubs: Locator.set_params takes no params
    return _save(fig, path)
