"""`autoresearch chat NAME` through stdin against a live runner process: the search space
narrows and the next proposals respect it; /try queues an exact trial; pause and resume;
bad commands change nothing; stop ends the campaign."""

from __future__ import annotations

from autoresearch.campaign import CampaignState, TrialState
from autoresearch.steering import read_messages
from tests.autoresearch.chat.conftest import ChatProcess, state, trials
from tests.autoresearch.runner.conftest import synthetic_config, wait_until


def _inside(params: dict, x1: tuple[float, float], x2: tuple[float, float]) -> bool:
    return x1[0] <= params["x1"] <= x1[1] and x2[0] <= params["x2"] <= x2[1]


def test_chat_narrows_the_space_tries_a_trial_pauses_resumes_and_stops(compute_home, tracking, start_runner):
    # max_trials: never used up before /stop, however slow the machine (60 ran out under load once)
    data = synthetic_config(tracking, steps=4, step_seconds=0.1, budget={"max_trials": 400, "max_parallel": 2})
    name = data["name"]
    runner = start_runner(data)
    wait_until(lambda: any(t.state is TrialState.running for t in trials(name)), what="a running trial")

    chat = ChatProcess(compute_home, name, "--no-llm")
    chat.send("/space x1=0..2 x2=1..3", "/space x1=5..1", "/space nope=1..2", "/try x1=1.5 x2=2.5", "/bogus")
    queued = chat.expect("queued #1 search_space.x1: float [-5, 10] -> float [0, 2]")
    assert "search_space.x2: float [0, 15] -> float [1, 3]" in queued
    chat.expect("error: search_space.x1: high (1.0) must be greater than low (5.0)")
    chat.expect("error: nope is not in the search space")
    chat.expect("queued #2 try x1=1.5 x2=2.5")
    chat.expect("error: unknown command /bogus")
    chat.expect("applied #1 space: search_space.x1: float [-5, 10] -> float [0, 2]")
    chat.expect("applied #2 try: trial")
    messages = read_messages(name)
    assert [m.kind for m in messages] == ["space", "try"]  # refused commands post nothing
    applied_at = messages[0].handled_at

    wait_until(lambda: len([t for t in trials(name) if t.created_at.timestamp() > applied_at]) >= 4,
               what="four proposals after the change")  # fmt: skip
    later = [t for t in trials(name) if t.created_at.timestamp() > applied_at]
    assert all(_inside(t.params, (0, 2), (1, 3)) for t in later), [t.params for t in later]
    tried = [t for t in trials(name) if t.rationale == "requested by alice in chat"]
    assert len(tried) == 1 and tried[0].params == {"x1": 1.5, "x2": 2.5}

    chat.send("/pause night shift")
    chat.expect("applied #3 pause: paused")
    wait_until(lambda: not any(t.state in (TrialState.running, TrialState.proposed) for t in trials(name)),
               what="running trials to finish")  # fmt: skip
    paused_count = len(trials(name))
    assert state(name) is CampaignState.paused
    chat.send("/status")
    chat.expect("paused (night shift)")
    chat.expect("slot-hours 0, llm $0.00")  # its trials held no GPU, physical or virtual
    assert len(trials(name)) == paused_count  # nothing new while paused

    chat.send("/resume")
    chat.expect("applied #4 resume: resumed")
    wait_until(lambda: len(trials(name)) > paused_count, what="new trials after resume")
    assert all(_inside(t.params, (0, 2), (1, 3)) for t in trials(name)[paused_count:])

    chat.send("/stop enough")
    chat.expect("applied #5 stop: stopped")
    chat.close()
    assert runner.wait() == 0
    assert state(name) is CampaignState.stopped
