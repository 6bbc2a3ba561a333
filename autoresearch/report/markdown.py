"""`write_report`: a campaign's Markdown report with PNG plots and MLflow links, and `report.html`."""

from __future__ import annotations

import json
import os
import warnings
from datetime import datetime, UTC
from pathlib import Path

import optuna

from autoresearch.campaign import (
    CampaignPaths,
    CampaignStatus,
    HoldoutSummary,
    OptunaBacked,
    TrialLedger,
    TrialRecord,
    TrialState,
    campaign_status,
    hours_unit,
)
from autoresearch.policy.lineage import lineage
import autoresearch.report.figures as figures
import autoresearch.report.html_page as html_page
import autoresearch.report.plots as plots
from autoresearch.report.confirmation import confirmation_section
from autoresearch.report.suspects import suspect_section
from tracking import LOCAL_MLFLOW_UI, mlflow_ui_base, mlflow_ui_url, pending_writes, resolve_tracking
from tracking.datasets import describe_datasets

MIN_TRIALS_FOR_IMPORTANCE = 5
"""Complete trials needed before parameter importances mean anything."""
MAX_VALUE_FOR_IMPORTANCE = 1e150
"""fANOVA sums squared objective values: beyond this they overflow a float (and Optuna's assertions fail)."""


def write_report(
    ledger: TrialLedger,
    out_dir: str | os.PathLike[str],
    *,
    home: str | os.PathLike[str] | None = None,
    now: datetime | None = None,
) -> Path:
    """Write `report.md`, its PNG plots and `report.html` (when plotly is installed) into `out_dir`
    (created); return the Markdown path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    now = now or datetime.now(UTC)
    status = campaign_status(ledger, now=now)
    trials = ledger.trials()
    campaign = ledger.campaign
    done = [t for t in trials if t.state is TrialState.complete]

    lines = [f"# Campaign report: {campaign.name}", ""]
    lines += _summary(ledger, status, now)
    importances, why_not = _importances(ledger, done)
    lines += [_interactive(ledger, status, importances, out / "report.html", now), ""]
    lines += ["## Best so far", ""]
    if done:
        plots.save(plots.draw_best_by_trial(trials, campaign.objective), out / "best_by_trial.png")
        plots.save(plots.draw_best_by_time(trials, campaign.objective, ledger.started_at), out / "best_by_time.png")
        lines += ["![best so far against trials](best_by_trial.png)", ""]
        lines += ["![best so far against time](best_by_time.png)", ""]
        lines += [_unplotted(trials), ""]
    else:
        lines += ["No trial has completed yet.", ""]

    lines += ["## Learning curves", ""]
    if any(t.intermediate_values for t in trials):
        plots.save(plots.draw_learning_curves(trials, campaign.objective), out / "learning_curves.png")
        lines += ["![learning curves](learning_curves.png)", ""]
    else:
        lines += [figures.NO_CURVES, ""]

    lines += _holdout_section(status.holdout)
    lines += ["## Parameter importances", ""]
    if importances:
        plots.save(plots.draw_importances(importances), out / "importances.png")
        lines += ["![parameter importances](importances.png)", "", "| parameter | importance |", "| --- | --- |"]
        lines += [f"| {name} | {value:.3f} |" for name, value in importances.items()] + [""]
    else:
        lines += [why_not, ""]

    lines += ["## Failures", ""]
    counts = plots.failure_counts(trials)
    if counts:
        plots.save(plots.draw_failures(counts), out / "failures.png")
        lines += ["![failures by class](failures.png)", "", "| class | trials |", "| --- | --- |"]
        lines += [f"| {name} | {count} |" for name, count in counts.most_common()] + [""]
        lines += _failure_excerpts(trials)
    else:
        lines += ["No trial failed.", ""]

    lines += confirmation_section(campaign, trials)
    lines += suspect_section(status)
    lines += _lineage_section(ledger, trials)
    lines += _trials_table(trials, ledger)
    lines += _datasets_section(ledger)
    lines += _mlflow_section(ledger, trials, home)
    notes = ledger.notes()
    if notes:
        lines += ["## Research log", ""]
        for note in notes:
            lines += [f"- **{note.at.astimezone():%Y-%m-%d %H:%M}** ({note.author}): {_one_line(note.text, 2000)}"]
        lines += [""]
    if isinstance(ledger, OptunaBacked):
        lines += ["## Explore", "", f"- Optuna dashboard: `optuna-dashboard {ledger.storage_url}`", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _holdout_section(summary: HoldoutSummary | None) -> list[str]:
    """Validation vs the hidden holdout for the evaluated leaders (docs/results.md)."""
    if summary is None:
        return []
    rho = "n/a (fewer than 2 values)" if summary.spearman is None else f"{summary.spearman:+.3f}"
    gap = "n/a" if summary.gap is None else f"{summary.gap:+.6g}"
    lines = ["## Holdout", "", f"The policy never saw these values. Spearman rank correlation of validation and "
             f"holdout: **{rho}**; overfitting gap (mean validation minus mean holdout, positive when validation "
             f"flatters): **{gap}**.", "", f"| trial | validation | holdout {summary.metric} |", "| --- | --- | --- |"]
    for row in summary.rows:
        held = f"{row.holdout:.6g}" if row.holdout is not None else f"none ({row.error})"
        lines.append(f"| {row.trial} | {row.validation:.6g} | {held} |")
    return [*lines, ""]


def _summary(ledger: TrialLedger, status: CampaignStatus, now: datetime) -> list[str]:
    campaign, used = ledger.campaign, status.budget_used
    objective = campaign.objective
    target = f", target {objective.target:g}" if objective.target is not None else ""
    reason = f" ({ledger.state_reason})" if ledger.state_reason else ""
    lines = [
        f"Generated {now.astimezone():%Y-%m-%d %H:%M %Z}. State: **{status.state.value}**{reason}.",
        "",
        f"Objective: `{objective.metric}` ({objective.mode.value}{target}).",
        "",
        f"| trials used | of | {hours_unit(used.real_gpus)} | LLM $ | elapsed |",
        "| --- | --- | --- | --- | --- |",
        f"| {used.trials} | {campaign.budget.max_trials} | {used.gpu_hours:.2f} | {used.llm_usd:.2f} | "
        f"{_duration(used.elapsed)} |",
        "",
    ]
    by_state = {s: sum(t.state is s for t in status.trials) for s in TrialState}
    lines += ["Trials by state: " + ", ".join(f"{s.value} {n}" for s, n in by_state.items() if n) + ".", ""]
    best = status.best_trial
    if best is not None:
        spread = f" ± {best.sd:.2g}" if best.sd is not None else ""
        lines += [
            f"**Best trial: #{best.number}**, {objective.metric} = {best.mean:.6g}{spread} (n={best.n}), "
            f"params `{_params(best.params)}`.",
            "",
        ]
        if status.separable is not None:
            verdict = "yes" if status.separable else "no"
            lines += [f"Separable from the runner-up, trial #{status.runner_up} (the means differ by more than 2 sd, "
                      f"the larger sd of the two): **{verdict}**.", ""]  # fmt: skip
    return lines


def _interactive(
    ledger: TrialLedger, status: CampaignStatus, importances: dict[str, float], path: Path, now: datetime
) -> str:
    """Write `report.html` when plotly is installed; the Markdown line that points to it or says why not."""
    missing = figures.plotly_missing()
    if missing is not None:
        path.unlink(missing_ok=True)  # not one from an earlier run, showing other trials
        return f"No interactive report (report.html): {missing}."
    html_page.write_html(ledger, status, importances, path, now)
    return (f"Interactive views (learning curves, parallel coordinates, slice, contour, importances, top trials): "
            f"[{path.name}]({path.name}), one self-contained page.")  # fmt: skip


def _unplotted(trials: list[TrialRecord]) -> str:
    """What the best-so-far plots leave out or mark, said under them."""
    pruned = sum(t.state is TrialState.pruned for t in trials)
    others = {s: sum(t.state is s for t in trials) for s in (TrialState.failed, TrialState.cancelled)}
    text = "The best-so-far line follows complete trials."
    if pruned:
        text += f" {pruned} pruned trial(s) are drawn as x at their last value before the cut (not a result)."
    missing = ", ".join(f"{n} {s.value}" for s, n in others.items() if n)
    return text + (f" Not drawn (no value): {missing}." if missing else "")


def _importances(ledger: TrialLedger, done: list[TrialRecord]) -> tuple[dict[str, float], str]:
    complete = len(done)
    if complete < MIN_TRIALS_FOR_IMPORTANCE:
        return {}, (
            f"Not enough complete trials for parameter importances ({complete}; "
            f"{MIN_TRIALS_FOR_IMPORTANCE} needed)."
        )
    if len(ledger.campaign.search_space) < 2:
        return {}, "Parameter importances need at least two parameters in the search space."
    if not isinstance(ledger, OptunaBacked):
        return {}, "Parameter importances need a ledger backed by an Optuna study."
    largest = max(abs(t.value or 0.0) for t in done)
    if largest > MAX_VALUE_FOR_IMPORTANCE:
        return {}, (f"Parameter importances cannot be computed: an objective value reaches {largest:.3g}, whose "
                    f"variance overflows a float (fANOVA needs values within +-{MAX_VALUE_FOR_IMPORTANCE:.0e}).")
    evaluator = optuna.importance.FanovaImportanceEvaluator(seed=0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return optuna.importance.get_param_importances(ledger.study_view(), evaluator=evaluator), ""
    except (RuntimeError, ValueError) as exc:
        return {}, f"Parameter importances could not be computed: {exc}"


def _failure_excerpts(trials: list[TrialRecord]) -> list[str]:
    lines = []
    for t in [t for t in trials if t.state is TrialState.failed][-5:]:
        if t.log_excerpt:
            tail = "\n".join(t.log_excerpt.strip().splitlines()[-8:])
            failure = t.failure_class.value if t.failure_class else "unknown"
            lines += [f"Trial #{t.number} ({failure}):", "", "```", tail, "```", ""]
    return lines


def _lineage_section(ledger: TrialLedger, trials: list[TrialRecord]) -> list[str]:
    """Code-edit campaigns: the chain of kept patches from the original code to the current
    parent, and every candidate with its parent, runs, mean and verdict."""
    campaign = ledger.campaign
    if campaign.code is None:
        return []
    lin = lineage(campaign, trials)
    by_number = {t.number: t for t in trials}
    lines = ["## Code lineage", ""]
    if lin.parent is None:
        return lines + ["No candidate has a result yet: new code starts from the campaign's folder.", ""]
    chain: list[int] = []
    at: int | None = lin.parent
    while at is not None and at not in chain:
        chain.append(at)
        at = by_number[at].parent_trial if at in by_number else None
    path = " -> ".join(["original code", *(f"#{n}" for n in reversed(chain))])
    lines += [f"New code starts from trial #{lin.parent} (mean {campaign.objective.metric} {lin.means[lin.parent]:.4g}).",
              f"Kept patches, oldest first: {path}.", "",
              "| # | parent | patch | runs | mean | verdict | hypothesis |", "|" + " --- |" * 7]  # fmt: skip
    for t in trials:
        if t.confirms is not None:
            continue
        mean = lin.means.get(t.number)
        if t.number == lin.parent:
            verdict = "current parent"
        elif t.number in lin.kept:
            verdict = "kept"
        elif mean is None:
            verdict = t.state.value
        else:
            verdict = "not kept"
        patch = f"{len(t.patch.splitlines())} lines" if t.patch else "none"
        parent = f"#{t.parent_trial}" if t.parent_trial is not None else "original"
        count = lin.runs.get(t.number, 0)
        lines.append(f"| {t.number} | {parent} | {patch} | {count} | {'' if mean is None else f'{mean:.4g}'} "
                     f"| {verdict} | {_one_line(t.hypothesis or t.rationale, 120)} |")  # fmt: skip
    return lines + ["", "Each trial's patch is in its MLflow run (artifact `patch/trial-N.patch`) and its "
                    "workspace (`campaigns/NAME/workspaces/trial-N`).", ""]  # fmt: skip


def _trials_table(trials: list[TrialRecord], ledger: TrialLedger) -> list[str]:
    lines = ["## Trials", "", "| # | state | value | params | job | MLflow run |", "|" + " --- |" * 6]
    for t in trials:
        value = f"{t.value:.6g}" if t.value is not None else ""
        state = t.state.value + (f" ({t.failure_class.value})" if t.failure_class else "")
        cells = [str(t.number), state, value, f"`{_params(t.params)}`", t.job_id or "", t.mlflow_run_id or ""]
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""]


def _datasets_section(ledger: TrialLedger) -> list[str]:
    data = ledger.campaign.data
    if not data:
        return []
    lines = ["## Datasets", "", "Recorded as MLflow dataset inputs of every trial's run.", "",
             "| name | path | digest |", "| --- | --- | --- |"]
    for d in describe_datasets({name: ds.path for name, ds in data.items()}):
        lines.append(f"| {d.name} | `{d.source}` | `{d.digest}` |")
    return lines + [""]


def _mlflow_section(ledger: TrialLedger, trials: list[TrialRecord], home: str | os.PathLike[str] | None) -> list[str]:
    campaign = ledger.campaign
    uri = resolve_tracking(campaign.tracking.uri, home).tracking_uri
    experiment_id = ledger.mlflow_experiment_id
    experiment = f"- Experiment: `{campaign.experiment}`" + (f" (id {experiment_id})" if experiment_id else "")
    lines = ["## MLflow", "", f"- Tracking URI: `{uri}`", experiment]
    folder = getattr(ledger, "folder", None)
    pending = pending_writes(CampaignPaths(folder).tracking_outbox) if folder is not None else 0
    if pending:
        lines.append(f"- {pending} writes not applied yet when this report was written (a writer is applying them; "
                     f"`autoresearch status {campaign.name}` shows when MLflow has every run)")  # fmt: skip
    base = mlflow_ui_base(uri)
    if uri.startswith("sqlite:"):
        lines.append(f"- Open it: `mlflow ui --backend-store-uri {uri}`, then {LOCAL_MLFLOW_UI}")
    if base and experiment_id:
        lines.append(f"- Runs: {mlflow_ui_url(base, experiment_id)}")
        runs = [(t.number, t.mlflow_run_id) for t in trials if t.mlflow_run_id]
        if runs:
            lines += ["", "| trial | run |", "| --- | --- |"]
            for number, run_id in runs:
                lines.append(f"| {number} | [{run_id}]({mlflow_ui_url(base, experiment_id, run_id)}) |")
    return lines + [""]


def _params(params: dict[str, object]) -> str:
    text = json.dumps({k: round(v, 6) if isinstance(v, float) else v for k, v in params.items()}, default=str)
    return _one_line(text, 160)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
