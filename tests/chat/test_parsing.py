"""Slash commands and change validation without a runner: exact spellings, typed values,
type rules, before -> after texts, and errors that say how to write it."""

from __future__ import annotations

from datetime import datetime

import pytest
from typer.testing import CliRunner

from autoresearch.campaign import Campaign
from autoresearch.chat import SlashError, parse
from autoresearch.cli import _register, app
from autoresearch.nightly import WindowError, window_end
from autoresearch.runner import Overrides, SteeringError, effective_campaign
from autoresearch.runner.overrides import change_budget, change_priority, change_space, record

_register()

CAMPAIGN = Campaign.model_validate({
    "name": "mlp", "command": ["python", "train.py", "{lr}", "{hidden}", "{activation}"],
    "objective": {"metric": "val_loss", "mode": "min"}, "budget": {"max_trials": 20},
    "search_space": {"lr": {"type": "float", "low": 1e-5, "high": 0.1, "log": True},
                     "hidden": {"type": "int", "low": 32, "high": 512, "step": 32},
                     "activation": {"type": "categorical", "choices": ["relu", "tanh", "gelu"]}},
}, context={"check_paths": False})  # fmt: skip


def test_slash_commands_parse_to_the_chat_actions():
    assert parse("/status") == ("status", {})
    assert parse("/logs 12") == ("logs", {"trial": 12})
    assert parse("/budget max_trials=80") == ("set_budget", {"max_trials": 80})
    assert parse("/space lr=1e-4..1e-2 activation=relu,tanh") == ("set_space", {"params": [
        {"name": "lr", "low": 1e-4, "high": 1e-2}, {"name": "activation", "choices": ["relu", "tanh"]}]})  # fmt: skip
    assert parse("/try lr=3e-3 hidden=128") == ("try_trial", {"params": [
        {"name": "lr", "value": 0.003}, {"name": "hidden", "value": 128}]})  # fmt: skip
    assert parse("/note try smaller lr first") == ("note", {"text": "try smaller lr first"})
    assert parse("/approve 3 looks cheap") == ("approve", {"request": 3, "reason": "looks cheap"})
    assert parse("/deny") == ("deny", {})
    assert parse("/cancel 4") == ("cancel_trial", {"trial": 4})
    for bad, needle in [("/logs", "/logs N"), ("/budget max_trials", "name=value"), ("/space lr=a..b", "low..high"),
                        ("/stauts", "did you mean '/status'"), ("/note", "/note TEXT")]:  # fmt: skip
        with pytest.raises(SlashError, match=needle):
            parse(bad)


def test_changes_are_validated_and_say_before_and_after():
    narrowed, lines = change_space(CAMPAIGN, {"lr": [1e-4, 1e-2], "activation": ["relu", "tanh"], "hidden": [64, 256]})
    assert lines == ["search_space.lr: float [1e-05, 0.1] log -> float [0.0001, 0.01] log",
                     "search_space.activation: categorical [relu, tanh, gelu] -> categorical [relu, tanh]",
                     "search_space.hidden: int [32, 512] step 32 -> int [64, 256] step 32"]  # fmt: skip
    for bad, needle in [({"lr": [0, 1]}, "log: true needs low > 0"), ({"lr": ["relu"]}, "give a range"),
                        ({"activation": [1.0, 2.0]}, None), ({"hiden": [1, 2]}, "did you mean 'hidden'"),
                        ({"hidden": [256, 64]}, "must be greater than low")]:  # fmt: skip
        if needle is None:
            change_space(CAMPAIGN, bad)  # numbers are fine choices for a categorical parameter
            continue
        with pytest.raises(SteeringError, match=needle):
            change_space(CAMPAIGN, bad)
    budget, lines = change_budget(narrowed, {"max_trials": 80, "deadline": "06:00"})
    assert lines == ["budget.max_trials: 20 -> 80", "budget.deadline: none -> 06:00:00"]
    with pytest.raises(SteeringError, match="did you mean 'max_trials'"):
        change_budget(CAMPAIGN, {"max_trial": 3})
    with pytest.raises(SteeringError, match="greater than or equal to 1"):
        change_budget(CAMPAIGN, {"max_parallel": 0})
    raised, lines = change_priority(budget, "high")
    assert lines == ["compute.priority: 50 (normal) -> 75 (high)"]
    with pytest.raises(SteeringError, match="priority 'urgentest'"):
        change_priority(CAMPAIGN, "urgentest")

    stored = record(Overrides(), CAMPAIGN, raised)  # what the runner keeps in steering.json
    again = effective_campaign(CAMPAIGN, Overrides.model_validate_json(stored.model_dump_json()))
    assert again.search_space == raised.search_space and again.budget == raised.budget
    assert again.compute.priority == 75


def test_bad_chat_and_nightly_input_exits_2(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["chat", "nope"])
    assert result.exit_code == 2 and "no campaign named 'nope'" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["nightly", str(tmp_path / "a.yaml"), "--until", "07:00"])
    assert result.exit_code == 2 and "not found" in result.output
    result = CliRunner().invoke(app, ["nightly", str(tmp_path / "a.yaml")])
    assert result.exit_code == 2 and "--until HH:MM" in result.output
    assert window_end("07:00", None, datetime(2026, 11, 30, 22, 0)).hour == 7
    assert window_end("07:00", None, datetime(2026, 11, 30, 22, 0)).day == 1
    with pytest.raises(WindowError, match="not a time of day"):
        window_end("25:00", None)
