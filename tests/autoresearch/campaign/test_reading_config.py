"""`objective.aggregate` and the `policy.pruner` mapping in the config: what is accepted, what is
refused (file:line:field through the loader), what `config check` says about them, and that a
campaign's values are not read two ways."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.campaign import (
    AggregateKind, ConfigError, Ledger, Proposal, PrunerKind, load_campaign, refused_change, resolve_aggregate,
)
from autoresearch.cli import _register, app

_register()
runner = CliRunner()

CONFIG = """\
name: reading
command: ["python", "train.py", "--lr", "{lr}"]
objective:
  metric: loss
  mode: min
  aggregate: AGGREGATE
search_space:
  lr: {type: float, low: 0.001, high: 0.1}
budget: {max_trials: 4}
policy:
  pruner: PRUNER
"""


def _file(folder: Path, aggregate: str = "last", pruner: str = "median") -> Path:
    path = folder / "campaign.yaml"
    path.write_text(CONFIG.replace("AGGREGATE", aggregate).replace("PRUNER", pruner))
    return path


@pytest.mark.parametrize(("text", "kind", "k"), [("last", AggregateKind.last, 1), ("best", AggregateKind.best, 1),
                                                  ("mean_last:3", AggregateKind.mean_last, 3)])  # fmt: skip
def test_each_aggregate_loads(tmp_path: Path, text: str, kind: AggregateKind, k: int) -> None:
    campaign = load_campaign(_file(tmp_path, aggregate=text))

    found = resolve_aggregate(campaign.objective.aggregate)
    assert (found.kind, found.k) == (kind, k)


def test_the_default_aggregate_is_last(tmp_path: Path) -> None:
    path = tmp_path / "campaign.yaml"
    path.write_text(CONFIG.replace("  aggregate: AGGREGATE\n", "").replace("PRUNER", "median"))

    assert load_campaign(path).objective.aggregate == "last"


@pytest.mark.parametrize(("text", "says"), [
    ("mean_last:0", "K must be a positive integer"),
    ("mean_last:x", "K must be a positive integer"),
    ("median", "is not one of `last`, `best`, `mean_last:K`"),
])  # fmt: skip
def test_a_bad_aggregate_names_file_line_and_field(tmp_path: Path, text: str, says: str) -> None:
    path = _file(tmp_path, aggregate=text)

    with pytest.raises(ConfigError) as caught:
        load_campaign(path)

    message = str(caught.value)
    assert f"{path}:6:3: objective.aggregate: aggregate '{text}'" in message and says in message


def test_a_plain_pruner_string_keeps_its_meaning_with_the_defaults(tmp_path: Path) -> None:
    pruner = load_campaign(_file(tmp_path, pruner="successive_halving")).policy.pruner

    assert (pruner.kind, pruner.startup_trials, pruner.warmup_steps, pruner.interval_steps) == (
        PrunerKind.successive_halving, 5, 0, 1)


def test_the_pruner_mapping_loads(tmp_path: Path) -> None:
    path = _file(tmp_path, pruner="{kind: median, startup_trials: 2, warmup_steps: 4, interval_steps: 3}")

    pruner = load_campaign(path).policy.pruner

    assert (pruner.kind, pruner.startup_trials, pruner.warmup_steps, pruner.interval_steps) == (PrunerKind.median, 2, 4, 3)


@pytest.mark.parametrize(("pruner", "field"), [
    ("{kind: median, warmup_steps: -1}", "policy.pruner.warmup_steps"),
    ("{kind: median, interval_steps: 0}", "policy.pruner.interval_steps"),
    ("{kind: medain}", "policy.pruner.kind"),
    ("{kind: median, warmup: 3}", "policy.pruner.warmup"),
])  # fmt: skip
def test_a_bad_pruner_mapping_names_file_line_and_field(tmp_path: Path, pruner: str, field: str) -> None:
    path = _file(tmp_path, pruner=pruner)

    with pytest.raises(ConfigError) as caught:
        load_campaign(path)

    assert f"{path}:11:" in str(caught.value) and f": {field}: " in str(caught.value)


def test_config_check_explains_the_aggregate_and_the_pruner_defaults(tmp_path: Path) -> None:
    path = tmp_path / "campaign.yaml"
    path.write_text(CONFIG.replace("  aggregate: AGGREGATE\n", "").replace("policy:\n  pruner: PRUNER\n", ""))

    result = runner.invoke(app, ["config", "check", str(path)])

    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "aggregate: last, the default: a trial's loss is the value at its last reported step" in out
    assert "pruner: median, the default (startup_trials 5, warmup_steps 0, interval_steps 1;" in out
    assert "never at or after the last step completed trials reached" in out


def test_config_check_explains_mean_last_and_best(tmp_path: Path) -> None:
    for text, says in (("mean_last:4", "the mean of its last 4 reported points"),
                       ("best", "its best reported value (the smallest, mode min)")):  # fmt: skip
        result = runner.invoke(app, ["config", "check", str(_file(tmp_path, aggregate=text))])

        assert result.exit_code == 0, result.output
        assert f"aggregate: {text}: a trial's loss is {says}" in " ".join(result.stdout.split())


def test_another_aggregate_is_refused_once_a_trial_has_a_value(home: Path, tmp_path: Path) -> None:
    before = load_campaign(_file(tmp_path, aggregate="last"))
    ledger = Ledger.open(before)
    number = ledger.admit(Proposal(params={"lr": 0.01})).trial_number
    assert number is not None
    after = before.model_copy(update={"objective": before.objective.model_copy(update={"aggregate": "best"})})
    assert refused_change(before, after, ledger.trials()) is None  # no value yet: a free choice

    ledger.mark_launched(number, "job-0")
    ledger.complete(number, 0.5)

    refusal = refused_change(before, after, ledger.trials())
    assert refusal is not None and "objective.aggregate last and trials 0 have values so" in refusal
    assert "the config now says best" in refusal


def test_the_gates_of_the_pruner_settings(tmp_path: Path) -> None:
    path = _file(tmp_path, pruner="{kind: median, startup_trials: 2, warmup_steps: 3, interval_steps: 2}")
    pruner = load_campaign(path).policy.pruner

    assert [step for step in range(10) if pruner.allows(step, completed=2)] == [3, 5, 7, 9]
    assert not pruner.allows(5, completed=1)  # fewer completed trials than startup_trials
    assert not load_campaign(_file(tmp_path, pruner="none")).policy.pruner.allows(5, completed=9)
