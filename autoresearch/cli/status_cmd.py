"""`autoresearch status [NAME] [--json]`: where campaigns stand, read straight from their ledger
files (`read_status`: no Optuna, SQLAlchemy, langgraph or mlflow), so an agent polling it gets an
answer in a fraction of a second. The table imports the runner's display (rich) only to draw it."""

from __future__ import annotations

import typer

from autoresearch.campaign import CampaignOverview, LedgerError, read_overviews, read_status
from autoresearch.cli._common import JSON_OPTION, console, fail, print_json

cli = typer.Typer()


@cli.command("status")
def status(
    name: str | None = typer.Argument(None, help="A campaign name; without it, list campaigns."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Where a campaign stands: state, budget used, best trial, trials. No NAME: every campaign."""
    try:
        if name is None:
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
        print_json(current)
        return
    from autoresearch.runner.display import render_status

    console.print(render_status(current, campaign.budget.max_trials))


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
