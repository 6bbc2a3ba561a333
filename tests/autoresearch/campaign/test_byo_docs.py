"""The worked configs of docs/bring-your-own-script.md are valid, and their patterns read the lines shown."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from autoresearch.campaign import Campaign
from tracking import parse_metrics

DOC = Path(__file__).resolve().parents[3] / "docs" / "bring-your-own-script.md"


def _blocks() -> list[dict]:
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S)]


def test_every_worked_config_validates() -> None:
    configs = [b for b in _blocks() if "name" in b]
    assert [c["name"] for c in configs] == ["nanogpt-shakespeare-char", "bert-sst2", "my-script"]
    for data in configs:
        campaign = Campaign.model_validate(data, context={"check_paths": False})
        assert campaign.render_command(dict.fromkeys(campaign.search_space, 0.1), 0, trial_dir="/t")


def test_the_other_styles_patterns_read_their_example_lines() -> None:
    other = next(b for b in _blocks() if "name" not in b and len(b["metrics"]["patterns"]) == 2
                 and "Validation" in b["metrics"]["patterns"][1])  # fmt: skip
    campaign = Campaign.model_validate({
        "name": "x", "command": ["x"], "objective": {"metric": "val_loss", "mode": "min"},
        "search_space": {"a": {"type": "float", "low": 0, "high": 1}}, "budget": {"max_trials": 1}, **other,
    }, context={"check_paths": False})  # fmt: skip
    log = b"[1/3] val loss 0.47\nEpoch 2: Validation loss: 0.39\n"
    points = parse_metrics(log, rules=campaign.metric_rules).points
    assert [(p.key, p.value, p.step) for p in points] == [("val_loss", 0.47, 1), ("val_loss", 0.39, 2)]
