"""Steering changes without a runner: type rules, bounds and budget fields validated, before ->
after texts, and what the runner keeps in steering.json laid over the config again."""

from __future__ import annotations

import pytest

from autoresearch.campaign import Campaign
from autoresearch.steering import Overrides, SteeringError, change_budget, change_priority, change_space, effective_campaign, record

CAMPAIGN = Campaign.model_validate({
    "name": "mlp", "command": ["python", "train.py", "{lr}", "{hidden}", "{activation}"],
    "objective": {"metric": "val_loss", "mode": "min"}, "budget": {"max_trials": 20},
    "search_space": {"lr": {"type": "float", "low": 1e-5, "high": 0.1, "log": True},
                     "hidden": {"type": "int", "low": 32, "high": 512, "step": 32},
                     "activation": {"type": "categorical", "choices": ["relu", "tanh", "gelu"]}},
}, context={"check_paths": False})  # fmt: skip


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
