"""`report.html`: the report's interactive views on one self-contained page (plotly.js inlined from
the installed `plotly` package: it opens offline, from a file, a CI artifact or an e-mail)."""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from autoresearch.campaign import CampaignStatus, OptunaBacked, TrialLedger, TrialRecord, TrialState, TrialSummary, ranked
import autoresearch.report.figures as figures
from autoresearch.report.plots import failure_counts

if TYPE_CHECKING:
    from plotly.graph_objects import Figure

TOP_K = 10
"""Rows of the top-k table."""

TrustColumn = tuple[str, Callable[[TrialRecord], str]]
"""A column of the top-k table: its header, and the cell of one trial."""


# --- trustworthy results (issue 29) ------------------------------------------------------
# The campaign knows what Optuna does not: whether a result is suspect (degraded hardware, a slow
# run) and the holdout the policy never saw. They come from the campaign's status; a new fact of
# that kind (a leader's mean ± sd over confirmation runs, here) is one more column and one more
# paragraph in `trust_section`, nothing else in this module.


def trust_columns(status: CampaignStatus) -> list[TrustColumn]:
    """Columns the top-k table adds: its mean ± sd (n) over its runs, or the trial it confirms (when
    any trial is confirmed), why a result is suspect, its holdout value (when run)."""
    suspect = {t.number: t.suspect_reason or "suspect" for t in status.trials if t.suspect}
    columns: list[TrustColumn] = []
    if any(t.confirms is not None for t in status.trials):
        runs = {t.number: _runs_text(t) for t in status.trials}
        columns.append(("mean ± sd (n)", lambda t: runs.get(t.number, "")))
    columns.append(("suspect", lambda t: suspect.get(t.number, "")))
    if status.holdout is not None:
        held = {r.trial: f"{r.holdout:.6g}" if r.holdout is not None else f"none ({r.error})"
                for r in status.holdout.rows}  # fmt: skip
        columns.append((f"holdout {status.holdout.metric}", lambda t: held.get(t.number, "")))
    return columns


def trust_section(status: CampaignStatus) -> str:
    """HTML under the top-k table: the holdout's rank correlation and overfitting gap, the suspect count."""
    parts = []
    summary = status.holdout
    if summary is not None:
        rho = "n/a" if summary.spearman is None else f"{summary.spearman:+.3f}"
        gap = "n/a" if summary.gap is None else f"{summary.gap:+.6g}"
        parts.append(f"<p id='holdout'>Holdout (never seen by the policy): Spearman rank correlation of validation "
                     f"and holdout <b>{rho}</b>; overfitting gap (mean validation minus mean holdout) <b>{gap}</b>.</p>")  # fmt: skip
    best = status.best_trial
    if best is not None and best.n is not None and best.n > 1 and best.mean is not None:
        verdict = "" if status.separable is None else (
            f"; separable from the runner-up, trial {status.runner_up}: <b>{'yes' if status.separable else 'no'}</b>")
        parts.append(f"<p id='confirmation'>Winner: trial {best.number}, mean ± sd over its runs "
                     f"<b>{html.escape(_runs_text(best))}</b>{verdict} (docs/results.md, Confirmation of the leaders).</p>")
    suspect = [t for t in status.trials if t.suspect]
    if suspect:
        nodes = sorted({n for t in suspect for n in t.nodes})
        parts.append(f"<p id='suspects'>{len(suspect)} suspect result(s), never declared best (nodes: "
                     f"{html.escape(', '.join(nodes))}): see the Markdown report's Suspect results.</p>")  # fmt: skip
    return "\n".join(parts)


def _runs_text(t: TrialSummary) -> str:
    """`0.9712 ± 0.0041 (n=3)` for an origin, `confirms #N` for a confirmation, else empty."""
    if t.confirms is not None:
        return f"confirms #{t.confirms}"
    if t.mean is None or t.n is None:
        return ""
    sd = f" ± {t.sd:.2g}" if t.sd is not None else ""
    return f"{t.mean:.6g}{sd} (n={t.n})"


# --- the page ----------------------------------------------------------------------------


def write_html(
    ledger: TrialLedger, status: CampaignStatus, importances: dict[str, float], path: Path, now: datetime
) -> Path:
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
    body += _top_table(trials, ledger, status)
    body.append(trust_section(status))
    body += _research_log(ledger)
    title = html.escape(f"{campaign.name}: campaign report")
    page = _PAGE.format(title=title, plotly=get_plotlyjs(), body="\n".join(body))
    path.write_text(page, encoding="utf-8")
    return path


def _top_table(trials: list[TrialRecord], ledger: TrialLedger, status: CampaignStatus) -> list[str]:
    top = ranked(trials, ledger.campaign.objective)[:TOP_K]
    if not top:
        return []
    names = list(ledger.campaign.search_space) or sorted({k for t in top for k in t.params})
    extra = trust_columns(status)
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
