"""The runner and a daemon that dies while every slot is busy (issue 20 item 7): its waits
restart the daemon, which adopts the running trials, and the campaign completes."""

from __future__ import annotations

import json
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


class Recorded:
    """A display keeping the runner's events, each with the pid of the daemon holding the home then."""

    def __init__(self, paths) -> None:
        self.paths = paths
        self.events: list[tuple[str, int | None]] = []

    def event(self, text: str) -> None:
        self.events.append((text, daemon_pid(self.paths)))

    def update(self, status, max_trials) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_runner_whose_restarted_daemon_does_not_answer_says_so_while_it_waits(start_compute, tracking) -> None:
    """The restarted daemon connects to a Ray cluster that does not answer (as one without the token
    would): the runner says so within seconds, naming what the daemon waits on and its log, while the
    daemon is still given its time (the killed daemon's daemon.json no longer passes for the new one's
    readiness: the runner went on as if it served); a daemon that then exits ends the runner with its
    log's last lines."""
    client = start_compute(gpus=2)
    data = synthetic_config(tracking, steps=600, step_seconds=0.5, budget={"max_trials": 2, "max_parallel": 2})
    campaign = campaign_of(data)
    display = Recorded(client.paths)  # its trials outlive the test: the runner only waits (the fixture ends them)
    runner = Background(lambda: run_campaign(campaign, home=client.home, settings=FAST, display=display))
    wait_until(lambda: len([j for j in campaign_jobs(client, campaign.name) if j.state is JobState.running]) == 2,
               what="both slots busy")
    info = json.loads(client.paths.daemon_info.read_text())
    info["config"].update(backend="ray", ray_address="127.0.0.1:1")  # the restart connects there
    client.paths.daemon_info.write_text(json.dumps(info))
    old = daemon_pid(client.paths)
    os.kill(old, signal.SIGKILL)
    try:
        said = wait_until(lambda: next((e for e in display.events if "not answering yet" in e[0]), None),
                          what="the runner saying the restarted daemon does not answer")
        text, restarted = said
        assert restarted is not None and restarted != old  # said while the new daemon still had its time
        assert "connecting to the Ray cluster at 127.0.0.1:1" in text and str(client.paths.daemon_log) in text
        os.kill(restarted, signal.SIGKILL)  # it dies: the runner ends at once, with its log's last lines
        with pytest.raises(RunnerError) as ended:
            runner.join(timeout=60)
        assert "exited with code -9 while starting" in str(ended.value)
        assert str(client.paths.daemon_log) in str(ended.value)
    finally:
        if not runner.done and (pid := daemon_pid(client.paths)) not in (None, old):
            os.kill(pid, signal.SIGKILL)  # never leave a daemon stuck connecting behind
