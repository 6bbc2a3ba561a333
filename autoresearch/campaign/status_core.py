"""Where a campaign stands, computed once, as plain data: `status_data` is the JSON of a
`CampaignStatus` (`autoresearch status --json`), key for key in its fields' order, from the
campaign's config, facts and trials. Imports no pydantic.

Its inputs are the records (`Campaign`, `CampaignFacts`, `TrialRecord`: `status.status_of`, which
validates the result into a `CampaignStatus`) or their plain views (`autoresearch.campaign.views`:
`autoresearch status`, which prints the result as it is). The records' field docs are in
`autoresearch.campaign.status`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from autoresearch.campaign.failfast import first_line
from autoresearch.campaign.holdout_stats import holdout_data
from autoresearch.campaign.ledger._sqlite_reader import LedgerReader, LedgerViews
from autoresearch.campaign.paths import CampaignPaths, known_campaigns
from autoresearch.campaign.ranking import declared_ranking
from autoresearch.campaign.standing import Standing, separable, standings
from autoresearch.campaign.states import CampaignState, TrialState
from autoresearch.campaign.suspects import suspect_reasons
from compute.paths import ComputePaths
from compute.pidlock import holder_pid
from compute.reads import open_store, pending_reasons
from tracking.outbox_reads import pending_writes, writer_pid

if TYPE_CHECKING:
    from autoresearch.campaign.config import Campaign
    from autoresearch.campaign.ledger.facts import CampaignFacts
    from autoresearch.campaign.records import TrialRecord

Waiting = Callable[[list[str]], Mapping[str, str]]
"""Job ids -> why those of them still pending wait in the compute queue (`Client.pending_reasons`,
or `compute.reads.pending_reasons` on the store)."""


def status_data(
    campaign: Campaign,
    facts: CampaignFacts,
    trials: Sequence[TrialRecord],
    folder: Path | None,
    now: datetime | None = None,
    waiting: Waiting | None = None,
) -> dict[str, Any]:
    """The JSON of the campaign's `CampaignStatus`; `folder`: where its runner lock and tracking
    outbox are (None: not looked at); `waiting`: where its running trials' jobs are looked up, to
    say which still wait in the queue (None: not looked up)."""
    now = now or datetime.now(UTC)
    ranking = declared_ranking(list(trials), campaign)
    by_trial = {r.trial: r for r in [*standings(trials, campaign.objective), *ranking]}  # the ranked: their trusted runs
    best = next(t for t in trials if t.number == ranking[0].trial) if ranking else None
    suspect = suspect_reasons(trials, campaign.validity.min_speed_ratio)
    shown = shown_state(facts.state, folder)
    outbox = CampaignPaths(folder).tracking_outbox if folder else None
    summaries = [summary_data(t, by_trial.get(t.number), suspect.get(t.number)) for t in trials]
    queued = [t.job_id for t in trials if t.state is TrialState.running and t.job_id]
    reasons = waiting(queued) if waiting is not None and queued else {}
    for summary in summaries:
        if summary["state"] == TrialState.running.value and summary["job_id"] in reasons:
            summary["waiting_reason"] = reasons[summary["job_id"]]
    return {
        "name": campaign.name,
        "state": shown.value,
        "state_reason": facts.state_reason,
        "budget_used": budget_data(facts, trials, now, live=shown is not CampaignState.interrupted),
        "best_trial": dict(next(s for s in summaries if s["number"] == best.number)) if best else None,
        "runner_up": ranking[1].trial if len(ranking) > 1 else None,
        "separable": separable(ranking[0], ranking[1], campaign.objective) if len(ranking) > 1 else None,
        "trials": summaries,
        "tracking_pending": pending_writes(outbox) if outbox else 0,
        "tracking_writer_pid": writer_pid(outbox) if outbox else None,
        "holdout": holdout_data(campaign, trials, facts.holdouts),
    }


def read_status_data(
    name: str, home: str | os.PathLike[str] | None = None, now: datetime | None = None
) -> tuple[LedgerViews, dict[str, Any]]:
    """Campaign `name`'s ledger (plain views) and the JSON of its status, read straight from its
    ledger file, with the compute store's word on its running trials (`store_waiting`): what
    `status.read_status` gives, without pydantic. LedgerError when there is no such campaign, its
    ledger is lost, or its stored config is refused now."""
    reader = LedgerReader(name, home, views=True)
    try:
        views = reader.read_views()
    finally:
        reader.close()
    return views, status_data(*as_records(views), views.paths.root, now, store_waiting(home))


def as_records(views: LedgerViews) -> tuple[Campaign, CampaignFacts, list[TrialRecord]]:
    """The views, typed as the records they stand in for: each has every field the status
    computation and the ranking functions read (autoresearch/campaign/views.py)."""
    return cast("Campaign", views.campaign), cast("CampaignFacts", views.facts), cast("list[TrialRecord]", views.trials)


def read_overviews_data(home: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
    """The JSON of the `autoresearch status` line (`CampaignOverview`) of every campaign under
    `home`, by name."""
    lines = []
    for paths in known_campaigns(home):
        views, current = read_status_data(paths.name, home)
        lines.append(overview_data(as_records(views)[0], current, paths))
    return lines


def store_waiting(home: str | os.PathLike[str] | None) -> Waiting:
    """Which of some jobs still wait in the compute store of `home`, and why (none without a store)."""

    def waiting(job_ids: list[str]) -> dict[str, str]:
        conn = open_store(ComputePaths.of(home))
        if conn is None:
            return {}
        try:
            return pending_reasons(conn, job_ids)
        finally:
            conn.close()

    return waiting


def summary_data(trial: TrialRecord, standing: Standing | None, suspect_reason: str | None) -> dict[str, Any]:
    """The JSON of one trial's `TrialSummary`."""
    ended_badly = trial.state in (TrialState.failed, TrialState.cancelled)
    return {
        "number": trial.number,
        "state": trial.state.value,
        "params": trial.params,
        "value": trial.value,
        "job_id": trial.job_id,
        "mlflow_run_id": trial.mlflow_run_id,
        "failure_class": trial.failure_class.value if trial.failure_class else None,
        "reason": first_line(trial.log_excerpt) or None if ended_badly else None,
        "confirms": trial.confirms,
        "mean": standing.mean if standing else None,
        "sd": standing.sd if standing else None,
        "n": standing.n if standing else None,
        "suspect": suspect_reason is not None,
        "suspect_reason": suspect_reason,
        "nodes": trial.provenance.nodes if trial.provenance else [],
        "suspect_rerun_of": trial.suspect_rerun_of,
        "waiting_reason": None,
    }


