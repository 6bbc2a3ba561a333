"""The LLM policy through the real campaign runner, compute daemon and MLflow store, with the
real OpenAI and Anthropic SDK clients talking to the fake server: a whole campaign per provider,
a provider outage that pauses the campaign and a resume that finishes it, and a code-edit
campaign whose improving patch becomes the parent while a patch to the fixed file is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoresearch import api
from autoresearch.campaign import CampaignState, Ledger, PolicyKind, TrialState
from autoresearch.llm import FakeLLMServer, FakeRequest, FaultKind, Reply, Role, ToolCall
from autoresearch.policy import lineage
from autoresearch.report import write_report
from autoresearch.runner import run_campaign
from autoresearch.steering import post
from tracking import mlflow_client
from tests.autoresearch.runner.conftest import FAST as RUNNER_FAST
from tests.autoresearch.runner.conftest import Background, wait_until

from tests.autoresearch.conftest import FAST, FAST_LLM, KEY, Researcher, branin, first_user, llm_policy, rate_patch, toy_campaign

POINTS = [{"x1": 3.0, "x2": 2.5}, {"x1": 9.0, "x2": 2.0}, {"x1": -3.0, "x2": 12.0}, {"x1": 3.2, "x2": 2.3}]


def assert_no_secret(home: Path, tracking, experiment: str) -> None:
    for path in [*home.rglob("*"), Path(tracking.tracking_uri.removeprefix("sqlite:///"))]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"
    client = mlflow_client(tracking)
    for run in client.search_runs([client.get_experiment_by_name(experiment).experiment_id]):
        assert KEY not in str(run.data.params) + str(run.data.tags)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_whole_campaign_with_scripted_decisions(provider: str, llm_env: Path, tracking) -> None:
    researcher = Researcher(POINTS)
    with FakeLLMServer(researcher, api_key=KEY) as server:
        tracked = {"uri": tracking.tracking_uri}
        campaign = branin(name=f"llm-{provider}", policy=llm_policy(server, provider), tracking=tracked,
                          budget={"max_trials": 4, "max_parallel": 2})  # fmt: skip
        outcome = run_campaign(campaign, home=llm_env, settings=RUNNER_FAST, policy_factory=FAST_LLM)

    assert outcome.policy is PolicyKind.llm and outcome.state is CampaignState.completed, outcome.reason
    trials = outcome.status.trials
    assert [t.state for t in trials] == [TrialState.complete] * 4
    assert sorted(map(str, (t.params for t in trials))) == sorted(map(str, POINTS))
    assert outcome.status.best_trial.params == POINTS[3]  # nearest Branin's minimum at (pi, 2.275)
    ledger = Ledger.load(campaign.name, llm_env)
    assert all(t.hypothesis.startswith("try {") for t in ledger.trials())
    log = [n.text for n in ledger.notes() if n.author == "policy"]
    assert log and all(text.startswith("Learned: round") for text in log)
    assert ledger.llm_usd > 0 and researcher.replans == len(log)
    report = Path(api.report(campaign.name, home=llm_env)).read_text()
    assert "## Research log" in report and "Learned: round 1" in report
    usage = mlflow_client(tracking).get_run(ledger.facts().llm_run_id).data
    assert usage.params["llm.provider"] == provider and usage.metrics["llm.calls"] >= 3
    assert all(r.status == 200 for r in server.requests)
    assert_no_secret(llm_env, tracking, campaign.experiment)


def test_an_outage_pauses_the_campaign_and_a_resume_finishes_it(llm_env: Path, tracking) -> None:
    with FakeLLMServer(Researcher(POINTS), api_key=KEY) as server:
        server.inject(FaultKind.SERVER_ERROR, times=FAST.max_attempts, status=502)
        tracked = {"uri": tracking.tracking_uri}
        campaign = branin(name="llm-outage", policy=llm_policy(server, "openai"), tracking=tracked,
                          budget={"max_trials": 2, "max_parallel": 2})  # fmt: skip
        runner = Background(lambda: run_campaign(campaign, home=llm_env, settings=RUNNER_FAST, policy_factory=FAST_LLM))
        wait_until(lambda: server.requests, what="the first model call")  # the ledger exists by then
        wait_until(lambda: Ledger.load(campaign.name, llm_env).state is CampaignState.paused, what="the pause")
        assert Ledger.load(campaign.name, llm_env).trials() == []

        resumed = api.resume(campaign.name, home=llm_env)  # the live runner is asked through its inbox
        assert resumed.live_runner_pid is not None
        outcome = runner.join(timeout=180)

    assert outcome.state is CampaignState.completed and len(outcome.status.trials) == 2
    notes = [n for n in Ledger.load(campaign.name, llm_env).notes() if n.author == "runner"]
    assert "paused: the LLM provider is unavailable after 3 attempts" in notes[0].text
    assert [r.status for r in server.requests][:3] == [502, 502, 502]
    assert KEY not in notes[0].text


class CodeResearcher:
    """Round 1: the baseline. Round 2: a patch to the fixed evaluation (refused), then RATE 1 -> 3.
    Round 3: RATE 3 -> 3.5, which applies only to trial 1's code. Replans note the best trial."""

    def __init__(self) -> None:
        self.rounds = 0
        self.refusals: list[str] = []

    def __call__(self, req: FakeRequest) -> Reply:
        names = {t.name for t in req.tools}
        if "write_research_log" in names:
            return ToolCall(name="write_research_log", arguments={"learned": "RATE matters", "next": "tune RATE"})
        last = req.messages[-1]
        if last.role is Role.TOOL:
            self.refusals.append(last.tool_results[0].content)
            idea = {"patch": rate_patch("1.0", "3.0"), "hypothesis": "the optimum is RATE 3"}
        else:
            self.rounds += 1
            prompt = first_user(req.messages)
            if self.rounds == 1:
                idea = {"hypothesis": "baseline: measure the unchanged code"}
            elif self.rounds == 2:
                cheat = (
                    "--- a/evaluation.py\n+++ b/evaluation.py\n@@ -5 +5 @@\n"
                    "-    return (rate - 3.0) ** 2 + 0.001 * (seed % 3)\n+    return 0.0\n"
                )
                idea = {"patch": cheat, "hypothesis": "make the metric zero"}
            else:
                assert "New code starts from trial #1" in prompt and "RATE = 3.0" in prompt
                idea = {"patch": rate_patch("3.0", "3.5"), "hypothesis": "a little past the optimum"}
        return ToolCall(name="propose_trials", arguments={"trials": [{**idea, "expected_effect": "lower loss"}]})


