"""A campaign between runs (issue 20 item 13): steering sent to an ended campaign expires with a
note instead of cancelling the next run's trials; `api.run(..., max_trials=N)` on a completed
campaign does not rewrite its budget; a running campaign that no runner holds shows `interrupted`;
elapsed time counts the runs, not the idle hours between them."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner

from autoresearch import api
from autoresearch.campaign import (
    CampaignPaths,
    CampaignState,
    Ledger,
    TrialRecord,
    TrialState,
    active_seconds,
    campaign_status,
)
from autoresearch.cli import _register, app
from autoresearch.runner import run_campaign
from autoresearch.runner.lock import CampaignLock
from autoresearch.steering import Inbox, post
from tests.autoresearch.runner.conftest import FAST, campaign_of, synthetic_config, write_config

_register()


def _config(tracking, **budget) -> dict:
    return synthetic_config(tracking, steps=2, step_seconds=0.01, budget={"max_trials": 2, "max_parallel": 2, **budget})


def test_a_stop_sent_to_an_ended_campaign_expires_with_a_note(compute_home: Path, tracking) -> None:
    data = _config(tracking)
    assert run_campaign(campaign_of(data), home=compute_home, settings=FAST).state is CampaignState.completed
    sent = post(data["name"], "stop", {"reason": "too late"}, author="chat", home=compute_home)

    outcome = run_campaign(campaign_of(_config(tracking, max_trials=4) | {"name": data["name"]}),
                           home=compute_home, settings=FAST)  # fmt: skip

    assert outcome.state is CampaignState.completed, outcome.reason
    assert [t.state for t in outcome.status.trials] == [TrialState.complete] * 4
    inbox = Inbox(CampaignPaths.of(data["name"], compute_home))
    try:
        outcome_text = inbox.get(sent.id).outcome or ""
    finally:
        inbox.close()
    assert f"inbox #{sent.id} stop from chat expired: it was sent after the campaign had completed" in outcome_text
    assert any("expired" in n.text for n in Ledger.load(data["name"], compute_home).notes())


def test_max_trials_given_to_a_completed_campaign_does_not_rewrite_its_budget(compute_home: Path, tracking,
                                                                             tmp_path: Path) -> None:
    data = _config(tracking)
    assert run_campaign(campaign_of(data), home=compute_home, settings=FAST).state is CampaignState.completed
    outcome = api.run(write_config(tmp_path, data), max_trials=1, home=compute_home, settings=FAST)
    assert outcome.already_ended and outcome.state is CampaignState.completed
    assert api.campaign_max_trials(data["name"], home=compute_home) == 2


def test_run_of_a_completed_campaign_with_another_config_says_what_differs_and_exits_2(
        compute_home: Path, tracking, tmp_path: Path) -> None:
    """Issue 33 item 8: `run` of a completed name with a changed config is not "already completed", exit 0."""
    data = _config(tracking)
    file = write_config(tmp_path, data)
    cli = CliRunner()
    assert cli.invoke(app, ["run", str(file), "--quiet"], env={"COLUMNS": "400"}).exit_code == 0
    again = cli.invoke(app, ["run", str(file), "--quiet"], env={"COLUMNS": "400"})
    assert again.exit_code == 0 and "is already completed" in again.stdout  # the same config: nothing to say

    data["search_space"]["x1"]["high"] = 12.0
    data["command"][-1] = "--quiet-job"
    changed = cli.invoke(app, ["run", str(write_config(tmp_path, data)), "--quiet"], env={"COLUMNS": "400"})

    assert changed.exit_code == 2, changed.output
    text = " ".join(changed.stderr.split())
    assert f"campaign '{data['name']}' has already completed (budget.max_trials (2) reached" in text
    assert "search_space.x1.high: 10.0 -> 12.0" in text and "command[12]: --no-mlflow -> --quiet-job" in text
    assert "give it a new `name`" in text
    assert Ledger.load(data["name"], compute_home).campaign.search_space["x1"].high == 10.0  # nothing was changed


def test_a_running_campaign_without_a_runner_shows_interrupted(tracking, tmp_path: Path) -> None:
    campaign = campaign_of(_config(tracking))
    ledger = Ledger.open(campaign, tmp_path)
    assert ledger.state is CampaignState.running  # stored: the runner never got to end it
    assert campaign_status(Ledger.load(campaign.name, tmp_path)).state is CampaignState.interrupted
    with CampaignLock(CampaignPaths.of(campaign.name, tmp_path)):
        assert campaign_status(Ledger.load(campaign.name, tmp_path)).state is CampaignState.running
    [overview] = api.campaigns(home=tmp_path)
    assert overview.state is CampaignState.interrupted


def test_elapsed_counts_the_runs_not_the_idle_hours_between_them(compute_home: Path, tracking) -> None:
    data = _config(tracking)
    first = run_campaign(campaign_of(data), home=compute_home, settings=FAST)
    facts = Ledger.load(data["name"], compute_home).facts()
    assert first.state is CampaignState.completed and facts.run_started_at is None
    assert 0 < first.status.budget_used.elapsed == facts.active_s
    time.sleep(3)  # idle between the runs
    assert campaign_status(Ledger.load(data["name"], compute_home)).budget_used.elapsed == facts.active_s

    second = run_campaign(campaign_of(_config(tracking, max_trials=4) | {"name": data["name"]}),
                          home=compute_home, settings=FAST)  # fmt: skip
    since_start = (datetime.now(UTC) - facts.started_at).total_seconds()
    assert second.state is CampaignState.completed
    assert facts.active_s < second.status.budget_used.elapsed <= since_start - 3  # both runs, not the idle 3 s


def test_a_killed_run_is_credited_up_to_its_last_ended_trial(tracking, tmp_path: Path) -> None:
    campaign = campaign_of(_config(tracking))
    ledger = Ledger.open(campaign, tmp_path)
    began = datetime.now(UTC) - timedelta(hours=3)
    ledger.update_facts(active_s=60.0, run_started_at=began)  # a runner started 3 h ago, then was SIGKILLed
    trial = TrialRecord(number=0, state=TrialState.complete, params={}, ended_at=began + timedelta(minutes=2))
    now = datetime.now(UTC)
    assert active_seconds(ledger.facts(), [trial], now, live=False) == 60.0 + 120.0
    assert active_seconds(ledger.facts(), [], now, live=False) == 60.0  # nothing known to have run
    assert abs(active_seconds(ledger.facts(), [], now, live=True) - (60.0 + 3 * 3600)) < 5  # a live runner
    assert campaign_status(Ledger.load(campaign.name, tmp_path)).budget_used.elapsed == 60.0  # no runner: interrupted
