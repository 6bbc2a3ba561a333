"""A broken setup fails the campaign after the first few identical failures, and says why."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from autoresearch.campaign import CampaignState, Ledger, TrialFailure, TrialState
from autoresearch.cli import _register, app
from autoresearch.runner import run_campaign
from tests.autoresearch.runner._byo import NANOGPT_PATTERNS, byo_config, campaign_of
from tests.autoresearch.runner.conftest import FAST, write_config

_register()
cli = CliRunner()


def test_a_missing_script_fails_the_campaign_fast_and_run_exits_1(compute_client, tracking, tmp_path):
    data = byo_config(tracking, "nanogpt", command=["python", "no_such_script.py", "--x", "{x}"],
                      budget={"max_trials": 20, "max_parallel": 2})  # fmt: skip
    name = data["name"]
    result = cli.invoke(app, ["run", str(write_config(tmp_path, data)), "--quiet"])
    assert result.exit_code == 1, result.output
    assert "failed" in result.stdout and "no_such_script.py" in result.stdout

    status = json.loads(cli.invoke(app, ["status", name, "--json"]).stdout)
    assert status["state"] == "failed"
    reason = status["state_reason"]
    assert "all failed the same way (user)" in reason and "no_such_script.py" in reason
    assert "run `command` by hand" in reason and f"autoresearch resume {name}" in reason
    failed = [t for t in status["trials"] if t["state"] == "failed"]
    assert len(failed) >= 3 and len(status["trials"]) <= 4  # stopped long before the 20 of the budget
    assert all(t["failure_class"] == "user" and "no_such_script.py" in t["reason"] for t in failed)
    assert {t["state"] for t in status["trials"]} <= {"failed", "cancelled"}

    table = cli.invoke(app, ["status", name])
    assert table.exit_code == 0 and "user: " in table.stdout and "no_such_script" in table.stdout
    assert "failed: the setup looks broken" in table.stdout


def test_a_metric_the_log_never_prints_fails_fast_listing_the_names_it_does(compute_client, tracking):
    data = byo_config(tracking, "nanogpt", objective={"metric": "val_los"}, metrics={"patterns": NANOGPT_PATTERNS},
                      budget={"max_trials": 10, "max_parallel": 1})  # fmt: skip
    outcome = run_campaign(campaign_of(data), settings=FAST)

    assert outcome.state is CampaignState.failed
    assert "(no_metric)" in outcome.reason and "objective.metric 'val_los'" in outcome.reason
    trials = Ledger.load(data["name"]).trials()
    assert [t.state for t in trials] == [TrialState.failed] * 3
    for t in trials:
        assert t.failure_class is TrialFailure.no_metric
        first, *rest = t.log_excerpt.splitlines()
        assert "never reported 'val_los'" in first and "batch_size, loss, train_loss, val_loss" in first
        assert "last lines of the log:" in rest and rest[-1].startswith("step 4: train loss")



def test_a_budget_spent_on_failures_only_ends_failed_and_run_exits_1(compute_client, tracking, tmp_path):
    """Issue 33 item 8: two failures (fewer than max_consecutive_failures) used up the budget: the
    campaign has no result, so it is failed, not completed, and `run` exits 1."""
    data = byo_config(tracking, "nanogpt", command=["python", "no_such_script.py", "--x", "{x}"],
                      budget={"max_trials": 2, "max_parallel": 1})  # fmt: skip
    name = data["name"]
    result = cli.invoke(app, ["run", str(write_config(tmp_path, data)), "--quiet"])
    assert result.exit_code == 1, result.output
    assert f"campaign {name} failed: budget.max_trials (2) reached with no result" in " ".join(result.stdout.split())

    status = json.loads(cli.invoke(app, ["status", name, "--json"]).stdout)
    assert status["state"] == "failed" and [t["state"] for t in status["trials"]] == ["failed", "failed"]
    assert "every trial failed (2 failed: user 2)" in status["state_reason"]
    assert "--max-trials" in status["state_reason"]
