"""A broken setup fails the campaign after the first few identical failures, and says why."""

from __future__ import annotations

import json

from click.testing import CliRunner

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
        assert "never reported 'val_los'" in first and "seen in its log: loss, train_loss, val_loss." in first
        assert "last lines of the log:" in rest and rest[-1].startswith("iter 4: loss")



def test_a_command_that_does_not_exist_is_named_before_and_fails_the_campaign_fast(compute_client, tracking, tmp_path):
    """Each job's shell names its own wrapper script in the error; the failure is the same."""
    data = byo_config(tracking, "nanogpt", command=["pythn", "byo_job.py", "--x", "{x}"],
                      budget={"max_trials": 12, "max_parallel": 2})  # fmt: skip
    result = cli.invoke(app, ["run", str(write_config(tmp_path, data))])
    assert result.exit_code == 1, result.output
    warning, *lines = result.output.splitlines()
    assert warning.startswith("warning: ") and "command not found: 'pythn' is not on the jobs' PATH" in warning
    assert "trial 0 failed (user): command not found: pythn" in result.output  # not a line of the log excerpt

    status = json.loads(cli.invoke(app, ["status", data["name"], "--json"]).stdout)
    assert status["state"] == "failed" and "'command not found: pythn'" in status["state_reason"]
    failed = [t for t in status["trials"] if t["state"] == "failed"]
    assert len(failed) >= 3 and len(status["trials"]) <= 4  # 3 in a row, not the 12 of the budget
    assert {t["reason"] for t in failed} == {"command not found: pythn"}
    assert {t.failure_rule for t in Ledger.load(data["name"]).trials() if t.failure_class} == {"command_not_found"}


def test_run_again_with_the_fixed_config_continues_and_says_what_changed(compute_client, tracking, tmp_path):
    data = byo_config(tracking, "nanogpt", objective={"metric": "val_los"}, metrics={"patterns": NANOGPT_PATTERNS},
                      budget={"max_trials": 4, "max_parallel": 1})  # fmt: skip
    config = write_config(tmp_path, data)
    first = cli.invoke(app, ["run", str(config), "--quiet"])
    assert first.exit_code == 1 and "(no_metric)" in first.output and "autoresearch run CONFIG.yaml" in first.output

    data["objective"]["metric"] = "val_loss"
    data["search_space"]["x"] = {"type": "int", "low": -1, "high": 1}
    write_config(tmp_path, data)
    refused = cli.invoke(app, ["run", str(config)])  # every trial failed: a new metric is fine, a new type is not
    assert refused.exit_code == 2 and "search_space.x was float and trials 0, 1, 2 were sampled so" in refused.output
    data["search_space"]["x"] = {"type": "float", "low": -1.0, "high": 1.0}
    write_config(tmp_path, data)

    again = cli.invoke(app, ["run", str(config)])
    assert again.exit_code == 0, again.output
    assert f"config changed since campaign {data['name']} last ran: objective.metric: val_los -> val_loss" in again.output
    status = json.loads(cli.invoke(app, ["status", data["name"], "--json"]).stdout)
    assert status["state"] == "completed" and status["trials"][-1]["state"] == "complete"

    data["objective"]["metric"] = "train_loss"
    data["budget"]["max_trials"] = 5
    write_config(tmp_path, data)
    valued = cli.invoke(app, ["run", str(config)])
    assert valued.exit_code == 2 and "ran with objective.metric 'val_loss' and trials 3 have values of it" in valued.output


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
