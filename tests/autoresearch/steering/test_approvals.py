"""Approval gates: a campaign that needs a yes before launching beyond N GPU-hours waits
(nothing is submitted) until /approve; a priority raise waits and /deny keeps the priority;
a lowering needs no approval and moves the campaign's jobs."""

from __future__ import annotations

from autoresearch.campaign import CampaignPaths, CampaignState, Ledger, TrialState
from autoresearch.chat import ChatSession, Conversation
from autoresearch.runner import run_campaign
from autoresearch.steering import ApprovalBook, ApprovalStatus, Gate, read_messages
from tests.autoresearch.runner.conftest import FAST, Background, campaign_jobs, campaign_of, synthetic_config, wait_until


def _say(conversation: Conversation, line: str) -> str:
    return "\n".join(conversation.handle(line))


def test_a_gate_blocks_launches_until_approved_and_a_denied_raise_keeps_the_priority(compute_client, tracking):
    data = synthetic_config(tracking, steps=10, step_seconds=0.1, budget={"max_trials": 4, "max_parallel": 2},
                            approvals={"gpu_hours_over": 0.0, "priority_raise": True})  # fmt: skip
    name = data["name"]
    runner = Background(lambda: run_campaign(campaign_of(data), settings=FAST))
    book = ApprovalBook(CampaignPaths.of(name))
    wait_until(lambda: CampaignPaths.of(name).approvals.exists() and book.open_requests(),
               what="an approval request")  # fmt: skip
    chat = Conversation(ChatSession(name, author="bob"))
    status = _say(chat, "/status")
    assert "WAITING for approval #1: launch trials beyond 0 GPU-hours (used 0); waiting: trials 0, 1" in status
    assert campaign_jobs(compute_client, name) == []  # blocked: nothing submitted
    assert [t.state for t in Ledger.load(name).trials()] == [TrialState.proposed] * 2

    assert "error: request 7 is not waiting; waiting: 1" in _say(chat, "/approve 7")
    assert "queued #1 approve #1: launch trials beyond 0 GPU-hours" in _say(chat, "/approve #1 budget is fine")
    wait_until(lambda: len(campaign_jobs(compute_client, name)) == 2, what="launches after the approval")
    first = book.get(1)
    assert first.status is ApprovalStatus.approved and first.answered_by == "bob" and first.reason == "budget is fine"

    assert "(needs approval: approvals.priority_raise)" in _say(chat, "/priority high")
    wait_until(lambda: len(book.requests()) == 2 and book.open_requests(), what="the priority request")
    raise_request = book.open_requests()[0]
    assert raise_request.gate is Gate.priority_raise and "50 -> 75" in raise_request.summary
    _say(chat, "/deny not tonight")
    wait_until(lambda: book.get(raise_request.id).applied, what="the denial to be applied")
    assert Ledger.load(name).campaign.compute.priority == 50

    assert "compute.priority: 50 (normal) -> 30 (low+5)" in _say(chat, "/priority 30")
    wait_until(lambda: Ledger.load(name).campaign.compute.priority == 30, what="the lower priority")
    outcome = runner.join()
    assert outcome.state is CampaignState.completed
    assert [t.state for t in outcome.status.trials] == [TrialState.complete] * 4
    priorities = [j.priority for j in campaign_jobs(compute_client, name)]
    assert set(priorities) <= {50, 30} and 30 in priorities, priorities
    assert [r.gate for r in book.requests()] == [Gate.gpu_hours, Gate.priority_raise]  # the grant is not asked again
    raised, lowered = [m.outcome for m in read_messages(name) if m.kind == "priority"]
    assert raised.startswith("waiting for approval #2") and lowered.startswith("compute.priority: 50 (normal) -> 30")