def test_code_edit_campaign_patch_becomes_parent(llm_env: Path, toy_project: Path, tracking) -> None:
    researcher = CodeResearcher()
    with FakeLLMServer(researcher, api_key=KEY) as server:
        policy = {**llm_policy(server, "anthropic"), "kind": "llm"}
        campaign = toy_campaign(toy_project, name="toy-llm", policy=policy, tracking={"uri": tracking.tracking_uri},
                                budget={"max_trials": 3, "max_parallel": 1})  # fmt: skip
        outcome = run_campaign(campaign, home=llm_env, settings=RUNNER_FAST, policy_factory=FAST_LLM)

    assert outcome.state is CampaignState.completed, outcome.reason
    ledger = Ledger.load(campaign.name, llm_env)
    t0, t1, t2 = ledger.trials()
    assert [t.state for t in (t0, t1, t2)] == [TrialState.complete] * 3
    assert (t0.parent_trial, t1.parent_trial, t2.parent_trial) == (None, 0, 1)
    assert t0.value == pytest.approx(4.0, abs=0.01) and t1.value < 0.01 and t2.value == pytest.approx(0.25, abs=0.01)
    assert lineage(ledger.campaign, ledger.trials()).parent == 1  # the improvement stays the parent
    assert "evaluation.py, which is fixed" in researcher.refusals[0]

    spaces = ledger.path.parent / "workspaces"
    assert "RATE = 3.5" in (spaces / "trial-2" / "train.py").read_text()
    assert (spaces / "trial-2" / "evaluation.py").read_text() == (toy_project / "evaluation.py").read_text()
    assert "RATE = 1.0" in (toy_project / "train.py").read_text()
    client = mlflow_client(tracking)
    run = client.get_run(t2.mlflow_run_id).data
    assert run.tags["autoresearch.parent_trial"] == "1"
    artifact = Path(client.download_artifacts(t2.mlflow_run_id, "patch/trial-2.patch", str(llm_env)))
    assert artifact.read_text() == rate_patch("3.0", "3.5")

    report = write_report(ledger, llm_env / "report").read_text()
    section = report.split("## Code lineage", 1)[1].split("\n## ", 1)[0]
    assert "New code starts from trial #1 (mean loss 0" in section
    assert "Kept patches, oldest first: original code -> #0 -> #1." in section
    assert "| 1 | #0 | 6 lines | 1 |" in section and "| current parent | the optimum is RATE 3 |" in section
    assert "| 2 | #1 | 6 lines | 1 | 0.25" in section and "| not kept | a little past the optimum |" in section
    assert_no_secret(llm_env, tracking, campaign.experiment)


