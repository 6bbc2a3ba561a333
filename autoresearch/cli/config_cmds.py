"""`autoresearch config schema | check FILE`: the campaign config's JSON Schema and validation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import yaml
from rich.markup import escape

from autoresearch.campaign import (
    AggregateKind, Campaign, ConfigError, PrunerKind, PrunerSettings, load_campaign, resolve_aggregate,
    resolve_policy_kind,
)
from autoresearch.cli._common import console, fail, json_option, print_json, warn

cli = click.Group()


@cli.command("schema")
def schema() -> None:
    """Print the JSON Schema of campaign.yaml (for editor completion and validation)."""
    sys.stdout.write(json.dumps(Campaign.model_json_schema(), indent=2) + "\n")


def pruner_line(campaign: Campaign) -> str:
    """What `config check` says about pruning: the pruner, its gates, and whether they are the defaults."""
    pruner = campaign.policy.pruner
    if pruner.kind is PrunerKind.none:
        return "pruner: none (every trial runs to its end)"
    default = "" if "pruner" in campaign.policy.model_fields_set else ", the default"
    return (
        f"pruner: {pruner.kind.value}{default} ({pruner.describe()}; defaults: {PrunerSettings().describe()}): "
        f"running trials whose intermediate {campaign.objective.metric} is worse than earlier "
        f"trials' at the same step are stopped early, never before {pruner.startup_trials} trials completed, "
        f"never at a step below {pruner.warmup_steps}, never at or after the last step completed trials reached "
        "(trials whose job already ended never are); `policy: {pruner: none}` turns it off"
    )


def aggregate_line(campaign: Campaign) -> str:
    """What `config check` says about how a trial's value is read from its points."""
    objective = campaign.objective
    default = "" if "aggregate" in objective.model_fields_set else ", the default"
    what = {
        AggregateKind.last: "the value at its last reported step",
        AggregateKind.best: f"its best reported value (the {'largest' if objective.mode.value == 'max' else 'smallest'}, "
                            f"mode {objective.mode.value})",
        AggregateKind.mean_last: "the mean of its last {k} reported points",
    }
    found = resolve_aggregate(objective.aggregate)
    return (
        f"aggregate: {objective.aggregate}{default}: a trial's {objective.metric} is "
        f"{what[found.kind].format(k=found.k)}; the pruner sees the same, as of each step "
        "(other choices: last, best, mean_last:K)"
    )


@cli.command("check")
@click.argument("file", type=click.Path(path_type=Path))
@json_option
def check(file: Path, as_json: bool) -> None:
    """Validate a campaign file (FILE: its YAML) and print it resolved (absolute cwd, numeric priority, defaults)."""
    try:
        campaign = load_campaign(file)
    except ConfigError as exc:
        fail(str(exc))
    missing = campaign.missing_program()
    if missing is not None:
        warn(f"{file}: {missing} (every trial would fail)")
    if as_json:
        print_json(campaign)
        return
    policy = resolve_policy_kind(campaign.policy)
    text = yaml.safe_dump(campaign.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
    console.print(
        f"[green]ok[/]: {escape(str(file))} is a valid campaign config (policy kind resolves to {policy.value}).",
        soft_wrap=True,
        highlight=False,
    )
    console.print(escape(aggregate_line(campaign)), soft_wrap=True, highlight=False)
    console.print(escape(pruner_line(campaign)), soft_wrap=True, highlight=False)
    sys.stdout.write(text)
