"""The steering inbox: pause, resume, stop and note reach a live runner; an old row of a kind
this version does not know waits, never applied; a second runner refuses; an unavailable LLM
pauses the campaign until resume."""

from __future__ import annotations

import json
import os
import sqlite3
import time

import pytest
from click.testing import CliRunner

from autoresearch.campaign import CampaignPaths, CampaignState, Ledger, PolicyKind, TrialState
from autoresearch.cli import _register, app
from autoresearch.llm import LLMUnavailable
from autoresearch.policy import OptunaPolicy
from autoresearch.runner import RunnerBusy, holder_pid, run_campaign, with_llm
from autoresearch.steering import InboxError, Note, Pause, Resume, Stop, post, read_messages
from tests.autoresearch.runner.conftest import FAST, Background, campaign_jobs, campaign_of, synthetic_config, wait_until

_register()
cli = CliRunner()


def _started(name: str) -> bool:
    """The runner has created the ledger (it opens graph.db right after)."""
    return CampaignPaths.of(name).graph_db.exists()


def _states(name: str) -> list[TrialState]:
    return [t.state for t in Ledger.load(name).trials()] if _started(name) else []


def _state(name: str) -> CampaignState | None:
    return Ledger.load(name).state if _started(name) else None


def test_pause_lets_running_trials_finish_then_resume_then_stop_cancels(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, steps=10, step_seconds=0.15, budget={"max_trials": 20, "max_parallel": 2})
    name = data["name"]
    runner = Background(lambda: run_campaign(campaign_of(data), settings=FAST))
    wait_until(lambda: TrialState.running in _states(name), what="a running trial")

    post(name, Pause(), author="alice")
    wait_until(lambda: _state(name) is CampaignState.paused, what="paused")
    wait_until(lambda: not any(s in (TrialState.running, TrialState.proposed) for s in _states(name)),
               what="running trials to finish")  # fmt: skip
    paused_at = len(_states(name))
    assert all(s is TrialState.complete for s in _states(name))

    busy = cli.invoke(app, ["run", str(tmp_path / "absent.yaml")])
    assert busy.exit_code == 2  # bad input is refused before any lock
    with pytest.raises(RunnerBusy, match=f"pid {os.getpid()}"):
        run_campaign(campaign_of(data), settings=FAST)
    assert holder_pid(compute_client.home / "campaigns" / name / "runner.lock") == os.getpid()

    with pytest.raises(InboxError, match="unknown message kind 'later_kind'"):
        post(name, "later_kind", {"max_trials": 50}, author="chat")
    _old_row(name, "later_kind", {"max_trials": 50})  # a row an older version wrote: kept, never applied
    post(name, Note(text="x2 near 2 looks good"), author="alice")
    assert len(_states(name)) == paused_at  # nothing new while paused

    post(name, Resume(), author="alice")
    wait_until(lambda: len(_states(name)) > paused_at, what="new trials after resume")
    wait_until(lambda: TrialState.running in _states(name), what="a running trial after resume")

    post(name, Stop(reason="enough"), author="alice")
    outcome = runner.join()
    assert outcome.state is CampaignState.stopped and outcome.reason == "enough"
    ledger = Ledger.load(name)
    cancelled = [t for t in ledger.trials() if t.state is TrialState.cancelled]
    assert cancelled, "stop cancels the trials that were running"
    jobs = {j.id: j for j in campaign_jobs(compute_client, name)}
    compute_client.wait([t.job_id for t in cancelled if t.job_id], timeout=60)
    for t in cancelled:
        if t.job_id:
            assert compute_client.get(t.job_id).state.value == "cancelled", jobs[t.job_id]
    assert any(n.text == "x2 near 2 looks good" and n.author == "alice" for n in ledger.notes())

    messages = {m.kind: m for m in read_messages(name)}
    assert messages["later_kind"].handled_at is None and messages["later_kind"].command is None  # kept, not applied
    assert "unknown message kind 'later_kind'" in messages["later_kind"].problem
    assert messages["pause"].outcome.startswith("paused") and messages["stop"].handled_at is not None
    assert read_messages(name, pending_only=True) == [messages["later_kind"]]


def _old_row(name: str, kind: str, payload: dict) -> None:
    """Append a row the way any version writes it (the on-disk format is kind + JSON payload)."""
    db = sqlite3.connect(CampaignPaths.of(name).inbox_db, timeout=30)
    with db:
        db.execute("INSERT INTO messages (ts, author, kind, payload) VALUES (?, ?, ?, ?)",
                   (time.time(), "old", kind, json.dumps(payload)))  # fmt: skip
    db.close()


def test_posting_to_an_unknown_campaign_or_an_empty_note_is_refused(compute_client, tracking):
    with pytest.raises(InboxError, match="no campaign named 'nope'"):
        post("nope", "pause")
    data = synthetic_config(tracking, budget={"max_trials": 1, "max_parallel": 1})
    run_campaign(campaign_of(data), settings=FAST)
    with pytest.raises(InboxError, match='payload {"text"'):
        post(data["name"], "note", {})
    with pytest.raises(InboxError, match="lower-case word"):
        post(data["name"], "Drop Table")


class _FlakyLLMPolicy:
    """Stands in for the LLM policy: its provider is down for the first proposal."""

    def __init__(self, ledger: Ledger) -> None:
        self.inner = OptunaPolicy(ledger)
        self.calls = 0

    def propose(self, ctx, n):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 1:
            raise LLMUnavailable("openai gpt-x: 503 after 3 attempts", status=503, attempts=3, retry_after_s=30)
        return self.inner.propose(ctx, n)

    def replan(self, ctx):  # type: ignore[no-untyped-def]
        return self.inner.replan(ctx)


def test_an_unavailable_llm_pauses_the_campaign_until_resume(compute_client, tracking):
    data = synthetic_config(tracking, budget={"max_trials": 2, "max_parallel": 2},
                            policy={"kind": "llm", "provider": "openai", "model": "gpt-x"})  # fmt: skip
    name = data["name"]
    flaky = with_llm(lambda campaign, ledger: _FlakyLLMPolicy(ledger))
    runner = Background(lambda: run_campaign(campaign_of(data), settings=FAST, policy_factory=flaky))
    wait_until(lambda: _state(name) is CampaignState.paused, what="paused")
    ledger = Ledger.load(name)
    assert "LLM provider is unavailable" in ledger.state_reason and f"autoresearch resume {name}" in ledger.state_reason
    assert ledger.trials() == []

    resumed = cli.invoke(app, ["resume", name])  # the live runner gets the message through its inbox
    assert resumed.exit_code == 0, resumed.output
    assert "asked to resume" in resumed.stdout
    outcome = runner.join()
    assert outcome.state is CampaignState.completed
    assert outcome.policy is PolicyKind.llm
    assert [t.state for t in outcome.status.trials] == [TrialState.complete] * 2
