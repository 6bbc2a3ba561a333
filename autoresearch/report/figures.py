"""The report's interactive (plotly) figures.

Optuna draws most of them from the ledger's study (`optuna.visualization`: learning curves,
parallel coordinates, slice, contour, timeline). Ours differ where the campaign knows more than
the study, or reads better:

- learning curves: Optuna's figure, plus an x where each pruned trial was cut and a log axis when
  the values span decades (`scale.value_scale`); the dashboard draws the same view from the trial
  records (`trial_curves`), as its pages read the ledger with sqlite3 and never load Optuna;
- best so far: Optuna's `plot_optimization_history` leaves pruned trials out and scales linearly;
  ours marks them and shares the PNG's axis rules (log or clipped, integer trial ticks);
- importances: the numbers are Optuna's (fANOVA, computed once for the Markdown table too); only
  the bars are drawn here, so the study is not evaluated twice;
- failures by class: Optuna does not know why a trial failed (`TrialRecord.failure_class`);
- the dashboard's parallel coordinates and slice (`trial_parallel`, `trial_slice`) are drawn from
  the trial records, in the shape of Optuna's (`plot_parallel_coordinate`: the objective first, then
  each parameter, lines coloured by the objective, categories and log scales on their axes;
  `plot_slice`: one panel per parameter, dots coloured by trial number), because the dashboard never
  loads Optuna: `optuna.visualization` imports matplotlib (seconds in a server that answers pages in
  milliseconds), and its figures need a `Study` rebuilt from the records (about as long again for
  1k trials) where these read the records the page already holds.

plotly is imported lazily (it is needed only here, in `html_page` and by the dashboard's chart routes): callers
check `plotly_missing()` first.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from autoresearch.campaign import Campaign, Objective, TrialRecord, TrialState
from autoresearch.campaign.ranking import running_best
from autoresearch.report.scale import ValueScale, integer_step, value_scale

NO_CURVES = "No trial has reported an intermediate value yet (a step of its objective metric)."
"""Said where the learning curves would be (Markdown, report.html, the dashboard)."""

if TYPE_CHECKING:
    import optuna
    from plotly.graph_objects import Figure

PLOTLY_PIN = "plotly==7.1.0"
"""The version the project is tested with (constraints.txt pins the same; pyproject.toml declares the range)."""


def plotly_missing() -> str | None:
    """Why the interactive views cannot be drawn here, or None when plotly is installed."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        return f"plotly is not installed in this environment; `pip install {PLOTLY_PIN}` and run the report again"
    return None


def _go():  # plotly ships no type information: its objects are Any here
    import plotly.graph_objects as go

    return go


def _styled(fig: Figure, title: str, scale: ValueScale | None = None) -> Figure:
    note = f" <sub>({scale.note})</sub>" if scale is not None and scale.note else ""
    fig.update_layout(title=title + note, template="plotly_white", margin={"l": 70, "r": 20, "t": 60, "b": 50})
    if scale is not None and scale.log:
        fig.update_yaxes(type="log")
    elif scale is not None and scale.limits is not None:
        fig.update_yaxes(range=list(scale.limits))
    return fig


def _optuna(draw: Callable[..., Figure], *args: object, **kwargs: object) -> Figure:
    with warnings.catch_warnings():  # few trials, or experimental: the figure says what it can
        warnings.simplefilter("ignore")
        return draw(*args, **kwargs)


def drawn(draw: Callable[[], Figure]) -> Figure | str:
    """The figure, or why Optuna could not draw it (objective values near +-1e308 overflow its
    colour scales): one view that cannot be drawn does not cost the report its other views."""
    try:
        return draw()
    except (ValueError, ArithmeticError) as exc:
        return f"Optuna could not draw this view ({type(exc).__name__}: {exc})."


def learning_curves(study: optuna.Study, trials: list[TrialRecord]) -> Figure:
    """Optuna's intermediate-values plot, with an x where each pruned trial was cut."""
    from optuna.visualization import plot_intermediate_values

    return _curve_marks(_optuna(plot_intermediate_values, study), trials)


