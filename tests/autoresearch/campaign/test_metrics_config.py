"""The `metrics:` section, `{trial_dir}`, and what `config check` says: checked where the config is read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.campaign import CampaignPaths, ConfigError, Ledger, Proposal, load_campaign
from autoresearch.cli import _register, app

_register()
runner = CliRunner()

BASE = """\
name: nano
command: ["python", "train.py", "--lr", "{lr}", "--out_dir", "{trial_dir}"]
cwd: .
objective: {metric: val_loss, mode: min}
search_space:
  lr: {type: float, low: 1.0e-4, high: 1.0e-1, log: true}
budget: {max_trials: 4}
"""
NANO = r"""
metrics:
  patterns:
    - 'step (?P<step>\d+): train loss (?P<train_loss>[-+.\deE]+), val loss (?P<val_loss>[-+.\deE]+)'
    - 'iter (?P<iter>\d+): loss (?P<loss>[-+.\deE]+)'
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "campaign.yaml"
    path.write_text(text)
    return path


def _problem(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as raised:
        load_campaign(_write(tmp_path, text))
    return str(raised.value)


def test_patterns_and_record_become_the_tracking_rules(tmp_path: Path) -> None:
    campaign = load_campaign(_write(tmp_path, BASE + NANO))
    rules = campaign.metric_rules
    assert rules.patterns == tuple(campaign.metrics.patterns) and len(rules.patterns) == 2
    assert rules.record is None and rules.config_names == {"val_loss"}  # every metric; config lines: the objective
    narrowed = load_campaign(_write(tmp_path, BASE + NANO + "  record: [loss]\n")).metric_rules
    assert narrowed.record == narrowed.config_names == {"val_loss", "loss"}
    every = load_campaign(_write(tmp_path, BASE + NANO + "  record: all\n")).metric_rules
    assert every.record is None and every.config_names is None  # config lines too
    argv = campaign.render_command({"lr": 0.01}, 3, trial_dir="/x/trial-3")
    assert argv[-2:] == ["--out_dir", "/x/trial-3"]


def test_bad_patterns_are_refused_with_their_place(tmp_path: Path) -> None:
    text = _problem(tmp_path, BASE + "metrics:\n  patterns: ['val loss (?P<val_loss>[\\d.]+']\n")
    assert "campaign.yaml:9:14: metrics.patterns[0]" in text and "does not compile" in text
    text = _problem(tmp_path, BASE + "metrics:\n  patterns: ['val loss ([\\d.]+)']\n")
    assert "no named group" in text and "(?P<val_loss>" in text


def test_the_objective_and_recorded_names_must_be_capturable(tmp_path: Path) -> None:
    text = _problem(tmp_path, BASE.replace("metric: val_loss", "metric: val loss") + NANO)
    assert "no pattern captures the objective 'val loss'" in text and "train_loss, val_loss, loss" in text
    text = _problem(tmp_path, BASE + NANO + "  record: ['eval loss']\n")
    assert "record[0] 'eval loss'" in text
    assert load_campaign(_write(tmp_path, BASE.replace("val_loss", "val_bpb") + NANO)).objective.metric == "val_bpb"


def test_config_check_names_the_default_pruner(tmp_path: Path) -> None:
    result = runner.invoke(app, ["config", "check", str(_write(tmp_path, BASE))])
    assert result.exit_code == 0, result.output
    assert "pruner: median, the default" in result.stdout and "pruner: none" in result.stdout
    result = runner.invoke(app, ["config", "check", str(_write(tmp_path, BASE + "policy: {pruner: none}\n"))])
    assert "pruner: none (every trial runs to its end)" in result.stdout


def test_a_recreated_ledger_never_hands_a_trial_an_old_trials_folders(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
    campaign = load_campaign(_write(tmp_path, BASE))
    first = Ledger.open(campaign)
    trial = first.trial(first.admit(Proposal(params={"lr": 0.01})).trial_number)
    old = (first.checkpoint_dir(trial), first.trial_dir(trial.number))
    assert Ledger.open(campaign).trial_dir(trial.number) == old[1]  # the same ledger: the same folders
    old[0].mkdir(parents=True)
    (old[0] / "ckpt.pt").write_text("trial 0 of the first ledger")
    # The ledger deliberately recreated in place (its marker removed too, else the runner refuses a
    # lost ledger: issue 20); its trial and checkpoint folders stay.
    paths = CampaignPaths(first.path.parent)
    paths.ledger_db.unlink()
    paths.ledger_marker.unlink()
    for extra in first.path.parent.glob("optuna.db-*"):
        extra.unlink()
    del first

    again = Ledger.open(campaign)
    fresh = again.trial(again.admit(Proposal(params={"lr": 0.01})).trial_number)
    assert fresh.number == trial.number
    assert again.checkpoint_dir(fresh) != old[0] and again.trial_dir(fresh.number) != old[1]
    assert not again.checkpoint_dir(fresh).exists()
    shutil.rmtree(tmp_path / "home")