def budget_data(facts: CampaignFacts, trials: Sequence[TrialRecord], now: datetime, *, live: bool) -> dict[str, Any]:
    """The JSON of `BudgetUsed`: how much of the budget `trials` and `facts` spent by `now` (`live`: a
    runner drives the campaign now; see `active_seconds`)."""
    return {
        "trials": sum(t.state is not TrialState.cancelled for t in trials),
        "gpu_hours": sum(t.gpu_seconds for t in trials) / 3600.0,
        "real_gpus": on_real_gpus(trials),
        "llm_usd": facts.llm_usd,
        "elapsed": active_seconds(facts, trials, now, live=live),
    }


def hours_unit(real_gpus: bool) -> str:
    """What hours of held slots are called: GPU-hours only when the slots were physical GPUs."""
    return "GPU-hours" if real_gpus else "slot-hours"


def hours_text(gpu_hours: float, real_gpus: bool, digits: str = ".2f") -> str:
    """`0.13 slot-hours`, or `0.13 GPU-hours` on physical GPUs."""
    return f"{gpu_hours:{digits}} {hours_unit(real_gpus)}"


def on_real_gpus(trials: Iterable[TrialRecord]) -> bool:
    """Whether every trial that held slots held physical GPUs (False when none held any)."""
    held = [t for t in trials if t.gpu_seconds > 0]
    return bool(held) and all(t.real_gpus for t in held)


def active_seconds(facts: CampaignFacts, trials: Iterable[TrialRecord], now: datetime, live: bool) -> float:
    """`facts.active_s` plus the run in progress: until `now` while its runner is `live`; for a
    run whose runner was killed, until the last trial that ended in it (what it is known to have done)."""
    if facts.run_started_at is None:
        return facts.active_s
    return facts.active_s + max(
        0.0, (_run_end(facts.run_started_at, trials, now, live) - facts.run_started_at).total_seconds()
    )


def _run_end(started: datetime, trials: Iterable[TrialRecord], now: datetime, live: bool) -> datetime:
    """When the run that began at `started` ended (`now` while live; else its last trial's end)."""
    if live:
        return now
    return max((t.ended_at for t in trials if t.ended_at is not None and t.ended_at >= started), default=started)


def shown_state(state: CampaignState, folder: Path | None) -> CampaignState:
    """The ledger's state, but `interrupted` for a running campaign that no runner holds."""
    if state is CampaignState.running and folder is not None and holder_pid(CampaignPaths(folder).lock) is None:
        return CampaignState.interrupted
    return state


def overview_data(campaign: Campaign, current: Mapping[str, Any], paths: CampaignPaths) -> dict[str, Any]:
    """The JSON of the `CampaignOverview` (one `autoresearch status` line) of the campaign whose
    config, status (`status_data`) and folder these are."""
    best = current["best_trial"]
    return {
        "name": current["name"],
        "state": current["state"],
        "trials": current["budget_used"]["trials"],
        "max_trials": campaign.budget.max_trials,
        "best_value": best["mean"] if best else None,
        "runner_pid": holder_pid(paths.lock),
    }
