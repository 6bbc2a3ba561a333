"""The morning report: Markdown with PNG plots, one section per campaign, diffed against the
snapshot of the night before.

`$AUTORESEARCH_HOME/nightly/<night id>/report.md` with `gpu_hours.png` (when slots were held),
`failures.png` (when trials failed) and one `best-<campaign>.png` per campaign that has a complete
trial. Hours of held slots are GPU-hours only on physical GPUs, slot-hours otherwise.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from autoresearch.campaign import Ledger, LedgerError, TrialRecord, TrialState, hours_unit, on_real_gpus
from autoresearch.nightly.night import CampaignNight, NightResult
from autoresearch.nightly.snapshot import (
    CampaignSnapshot,
    NightSnapshot,
    previous_snapshot,
    save_snapshot,
    snapshot_campaign,
)
from autoresearch.report.plots import draw_best_by_trial, draw_failures, save
from compute import Client, ComputeError, NodeState, resolve_home

Home = str | os.PathLike[str] | None


def write_morning_report(result: NightResult, *, home: Home = None) -> Path:
    """Write the night's report and snapshot; returns the report path."""
    folder = resolve_home(home) / "nightly" / result.night
    folder.mkdir(parents=True, exist_ok=True)
    before = previous_snapshot(result.night, home)
    ledgers = {}
    for entry in result.campaigns:
        if entry.name:
            try:
                ledgers[entry.name] = Ledger.load(entry.name, home)
            except LedgerError:
                continue
    now = NightSnapshot(night=result.night, campaigns={n: snapshot_campaign(lg) for n, lg in ledgers.items()})
    save_snapshot(now, home)
    since = result.started_at
    tonight = {n: [t for t in lg.trials() if t.ended_at and t.ended_at >= since] for n, lg in ledgers.items()}
    gpu = {n: sum(t.gpu_seconds for t in ts) / 3600 for n, ts in tonight.items()}
    unit = hours_unit(on_real_gpus([t for ts in tonight.values() for t in ts]))
    failures: Counter[str] = Counter()
    for ts in tonight.values():
        failed = [t for t in ts if t.state is TrialState.failed]
        failures.update(t.failure_class.value if t.failure_class else "unknown" for t in failed)

    lines = [
        f"# Nightly report: {result.started_at:%Y-%m-%d %H:%M} to {result.until:%H:%M}",
        "",
        f"Window {result.started_at:%Y-%m-%d %H:%M:%S} -> {result.until:%Y-%m-%d %H:%M:%S}; "
        f"ended {result.ended_at:%H:%M:%S}" + (f" (early: {result.ended_early})" if result.ended_early else "") + "."
        if result.ended_at else "",
        f"Jobs still pending or running after the window: {result.jobs_left_running}.",
        f"Compared with: {'night ' + before.night if before else 'nothing (first night)'}.",
        "",
        f"| campaign | state | trials tonight | best so far | since last night | {unit} tonight | faults retried |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for entry in result.campaigns:
        snap = now.campaigns.get(entry.name or "")
        if snap is None:
            lines.append(f"| {entry.name or entry.config} | not run | 0 | - | - | 0 | {len(entry.faults)} |")
            continue
        prior = before.campaigns.get(snap.name) if before else None
        lines.append(f"| {snap.name} | {snap.state} | {len(tonight[snap.name])} | {_value(snap.best_value)} | "
                     f"{_change(snap, prior)} | {gpu[snap.name]:.3g} | {len(entry.faults)} |")  # fmt: skip
    lines += ["", "## Compute", ""]
    if sum(gpu.values()) > 0:
        _plot_gpu_hours(gpu, unit, folder / "gpu_hours.png")
        lines += [f"{unit} tonight: {sum(gpu.values()):.3g} (all campaigns).", f"![{unit} by campaign](gpu_hours.png)"]
    else:
        lines.append("No trial held a GPU slot tonight (0 slot-hours), so there is no chart of them.")
    lines += ["", *_quarantined(home), ""]
    lines += ["## Failures tonight", ""]
    if failures:
        save(draw_failures(failures), folder / "failures.png")
        lines += [", ".join(f"{k}: {v}" for k, v in failures.most_common()), "", "![failures](failures.png)", ""]
    else:
        lines += ["No trial failed tonight.", ""]
    for entry in result.campaigns:
        lines += _campaign_section(entry, now.campaigns.get(entry.name or ""), before, ledgers.get(entry.name or ""),
                                   tonight.get(entry.name or "", []), folder)  # fmt: skip
    path = folder / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _campaign_section(entry: CampaignNight, snap: CampaignSnapshot | None, before: NightSnapshot | None,
                      ledger: Ledger | None, tonight: list[TrialRecord], folder: Path) -> list[str]:  # fmt: skip
    lines = [f"## {entry.name or entry.config}", ""]
    if entry.skipped:
        lines += [f"Skipped: {entry.skipped}", ""]
    for fault in entry.faults:
        lines.append(f"- fault (retried): {fault[:300]}")
    if snap is None or ledger is None:
        return [*lines, ""]
    prior = before.campaigns.get(snap.name) if before else None
    states = Counter(t.state.value for t in tonight)
    lines += [
        f"- state: {snap.state}" + (f" ({snap.reason})" if snap.reason else ""),
        f"- trials: {snap.trials}/{snap.max_trials} counted, {snap.complete} complete; tonight ended: "
        + (", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "none"),
        "- best so far: " + (f"trial {snap.best_number}: {_value(snap.best_value)} ({_params(snap.best_params)})"
                              if snap.best_number is not None else "no complete trial yet"),
        f"- since last night: {_change(snap, prior)}",
        f"- {hours_unit(snap.real_gpus)}: {snap.gpu_hours:.3g} in all",
        "- failures so far: " + (", ".join(f"{k}: {v}" for k, v in sorted(snap.failures.items())) or "none"),
    ]  # fmt: skip
    queued = [t for t in ledger.trials() if t.state is TrialState.proposed and t.resume_of is not None]
    if queued:
        lines.append(f"- stopped at the window's end and queued for the next night (to resume from their "
                     f"checkpoints): {len(queued)} trial(s)")
    if snap.best_number is not None:
        image = f"best-{snap.name}.png"
        save(draw_best_by_trial(ledger.trials(), ledger.campaign.objective), folder / image)
        lines += ["", f"![best so far of {snap.name}]({image})"]
    return [*lines, ""]


def _change(now: CampaignSnapshot, prior: CampaignSnapshot | None) -> str:
    if prior is None:
        return f"first night: {now.complete} complete trial(s)"
    done = now.complete - prior.complete
    if now.best_value is None:
        return f"+{done} complete, no result yet"
    if prior.best_value is None or now.best_number != prior.best_number:
        was = _value(prior.best_value) if prior.best_value is not None else "none"
        return f"+{done} complete; new best {_value(now.best_value)} (trial {now.best_number}; was {was})"
    return f"+{done} complete; best unchanged"


def _quarantined(home: Home) -> list[str]:
    try:
        client = Client(home, autostart=False)
        try:
            nodes = client.nodes()
        finally:
            client.close()
    except ComputeError as exc:
        return [f"Nodes: unknown ({exc})."]
    bad = [n for n in nodes if n.state is NodeState.quarantined]
    if not bad:
        return [f"Quarantined nodes: none ({len(nodes)} node(s))."]
    return ["Quarantined nodes:", "", *(f"- {n.name}: {n.reason or 'no reason recorded'}" for n in bad)]


def _plot_gpu_hours(gpu: dict[str, float], unit: str, path: Path) -> Path:
    fig = Figure(figsize=(7, 3.5), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    names = sorted(gpu) or ["(none)"]
    ax.barh(names, [gpu.get(n, 0.0) for n in names], color="C2")
    ax.set_xlabel(f"{unit} tonight")
    ax.set_title(f"{unit} by campaign")
    fig.savefig(path, format="png")
    return path


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _params(params: dict[str, object]) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())


