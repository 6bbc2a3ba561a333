"""PNG plots of an eval: regret against trials, and against wall-clock time."""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

from evals.metrics import regret_at_time, time_curve
from evals.records import RunRecord
from evals.run import Results
from evals.tasks import curve, minimum


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _band(rows: list[list[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median, 25th and 75th percentile per column (inf shown as a gap)."""
    data = np.array(rows, dtype=float)
    data[~np.isfinite(data)] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column with no result yet stays a gap
        return tuple(np.nanpercentile(data, q, axis=0) for q in (50, 25, 75))


def plot_regret_by_trials(results: Results, out: Path) -> Path | None:
    """regret_vs_trials.png: median best-so-far regret (IQR band) per arm, one panel per function."""

    groups: dict[str, dict[str, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in results.runs:
        if r.part in ("quality", "stack", "llm"):
            groups[r.task][f"{r.arm.value} ({r.slots} slot{'s' if r.slots > 1 else ''}, {r.part})"].append(r)
    if not groups:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 4.2), squeeze=False)
    for ax, (task, series) in zip(axes[0], sorted(groups.items())):
        for label, runs in sorted(series.items()):
            n = min(len(r.trials) for r in runs)
            med, lo, hi = _band([curve(r)[:n] for r in runs])
            x = np.arange(1, n + 1)
            ax.plot(x, med, label=f"{label}, {len(runs)} seeds")
            ax.fill_between(x, lo, hi, alpha=0.15)
        ax.set_yscale("log")
        ax.set_title(f"{task} ({results.suite.name} suite)")
        ax.set_xlabel("trials")
        ax.set_ylabel("simple regret (median, IQR)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "regret_vs_trials.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_regret_by_time(results: Results, out: Path) -> Path | None:
    """regret_vs_wallclock.png: median regret reached by each time, per arm and slot count."""

    groups: dict[str, dict[str, list[RunRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in results.runs:
        if r.part == "wallclock":
            groups[f"{r.task} (target {r.target_regret})"][f"{r.arm.value}, {r.slots} slot(s)"].append(r)
    if not groups:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 4.2), squeeze=False)
    for ax, (task, series) in zip(axes[0], sorted(groups.items())):
        end = max(r.wall_s for runs in series.values() for r in runs)
        grid = np.linspace(0.0, end, 200)
        for label, runs in sorted(series.items()):
            curves = [time_curve(r.ends, r.values, minimum(r.task)) for r in runs]
            med, lo, hi = _band([[regret_at_time(c, t) for t in grid] for c in curves])
            ax.plot(grid, med, label=f"{label}, {len(runs)} seeds")
            ax.fill_between(grid, lo, hi, alpha=0.15)
        target = next(r.target_regret for runs in series.values() for r in runs)
        if target and math.isfinite(target):
            ax.axhline(target, color="grey", linestyle=":", linewidth=1)
        ax.set_yscale("log")
        ax.set_title(f"{task} ({results.suite.name} suite)")
        ax.set_xlabel("wall clock (s)")
        ax.set_ylabel("best regret so far (median, IQR)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "regret_vs_wallclock.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
