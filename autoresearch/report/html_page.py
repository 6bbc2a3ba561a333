"""`report.html`: the report's interactive views on one self-contained page (plotly.js inlined from
the installed `plotly` package: it opens offline, from a file, a CI artifact or an e-mail)."""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from autoresearch.campaign import OptunaBacked, TrialLedger, TrialRecord, TrialState, ranked
from autoresearch.report import figures
from autoresearch.report.plots import failure_counts

if TYPE_CHECKING:
    from plotly.graph_objects import Figure

TOP_K = 10
"""Rows of the top-k table."""

TrustColumn = tuple[str, Callable[[TrialRecord], str]]
"""A column of the top-k table: its header, and the cell of one trial."""


# --- hook for trustworthy results (issue 29) ---------------------------------------------
# The campaign knows what Optuna does not: a leader's mean +- sd over its confirmation runs, whether
# a result is suspect (degraded hardware), and the holdout gap. When the trial records carry those
# facts, return their columns here (header, cell) and their section (HTML) from `trust_section`;
# the page shows them in the top-k table and under it. Nothing else in this module needs to change.


def trust_columns(trials: list[TrialRecord]) -> list[TrustColumn]:
    """Columns the top-k table adds for confirmations (mean +- sd, n), suspect trials and the holdout."""
    return []


def trust_section(ledger: TrialLedger, trials: list[TrialRecord]) -> str:
    """HTML under the top-k table: the holdout gap of the leaders, suspect trials re-run elsewhere."""
    return ""


# --- the page ----------------------------------------------------------------------------


def write_html(ledger: TrialLedger, importances: dict[str, float], path: Path, now: datetime) -> Path:
    """Write the page at `path` (plotly must be installed: `figures.plotly_missing()`)."""
    from plotly.offline import get_plotlyjs

    campaign = ledger.campaign
    objective = campaign.objective
    trials = ledger.trials()
    views: list[tuple[str, Figure | str]] = []  # a str: why the view is not drawn
    if any(t.state is TrialState.complete for t in trials):
        views += [("Best so far against trials", figures.best_by_trial(trials, objective)),
                  ("Best so far against time", figures.best_by_time(trials, objective, ledger.started_at))]  # fmt: skip
    else:
        views.append(("Best so far", "No trial has completed yet."))
    study = ledger.study_view() if isinstance(ledger, OptunaBacked) else None
    if study is None:
        views.append(("Parameter views", "Learning curves and parameter views need an Optuna-backed ledger."))
    else:
        if any(t.intermediate_values for t in trials):
            views.append(("Learning curves", figures.drawn(lambda: figures.learning_curves(study, trials))))
        else:
            views.append(("Learning curves", figures.NO_CURVES))
        if campaign.search_space:
            views += list(figures.optuna_views(study, objective.metric, len(campaign.search_space)).items())
    if importances:
        views.append(("Parameter importances", figures.importances(importances)))
    counts = failure_counts(trials)
    views.append(("Failures by class", figures.failures(counts) if counts else "No trial failed."))

    body = [f"<h1>Campaign report: {html.escape(campaign.name)}</h1>",
            f"<p>Generated {now.astimezone():%Y-%m-%d %H:%M %Z}. State: <b>{html.escape(ledger.state.value)}</b>. "
            f"Objective: <code>{html.escape(objective.metric)}</code> ({objective.mode.value}).</p>"]  # fmt: skip
    for i, (title, view) in enumerate(views):
        body.append(f"<section><h2>{html.escape(title)}</h2>")
        if isinstance(view, str):
            body.append(f"<p>{html.escape(view)}</p>")
        else:
            body.append(view.to_html(full_html=False, include_plotlyjs=False, div_id=f"view-{i}",
                                     config={"displaylogo": False, "responsive": True}))  # fmt: skip
        body.append("</section>")
    body += _top_table(trials, ledger)
    body.append(trust_section(ledger, trials))
    body += _research_log(ledger)
    title = html.escape(f"{campaign.name}: campaign report")
    page = _PAGE.format(title=title, plotly=get_plotlyjs(), body="\n".join(body))
    path.write_text(page, encoding="utf-8")
    return path


def _top_table(trials: list[TrialRecord], ledger: TrialLedger) -> list[str]:
    top = ranked(trials, ledger.campaign.objective)[:TOP_K]
    if not top:
        return []
    names = list(ledger.campaign.search_space) or sorted({k for t in top for k in t.params})
    extra = trust_columns(trials)
    head = ["#", ledger.campaign.objective.metric, *names, *(h for h, _ in extra), "hypothesis"]
    rows = ["<section><h2>Top trials</h2><table id='top-trials'><thead><tr>"
            + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"]  # fmt: skip
    for t in top:
        cells = [str(t.number), f"{t.value:.6g}", *(_cell(t.params.get(n)) for n in names),
                 *(cell(t) for _, cell in extra), t.hypothesis or t.rationale]  # fmt: skip
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return [*rows, "</tbody></table></section>"]


def _research_log(ledger: TrialLedger) -> list[str]:
    notes = ledger.notes()
    if not notes:
        return []
    items = [f"<li><b>{n.at.astimezone():%Y-%m-%d %H:%M}</b> ({html.escape(n.author)}): {html.escape(n.text)}</li>"
             for n in notes]  # fmt: skip
    return ["<section><h2>Research log</h2><ul id='research-log'>", *items, "</ul></section>"]


def _cell(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else "" if value is None else str(value)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }}
section {{ margin: 2em 0; }} table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ddd; padding: 4px 8px; text-align: left; font-size: 14px; }}
th {{ background: #f4f4f4; }}
</style>
<script type="text/javascript">{plotly}</script>
</head><body>
{body}
</body></html>
"""
