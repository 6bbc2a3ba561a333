"""Fixtures for campaign tests: a private AUTORESEARCH_HOME and the issue's config file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autoresearch.campaign import Campaign
from autoresearch.testing import score, suite_campaign

ISSUE_YAML = """\
name: digits-mlp
command: ["python", "train.py", "--lr", "{lr}", "--hidden", "{hidden}", "--activation", "{activation}"]
cwd: examples/digits          # relative to the config file
objective:
  metric: val_accuracy
  mode: max                   # or min
search_space:
  lr: {type: float, low: 1.0e-4, high: 1.0e-1, log: true}
  hidden: {type: int, low: 16, high: 256}
  activation: {type: categorical, choices: [relu, tanh]}
budget:
  max_trials: 40
  max_parallel: 4
compute:
  gpus: 1
  priority: normal
policy:
  kind: auto                  # llm when a provider is configured, else optuna
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("AUTORESEARCH_HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with examples/digits/ in it, where config files are written."""
    folder = tmp_path / "project"
    (folder / "examples" / "digits").mkdir(parents=True)
    return folder


@pytest.fixture
def issue_file(project: Path) -> Path:
    path = project / "campaign.yaml"
    path.write_text(ISSUE_YAML)
    return path


def make_campaign(base: Path, **overrides: Any) -> Campaign:
    """A small campaign built in Python (the suites' space x, y, kind; one trial at a time),
    with `overrides` on top."""
    settings: dict[str, Any] = {"budget": {"max_trials": 30, "max_parallel": 1}, **overrides}
    return suite_campaign(base, settings.pop("name", "toy"), **settings)


toy_objective = score
"""A deterministic function of the toy campaign's parameters (maximum 10 at x=1, y=3, kind=b)."""