def _stubborn(req: FakeRequest) -> Reply:
    """A model whose every proposal is outside the search space, and whose replans are fine."""
    if "write_research_log" in {t.name for t in req.tools}:
        return ToolCall(name="write_research_log", arguments={"learned": "nothing yet", "next": "more"})
    bad = {"params": {"x1": 50.0, "x2": 1.0}, "hypothesis": "h", "expected_effect": "e"}
    return ToolCall(name="propose_trials", arguments={"trials": [bad]})


def test_a_model_without_valid_proposals_falls_back_to_optuna_and_finishes(llm_env: Path, tracking) -> None:
    with FakeLLMServer(_stubborn, api_key=KEY) as server:
        campaign = branin(name="llm-fallback", policy=llm_policy(server, "openai"),
                          tracking={"uri": tracking.tracking_uri}, budget={"max_trials": 3, "max_parallel": 1})  # fmt: skip
        outcome = run_campaign(campaign, home=llm_env, settings=RUNNER_FAST)

    assert outcome.state is CampaignState.completed, outcome.reason
    ledger = Ledger.load(campaign.name, llm_env)
    assert [t.state for t in ledger.trials()] == [TrialState.complete] * 3
    assert all(t.rationale.startswith("Optuna fallback") for t in ledger.trials())
    log = "\n".join(n.text for n in ledger.notes() if n.author == "policy")
    assert "Optuna sample(s) instead (policy.fallback: optuna)" in log and "asked again next round" in log


def test_policy_fallback_pause_pauses_the_campaign(llm_env: Path, tracking) -> None:
    with FakeLLMServer(_stubborn, api_key=KEY) as server:
        policy = {**llm_policy(server, "openai"), "fallback": "pause"}
        campaign = branin(name="llm-pause", policy=policy, tracking={"uri": tracking.tracking_uri},
                          budget={"max_trials": 2, "max_parallel": 1})  # fmt: skip
        runner = Background(lambda: run_campaign(campaign, home=llm_env, settings=RUNNER_FAST))
        wait_until(lambda: server.requests, what="the first model call")
        wait_until(lambda: Ledger.load(campaign.name, llm_env).state is CampaignState.paused, what="the pause")
        ledger = Ledger.load(campaign.name, llm_env)
        assert ledger.trials() == [] and "policy.fallback is pause" in ledger.state_reason
        post(campaign.name, "stop", {"reason": "enough"}, author="test", home=llm_env)
        outcome = runner.join(timeout=180)

    assert outcome.state is CampaignState.stopped
