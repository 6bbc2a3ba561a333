"""`autoresearch status [NAME] [--sort value|number] [--top K] [--json]`: where campaigns stand, read straight
from their ledger files (`read_status`: no Optuna, SQLAlchemy, langgraph or mlflow), so an agent
polling it gets an answer in a fraction of a second. The table imports the runner's display (rich)
only to draw it."""

from __future__ import annotations

import enum

import click

from autoresearch.campaign import (
    Campaign,
    CampaignOverview,
    CampaignState,
    CampaignStatus,
    LedgerError,
    TrialSummary,
    ranked,
    read_overviews,
    read_status,
)
from autoresearch.cli._common import console, fail, json_option, print_json

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
            overview = read_overviews()
            if as_json:
                print_json(overview)
                return
            _print_overview(overview)
            return
        campaign, current = read_status(name)
    except LedgerError as exc:
        fail(str(exc))
    if as_json:
        if sort is None and top is None:
            print_json(current)
            return
        trials = _ordered(campaign, current, sort or TrialOrder.number, top)
        print_json(current.model_copy(update={"trials": trials}))
        return
    from autoresearch.runner.display import render_status

    order = sort or _default_order(current)
    best = ranked(current.trials, campaign.objective) if order is TrialOrder.value else None
    console.print(render_status(current, campaign.budget.max_trials, best, shown=top))


def _default_order(current: CampaignStatus) -> TrialOrder:
    done = current.state in (CampaignState.completed, CampaignState.stopped)
    return TrialOrder.value if done and current.best_trial is not None else TrialOrder.number


def _ordered(campaign: Campaign, current: CampaignStatus, sort: TrialOrder, top: int | None) -> list[TrialSummary]:
    """The trials in `sort` order; with `top`, the K best complete ones (value) or the K latest (number)."""
    if sort is TrialOrder.number:
        return current.trials if top is None else current.trials[-top:]
    best = ranked(current.trials, campaign.objective)
    if top is not None:
        return best[:top]
    shown = {t.number for t in best}
    return [*best, *(t for t in current.trials if t.number not in shown)]


def _print_overview(overview: list[CampaignOverview]) -> None:
    if not overview:
        console.print("no campaigns yet: start one with `autoresearch run campaign.yaml`", highlight=False)
        return
    from rich.table import Table

    table = Table(show_edge=False)
    for column in ("name", "state", "trials", "best", "runner"):
        table.add_column(column)
    for c in overview:
        best = "" if c.best_value is None else f"{c.best_value:.6g}"
        runner = f"pid {c.runner_pid}" if c.runner_pid else ""
        table.add_row(c.name, c.state.value, f"{c.trials}/{c.max_trials}", best, runner)
    console.print(table)
