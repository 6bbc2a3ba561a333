"""The `approvals.code_patches` gate on a code-edit campaign: a trial with a patch waits (nothing
is submitted) until a person answers in chat; an approved patch runs, a denied one is cancelled
without a job (it does not spend the trial budget) and noted in the research log the model reads,
and a trial without a patch needs no answer."""

from __future__ import annotations

from pathlib import Path

from autoresearch.campaign import CampaignPaths, CampaignState, Ledger, TrialState
from autoresearch.chat import ChatSession, Conversation
from autoresearch.llm import FakeLLMServer, FakeRequest, Reply, ToolCall
from autoresearch.runner import run_campaign
from autoresearch.steering import ApprovalBook, ApprovalStatus, Gate
from tests.autoresearch.runner.conftest import FAST as RUNNER_FAST
from tests.autoresearch.runner.conftest import Background, campaign_jobs, wait_until

from tests.autoresearch.conftest import FAST_LLM, KEY, first_user, llm_policy, rate_patch, toy_campaign


class PatchingResearcher:
    """Round 1: the baseline (no patch). Round 2: RATE 1 -> 3. Round 3: RATE 3 -> 2.5 (on trial 1,
    the parent once it ran). Later rounds: the parent's code again, no patch."""

    def __init__(self) -> None:
        self.rounds = 0
        self.prompts: list[str] = []

    def __call__(self, req: FakeRequest) -> Reply:
        if "write_research_log" in {t.name for t in req.tools}:
            return ToolCall(name="write_research_log", arguments={"learned": "RATE matters", "next": "tune RATE"})
        self.rounds += 1
        self.prompts.append(first_user(req.messages))
        if self.rounds == 1:
            idea = {"hypothesis": "baseline: measure the unchanged code"}
        elif self.rounds == 2:
            idea = {"patch": rate_patch("1.0", "3.0"), "hypothesis": "the optimum is RATE 3"}
        elif self.rounds == 3:
            idea = {"patch": rate_patch("3.0", "2.5"), "hypothesis": "RATE 2.5 is safer"}
        else:
            idea = {"hypothesis": "measure the parent again"}
        return ToolCall(name="propose_trials", arguments={"trials": [{**idea, "expected_effect": "lower loss"}]})


def _say(chat: Conversation, line: str) -> str:
    return "\n".join(chat.handle(line))


def test_patches_wait_for_approval_and_a_denied_patch_never_runs(llm_env: Path, toy_project: Path, tracking,
                                                                 compute_client) -> None:  # fmt: skip
    researcher = PatchingResearcher()
    with FakeLLMServer(researcher, api_key=KEY) as server:
        campaign = toy_campaign(
            toy_project, name="toy-gated", policy={**llm_policy(server, "anthropic"), "kind": "llm"},
            tracking={"uri": tracking.tracking_uri}, budget={"max_trials": 3, "max_parallel": 1},
            approvals={"code_patches": True},
        )  # fmt: skip
        runner = Background(lambda: run_campaign(campaign, home=llm_env, settings=RUNNER_FAST, policy_factory=FAST_LLM))
        book = ApprovalBook(CampaignPaths.of(campaign.name, llm_env))
        first = wait_until(lambda: book.open_requests(), what="the first patch request")[0]
        chat = Conversation(ChatSession(campaign.name, home=llm_env, author="carol"))
        assert first.gate is Gate.code_patch and first.details["trial"] == 1
        assert first.summary.startswith("launch trial 1 with a 6-line code patch: the optimum is RATE 3")
        ledger = Ledger.load(campaign.name, llm_env)
        assert ledger.trial(0).state is TrialState.complete  # the baseline needed no answer
        assert ledger.trial(1).state is TrialState.proposed
        assert [j.spec.labels.get("trial") for j in campaign_jobs(compute_client, campaign.name)] == ["0"]
        assert f"WAITING for approval #{first.id}: launch trial 1" in _say(chat, "/status")
        assert f"approve #{first.id}" in _say(chat, f"/approve #{first.id} looks safe")

        second = wait_until(lambda: [r for r in book.open_requests() if r.id != first.id],
                            what="the second patch request")[0]  # fmt: skip
        assert second.gate is Gate.code_patch and second.details["trial"] == 2
        assert second.details["patch"] == rate_patch("3.0", "2.5")
        assert f"deny #{second.id}" in _say(chat, f"/deny #{second.id} not that file today")
        outcome = runner.join()

    assert outcome.state is CampaignState.completed, outcome.reason
    ledger = Ledger.load(campaign.name, llm_env)
    states = [t.state for t in ledger.trials()]  # the denied trial does not spend the budget of 3
    assert states == [TrialState.complete, TrialState.complete, TrialState.cancelled, TrialState.complete]
    assert ledger.trial(2).job_id is None
    assert ledger.trial(1).value < 0.01 and ledger.trial(3).value < 0.01  # the approved patch ran, and is the parent
    jobs = sorted(j.spec.labels.get("trial") for j in campaign_jobs(compute_client, campaign.name))
    assert jobs == ["0", "1", "3"]
    assert any("trial 2's patch was denied by carol: not that file today" in n.text for n in ledger.notes())
    assert "denied" in researcher.prompts[3]  # the model is told, through the research log
    answered = {r.id: r for r in book.requests()}
    assert len(answered) == 2
    assert answered[first.id].status is ApprovalStatus.approved and answered[first.id].answered_by == "carol"
    assert answered[second.id].status is ApprovalStatus.denied and answered[second.id].applied