def trial_curves(trials: list[TrialRecord]) -> dict[str, Any]:
    """The same view drawn from the trial records, for pages that do not load Optuna (the dashboard
    reads the ledger with sqlite3): one line per trial that reported a value, cuts marked. Like
    `trial_parallel` and `trial_slice`, a figure as a plain dict (`_with_traces`; written with
    `plotly.io.to_json(..., validate=False)`)."""
    curves = [{"type": "scatter", "x": sorted(t.intermediate_values),
               "y": [t.intermediate_values[s] for s in sorted(t.intermediate_values)], "mode": "lines+markers",
               "name": f"Trial{t.number}", "marker": {"size": 4}}
              for t in trials if t.intermediate_values]  # fmt: skip
    fig = _go().Figure()
    fig.update_xaxes(title="Step")
    fig.update_yaxes(title="Intermediate Value")
    if not curves:
        fig.add_annotation(text=NO_CURVES, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return _with_traces(_curve_marks(fig, trials), curves)


def _axis(name: str, spec: Any, values: list[Any]) -> dict[str, Any]:
    """A parallel-coordinates dimension for parameter `name` (`spec`: its search-space entry):
    categories as their index with their labels, log-scaled numbers as log10 with their values."""
    if spec.type == "categorical":
        labels = [str(c) for c in spec.choices]
        index = {label: i for i, label in enumerate(labels)}
        return {"label": name, "values": [index.get(str(v), -1) for v in values], "tickvals": list(range(len(labels))),
                "ticktext": labels}  # fmt: skip
    if spec.log:
        ticks = [spec.low * (spec.high / spec.low) ** (k / 4) for k in range(5)]
        return {"label": name, "values": [math.log10(v) for v in values], "tickvals": [math.log10(t) for t in ticks],
                "ticktext": [f"{t:.3g}" for t in ticks]}  # fmt: skip
    return {"label": name, "values": values, "range": [spec.low, spec.high]}


def _with_traces(fig: Figure, traces: list[dict[str, Any]]) -> dict[str, Any]:
    """`fig` (axes, titles, notes) with `traces` added as plain dicts: plotly's checks of traces of
    1k trials took most of a second; the rest of a figure, milliseconds."""
    drawn = fig.to_plotly_json()
    return {**drawn, "data": [*traces, *drawn["data"]]}


def trial_parallel(trials: list[TrialRecord], campaign: Campaign) -> dict[str, Any]:
    """Parallel coordinates of the complete trials: the objective, then each parameter."""
    done = [t for t in trials if t.state is TrialState.complete and t.value is not None]
    space = campaign.search_space
    names = [n for n in space if all(n in t.params for t in done)]
    metric = campaign.objective.metric
    values = [t.value for t in done]
    dims = [{"label": metric, "values": values}, *(_axis(n, space[n], [t.params[n] for t in done]) for n in names)]
    reverse = campaign.objective.direction == "minimize"  # the better trials drawn in the darker colour
    line = {"color": values, "colorscale": "Blues", "reversescale": reverse, "showscale": True,
            "colorbar": {"title": {"text": metric}}}  # fmt: skip
    fig = _go().Figure()
    if not done:
        fig.add_annotation(text="No trial has completed yet.", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    fig = _styled(fig, f"Parallel coordinates ({len(done)} complete trials)")
    fig.update_layout(margin={"t": 110})  # the axes' labels sit above the plot, under the title
    return _with_traces(fig, [{"type": "parcoords", "dimensions": dims, "line": line}] if done else [])


def trial_slice(trials: list[TrialRecord], campaign: Campaign) -> dict[str, Any]:
    """The objective against each parameter, one panel per parameter (complete trials)."""
    from plotly.subplots import make_subplots

    done = [t for t in trials if t.state is TrialState.complete and t.value is not None]
    space = campaign.search_space
    fig = make_subplots(rows=1, cols=max(1, len(space)), shared_yaxes=True, horizontal_spacing=0.03)
    numbers = [t.number for t in done]
    traces = []
    for col, (name, spec) in enumerate(space.items(), start=1):
        shown = [t for t in done if name in t.params]
        axis = "" if col == 1 else str(col)  # make_subplots names the panels' axes x, x2, x3 ...
        traces.append({
            "type": "scatter", "x": [t.params[name] for t in shown], "y": [t.value for t in shown], "mode": "markers",
            "name": name, "showlegend": False, "text": [f"trial {t.number}" for t in shown], "xaxis": f"x{axis}",
            "yaxis": f"y{axis}", "marker": {"color": [t.number for t in shown], "colorscale": "Blues",
            "cmin": min(numbers, default=0), "cmax": max(numbers, default=1), "showscale": col == 1,
            "colorbar": {"title": {"text": "trial"}}, "line": {"width": 0.5, "color": "grey"}},
        })  # fmt: skip
        kind = "category" if spec.type == "categorical" else "log" if spec.log else "linear"
        fig.update_xaxes(title=name, type=kind, row=1, col=col)
    fig.update_yaxes(title=campaign.objective.metric, row=1, col=1)
    scale = value_scale([t.value for t in done if t.value is not None])
    return _with_traces(_styled(fig, "Slice: the objective against each parameter", scale), traces)


def _curve_marks(fig: Figure, trials: list[TrialRecord]) -> Figure:
    """What ours adds to the learning curves: an x where each pruned trial was cut, whole-number
    steps, and a log axis when the values span decades."""
    cut = [t for t in trials if t.state is TrialState.pruned and t.intermediate_values]
    if cut:
        last = [max(t.intermediate_values) for t in cut]
        fig.add_trace(_go().Scatter(
            x=last, y=[t.intermediate_values[s] for t, s in zip(cut, last)], mode="markers", name="pruned: cut here",
            marker={"symbol": "x", "size": 10, "color": "crimson"}, text=[f"Trial{t.number}" for t in cut],
        ))  # fmt: skip
    steps = [s for t in trials for s in t.intermediate_values] or [0]
    fig.update_xaxes(tick0=0, dtick=integer_step(min(steps), max(steps)))
    scale = value_scale([v for t in trials for v in t.intermediate_values.values()])
    return _styled(fig, "Learning curves (intermediate values)", scale)


def optuna_views(study: optuna.Study, metric: str, params: int) -> dict[str, Figure | str]:
    """Parallel coordinates, slice, contour (two parameters or more) and timeline, as Optuna draws
    them (or why it could not)."""
    from optuna import visualization as vis

    draws: dict[str, Callable[[], Figure]] = {
        "Parallel coordinates": lambda: _optuna(vis.plot_parallel_coordinate, study, target_name=metric),
        "Slice: objective against each parameter": lambda: _optuna(vis.plot_slice, study, target_name=metric),
    }
    if params >= 2:
        draws["Contour: pairs of parameters"] = lambda: _optuna(vis.plot_contour, study, target_name=metric)
    draws["Timeline"] = lambda: _optuna(vis.plot_timeline, study)
    views = {title: drawn(draw) for title, draw in draws.items()}
    return {title: view if isinstance(view, str) else _styled(view, title) for title, view in views.items()}


def best_by_trial(trials: list[TrialRecord], objective: Objective) -> Figure:
    """Complete trials' values, pruned trials' last values (x), and the best so far, by trial number."""
    go = _go()
    scored = [t for t in trials if t.state in (TrialState.complete, TrialState.pruned) and t.value is not None]
    done = [t for t in scored if t.state is TrialState.complete]
    pruned = [t for t in scored if t.state is TrialState.pruned]
    values = [t.value for t in done if t.value is not None]
    best = running_best(values, objective)
    fig = go.Figure([
        go.Scatter(x=[t.number for t in done], y=values, mode="markers", name="complete trial", opacity=0.7),
        go.Scatter(x=[t.number for t in pruned], y=[t.value for t in pruned], mode="markers",
                   name="pruned (last value before the cut)", marker={"symbol": "x", "color": "grey"}),
        go.Scatter(x=[t.number for t in done], y=best, mode="lines", line={"shape": "hv"}, name="best so far"),
    ])  # fmt: skip
    numbers = [t.number for t in trials] or [0]
    fig.update_xaxes(title="trial number", tick0=0, dtick=integer_step(min(numbers), max(numbers)))
    fig.update_yaxes(title=f"{objective.metric} ({objective.mode.value})")
    scale = value_scale([t.value for t in scored if t.value is not None], best[-1:])
    return _styled(fig, "Best so far against trials", scale)


def best_by_time(trials: list[TrialRecord], objective: Objective, started_at: datetime) -> Figure:
    """The best value so far against the time complete trials ended."""
    done = [t for t in trials if t.state is TrialState.complete and t.value is not None]
    done.sort(key=lambda t: (t.ended_at or started_at, t.number))
    best = running_best([t.value for t in done if t.value is not None], objective)
    go = _go()
    fig = go.Figure(go.Scatter(x=[t.ended_at or started_at for t in done], y=best, mode="lines+markers",
                               line={"shape": "hv"}, name="best so far", text=[f"#{t.number}" for t in done]))  # fmt: skip
    fig.update_xaxes(title="time the trial ended")
    fig.update_yaxes(title=f"best {objective.metric}")
    return _styled(fig, "Best so far against time", value_scale(best, best[-1:]))


def importances(values: dict[str, float]) -> Figure:
    """Optuna's fANOVA importances as bars, the most important on top."""
    names = list(values)[::-1]
    fig = _go().Figure(_go().Bar(x=[values[n] for n in names], y=names, orientation="h"))
    fig.update_xaxes(title="importance (fANOVA, normalized)")
    return _styled(fig, "Parameter importances")


def failures(counts: Counter[str]) -> Figure:
    """Failed trials by failure class."""
    names = sorted(counts, key=lambda k: -counts[k])
    fig = _go().Figure(_go().Bar(x=names, y=[counts[n] for n in names], marker={"color": "indianred"}))
    fig.update_yaxes(title="failed trials", dtick=integer_step(0, max(counts.values(), default=1)))
    return _styled(fig, "Failures by class")
