"""A campaign between runs (issue 20 item 13): steering sent to an ended campaign expires with a
note instead of cancelling the next run's trials; `api.run(..., max_trials=N)` on a completed
campaign does not rewrite its budget; a running campaign that no runner holds shows `interrupted`."""

from __future__ import annotations

from pathlib import Path

from autoresearch import api
from autoresearch.campaign import CampaignPaths, CampaignState, Ledger, TrialState, campaign_status
from autoresearch.runner import run_campaign
from autoresearch.runner.lock import CampaignLock
from autoresearch.steering import Inbox, post
from tests.autoresearch.runner.conftest import FAST, campaign_of, synthetic_config, write_config


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


def test_a_running_campaign_without_a_runner_shows_interrupted(tracking, tmp_path: Path) -> None:
    campaign = campaign_of(_config(tracking))
    ledger = Ledger.open(campaign, tmp_path)
    assert ledger.state is CampaignState.running  # stored: the runner never got to end it
    assert campaign_status(Ledger.load(campaign.name, tmp_path)).state is CampaignState.interrupted
    with CampaignLock(CampaignPaths.of(campaign.name, tmp_path)):
        assert campaign_status(Ledger.load(campaign.name, tmp_path)).state is CampaignState.running
    [overview] = api.campaigns(home=tmp_path)
    assert overview.state is CampaignState.interrupted
