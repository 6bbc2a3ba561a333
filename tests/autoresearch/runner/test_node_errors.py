"""Errors raised inside the graph's nodes (issue 20 item 9): the campaign fails with the reason
(exit 1 from `autoresearch run`, no traceback) and no trial is left `proposed`; a bad MLflow
store is a clear error naming tracking.uri (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.campaign import CampaignState, Ledger, TrialState
from autoresearch.cli import _register, app
from autoresearch.llm import FakeLLMServer, FakeRequest, Reply, ToolCall
from autoresearch.runner import RunnerError, run_campaign
from tests.autoresearch.conftest import KEY, KEY_ENV, branin, llm_policy
from tests.autoresearch.runner.conftest import FAST, synthetic_config, write_config

_register()
cli = CliRunner()


def _stubborn(req: FakeRequest) -> Reply:
    """Every proposal is outside the search space."""
    if "write_research_log" in {t.name for t in req.tools}:
        return ToolCall(name="write_research_log", arguments={"learned": "nothing", "next": "more"})
    bad = {"params": {"x1": 50.0, "x2": 1.0}, "hypothesis": "h", "expected_effect": "e"}
    return ToolCall(name="propose_trials", arguments={"trials": [bad]})


def _no_trial_left_proposed(name: str, home: Path) -> Ledger:
    ledger = Ledger.load(name, home)
    assert all(t.state is not TrialState.proposed for t in ledger.trials())
    return ledger


def test_policy_fallback_fail_fails_the_campaign_with_the_reason(compute_home: Path, tracking, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(_stubborn, api_key=KEY) as server:
        policy = {**llm_policy(server, "openai"), "fallback": "fail"}
        campaign = branin(name="llm-fail", policy=policy, tracking={"uri": tracking.tracking_uri},
                          budget={"max_trials": 2, "max_parallel": 1})  # fmt: skip
        outcome = run_campaign(campaign, home=compute_home, settings=FAST)
    assert outcome.state is CampaignState.failed
    assert "the policy failed" in outcome.reason and "policy.fallback is fail" in outcome.reason
    _no_trial_left_proposed(campaign.name, compute_home)


def test_a_refused_api_key_fails_the_run_without_a_traceback(compute_home: Path, tracking, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-wrong-key")
    with FakeLLMServer(_stubborn, api_key=KEY) as server:
        data = synthetic_config(tracking, policy=llm_policy(server, "openai"), budget={"max_trials": 2})
        result = cli.invoke(app, ["run", str(write_config(tmp_path, data)), "-q"], env={"COLUMNS": "400"})
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    text = " ".join(result.output.split())
    assert f"campaign {data['name']} failed: the policy failed" in text and "401" in text
    assert Ledger.load(data["name"], compute_home).state is CampaignState.failed
    _no_trial_left_proposed(data["name"], compute_home)


def test_an_mlflow_store_that_cannot_open_names_the_file_not_the_uri(tmp_path: Path) -> None:
    store = tmp_path / "mlflow.db"
    store.write_bytes(b"this is not an SQLite file" * 100)
    campaign = branin(name="bad-store", policy={"kind": "optuna"}, tracking={"uri": f"sqlite:///{store}"})
    with pytest.raises(RunnerError) as info:
        run_campaign(campaign, home=tmp_path / "home", settings=FAST)
    assert f"the MLflow store sqlite:///{store} is not a usable SQLite database" in str(info.value)
    assert "Fix tracking.uri" not in str(info.value)  # the URI is right: the file behind it is not a store
