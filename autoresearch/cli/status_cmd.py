"""`autoresearch status [NAME] [--sort value|number] [--top K] [--json]`: where campaigns stand, read straight
from their ledger files as plain data (`status_core.read_status_data`: no pydantic, Optuna, SQLAlchemy,
langgraph or mlflow), so an agent polling it gets an answer in a fraction of a second. The table
imports the runner's display (rich) only to draw it."""

from __future__ import annotations

import enum
from typing import Any

import click

from autoresearch.campaign.errors import LedgerError
from autoresearch.campaign.ledger._sqlite_reader import LedgerViews
from autoresearch.campaign.ranking import ranked
from autoresearch.campaign.states import CampaignState
from autoresearch.campaign.status_core import as_records, read_overviews_data, read_status_data
from autoresearch.cli._common import console, fail, json_option
from autoresearch.cli._plain import write_json

cli = click.Group()


class TrialOrder(str, enum.Enum):
    """How `status NAME` orders trials."""

    value = "value"
    """Complete trials best first (the top of the table), then the others by number."""
    number = "number"
    """By trial number: the table shows the latest."""


@cli.command("status")
@click.argument("name", required=False)
@click.option("--sort", type=click.Choice([o.value for o in TrialOrder]), help="value: the best trials first; number: "
              "the latest. Default: value once the campaign completed or stopped with a complete trial, else number. "
              "With --json, orders `trials` (default: by number).")
@click.option("--top", type=click.IntRange(min=1), help="Only K trials: with --sort value the K best complete trials, "
              "with --sort number the K latest (tables and --json alike).")
@json_option
def status(name: str | None, sort: str | None, top: int | None, as_json: bool) -> None:
    """Where a campaign stands: state, budget used, best trial, trials with their job and MLflow run.
    No NAME: every campaign."""
    _status(name, None if sort is None else TrialOrder(sort), top, as_json)


def _status(name: str | None, sort: TrialOrder | None, top: int | None, as_json: bool) -> None:
    try:
        if name is None:
            if sort is not None or top is not None:
                flag = f"--sort {sort.value}" if sort is not None else f"--top {top}"
                fail(f"{flag} picks the trials of one campaign: give its name "
                     f"(`autoresearch status NAME {flag}`); `autoresearch status` lists the campaigns")
            overview = read_overviews_data()
            if as_json:
                write_json(overview)
                return
            _print_overview(overview)
            return
        views, current = read_status_data(name)
    except LedgerError as exc:
        fail(str(exc))
    if as_json:
        if sort is None and top is None:
            write_json(current)
            return
        write_json({**current, "trials": _ordered(views, current, sort or TrialOrder.number, top)})
        return
    from autoresearch.runner.display import render_status

    order = sort or _default_order(current)
    best = _best_first(views, current) if order is TrialOrder.value else None
    console.print(render_status(current, views.campaign.budget.max_trials, best, shown=top))


def _default_order(current: dict[str, Any]) -> TrialOrder:
    done = current["state"] in (CampaignState.completed.value, CampaignState.stopped.value)
    return TrialOrder.value if done and current["best_trial"] is not None else TrialOrder.number


def _best_first(views: LedgerViews, current: dict[str, Any]) -> list[dict[str, Any]]:
    """The complete trials of `current` (its JSON), best first (`ranked`, on the trials they show)."""
    by_number = {t["number"]: t for t in current["trials"]}
    campaign, _, trials = as_records(views)
    return [by_number[t.number] for t in ranked(trials, campaign.objective)]


def _ordered(views: LedgerViews, current: dict[str, Any], sort: TrialOrder, top: int | None) -> list[dict[str, Any]]:
    """The trials in `sort` order; with `top`, the K best complete ones (value) or the K latest (number)."""
    trials = current["trials"]
    if sort is TrialOrder.number:
        return trials if top is None else trials[-top:]
    best = _best_first(views, current)
    if top is not None:
        return best[:top]
    shown = {t["number"] for t in best}
    return [*best, *(t for t in trials if t["number"] not in shown)]


def _print_overview(overview: list[dict[str, Any]]) -> None:
    if not overview:
        console.print("no campaigns yet: start one with `autoresearch run campaign.yaml`", highlight=False)
        return
    from rich.table import Table

    table = Table(show_edge=False)
    for column in ("name", "state", "trials", "best", "runner"):
        table.add_column(column)
    for c in overview:
        best = "" if c["best_value"] is None else f"{c['best_value']:.6g}"
        runner = f"pid {c['runner_pid']}" if c["runner_pid"] else ""
        table.add_row(c["name"], c["state"], f"{c['trials']}/{c['max_trials']}", best, runner)
    console.print(table)
