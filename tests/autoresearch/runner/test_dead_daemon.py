"""The runner and a daemon that dies while every slot is busy (issue 20 item 7): its waits
restart the daemon, which adopts the running trials, and the campaign completes."""

from __future__ import annotations

import os
import signal

import pytest

from autoresearch.campaign import CampaignState, TrialState
from autoresearch.runner import RunnerError, run_campaign
from compute import JobState
from compute.control import daemon_pid
from tests.autoresearch.runner.conftest import FAST, Background, campaign_jobs, campaign_of, synthetic_config, wait_until


def test_a_campaign_with_every_slot_busy_survives_a_daemon_sigkill(start_compute, tracking) -> None:
    client = start_compute(gpus=2)
    data = synthetic_config(tracking, steps=30, step_seconds=0.1, budget={"max_trials": 4, "max_parallel": 2})
    campaign = campaign_of(data)
    runner = Background(lambda: run_campaign(campaign, home=client.home, settings=FAST))
    wait_until(lambda: len([j for j in campaign_jobs(client, campaign.name) if j.state is JobState.running]) == 2,
               what="both slots busy")
    os.kill(daemon_pid(client.paths), signal.SIGKILL)
    outcome = runner.join(timeout=180)
    assert outcome.state is CampaignState.completed, outcome.reason
    assert [t.state for t in outcome.status.trials] == [TrialState.complete] * 4
    assert daemon_pid(client.paths) is not None



def test_a_runner_whose_daemon_cannot_be_restarted_as_it_ran_says_why(start_compute, tracking) -> None:
    """The killed daemon's recorded cluster environment is unreadable: the runner's restart refuses
    to guess (issue 32 item 6) and the runner ends with that reason instead of waiting on nothing."""
    client = start_compute(gpus=2)
    data = synthetic_config(tracking, steps=30, step_seconds=0.1, budget={"max_trials": 4, "max_parallel": 2})
    campaign = campaign_of(data)
    runner = Background(lambda: run_campaign(campaign, home=client.home, settings=FAST))
    wait_until(lambda: len([j for j in campaign_jobs(client, campaign.name) if j.state is JobState.running]) == 2,
               what="both slots busy")
    client.paths.daemon_env.write_text("{not json")
    os.kill(daemon_pid(client.paths), signal.SIGKILL)
    with pytest.raises(RunnerError) as info:
        runner.join(timeout=120)
    assert "cannot be restarted as it ran" in str(info.value) and "autoresearch compute up" in str(info.value)
    assert daemon_pid(client.paths) is None
