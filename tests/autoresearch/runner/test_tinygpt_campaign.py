"""Issue 10: a 4-trial hyperparameter campaign on examples/tinygpt completes. Needs torch."""

from __future__ import annotations

import math

import pytest
import yaml

pytest.importorskip("torch")

from autoresearch.campaign import Campaign, CampaignState, TrialState  # noqa: E402
from autoresearch.runner import run_campaign  # noqa: E402
from tests.autoresearch.runner.conftest import FAST, REPO  # noqa: E402

TINYGPT = REPO / "examples" / "tinygpt"

pytestmark = pytest.mark.torch


def test_a_four_trial_hyperparameter_campaign_completes(compute_client, tracking):
    data = yaml.safe_load((TINYGPT / "hyperparameters.yaml").read_text())
    command = data["command"]
    command[command.index("--time-budget") + 1] = "4"  # 4 s of training per trial on the CPU
    data.update(
        name="tinygpt-hparams-test",
        command=[*command, "--device", "cpu", "--eval-every", "50"],
        cwd=str(TINYGPT),
        search_space={**data["search_space"],
                      "width": {"type": "categorical", "choices": [32, 64]},
                      "depth": {"type": "int", "low": 1, "high": 2},
                      "batch_size": {"type": "categorical", "choices": [8, 16]}},
        budget={"max_trials": 4, "max_parallel": 2},
        policy={"kind": "optuna", "seed": 0, "pruner": "none"},
        tracking={"uri": tracking.tracking_uri},
        env={"OMP_NUM_THREADS": "1"},
    )
    outcome = run_campaign(Campaign.model_validate(data, context={"base_dir": TINYGPT}), settings=FAST)

    assert outcome.state is CampaignState.completed, outcome.reason
    trials = outcome.status.trials
    assert [t.state for t in trials] == [TrialState.complete] * 4, [t.model_dump() for t in trials]
    # Bits per byte of a byte-level model: finite and below the 8 bits of a uniform guess.
    assert all(math.isfinite(t.value) and 0 < t.value < 8 for t in trials)
    assert outcome.status.best_trial.value == min(t.value for t in trials)
