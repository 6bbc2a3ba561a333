"""LLMPolicy's rules, with the scripted model: the LLM budget, falling back when the model gives
nothing valid, code-edit prompts and patch refusals, and the campaign's instructions file."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoresearch.campaign import Ledger, Proposal, load_campaign
from autoresearch.llm import Message, ScriptedProvider, ToolCall
from autoresearch.policy import LLMPolicy, PolicyContext, PolicyError, PolicyPause, ReplanAction
from autoresearch.workspace import Workspaces
from skills import SkillContext
from skills.tooldef import ToolDef

from tests.autoresearch.conftest import REPO, branin, complete_all, rate_patch, toy_campaign


def policy_for(ledger: Ledger, model: ScriptedProvider, tracking) -> LLMPolicy:
    context = SkillContext.create(home=ledger.path.parents[2], tracking_uri=tracking.tracking_uri)
    return LLMPolicy(ledger, model, skill_context=context)


def proposer(messages: list[Message], tools: list[ToolDef]):
    names = [t.name for t in tools]
    if "write_research_log" in names:
        return ToolCall(name="write_research_log", arguments={"learned": "x1 matters", "next": "more x1"})
    if messages[-1].content.startswith("# Propose") and len(names) > 1:
        return ToolCall(name="best_trials", arguments={})
    done = sum("propose_trials" in str(m.tool_calls) for m in messages)
    idea = {"params": {"x1": float(len(messages) + done), "x2": 1.0}, "hypothesis": "h", "expected_effect": "e"}
    return ToolCall(name="propose_trials", arguments={"trials": [idea]})


def test_llm_budget_stops_the_campaign(home: Path, tracking) -> None:
    ledger = Ledger.open(branin(name="budget", budget={"max_trials": 9, "max_llm_usd": 1.0}), home)
    policy = policy_for(ledger, ScriptedProvider(proposer, cost_per_call_usd=0.3), tracking)

    [proposal] = policy.propose(PolicyContext.from_ledger(ledger), 1)  # 2 calls: $0.60
    ledger.admit(proposal)
    complete_all(ledger, lambda p: p["x1"])
    decision = policy.replan(PolicyContext.from_ledger(ledger))  # $0.90
    assert decision.action is ReplanAction.continue_ and decision.notes == "Learned: x1 matters\nNext: more x1"
    assert policy.propose(PolicyContext.from_ledger(ledger), 1) == []  # best_trials ($1.20), then the budget is spent
    assert policy.propose(PolicyContext.from_ledger(ledger), 1) == []  # no call at all

    decision = policy.replan(PolicyContext.from_ledger(ledger))
    assert decision.action is ReplanAction.stop and decision.reason.startswith("LLM budget spent ($1.2000 of")
    assert "the campaign stops" in decision.notes
    assert ledger.llm_usd == pytest.approx(1.2) and policy.meter.report().total.calls == 4
    # A resumed policy starts from the saved spend: still no model call.
    again = policy_for(ledger, ScriptedProvider(proposer, cost_per_call_usd=0.3), tracking)
    assert again.propose(PolicyContext.from_ledger(ledger), 1) == [] and again.meter.report().total.calls == 4


def test_no_valid_proposal_falls_back_to_optuna_every_round(home: Path, tracking) -> None:
    ledger = Ledger.open(branin(name="stubborn"), home)
    out_of_range = {"trials": [{"params": {"x1": 50.0, "x2": 1.0}, "hypothesis": "h", "expected_effect": "e"}]}
    model = ScriptedProvider(lambda messages, tools: ToolCall(name="propose_trials", arguments=out_of_range))
    policy = policy_for(ledger, model, tracking)

    first = policy.propose(PolicyContext.from_ledger(ledger), 2)
    assert len(first) == 2 and all(p.trial_number is not None and p.rationale.startswith("Optuna fallback") for p in first)
    for p in first:
        ledger.admit(p)
    complete_all(ledger, lambda p: p["x1"])
    decision = policy.replan(PolicyContext.from_ledger(ledger))  # its own entry fails too: both noted
    assert "propose: the model gave no valid proposal (gave up after 4 invalid tool calls" in decision.notes
    assert "x1=50.0 is outside [-5.0, 10.0]" in decision.notes and "2 Optuna sample(s) instead" in decision.notes
    assert "The model is asked again next round." in decision.notes
    assert "replan: the model wrote no research-log entry" in decision.notes

    calls = len(model.calls)
    for _ in range(3):  # never gives up with the default policy.fallback: optuna
        [again] = policy.propose(PolicyContext.from_ledger(ledger), 1)
        assert again.rationale.startswith("Optuna fallback: the model gave no valid proposal this round (gave up")
        ledger.admit(again)
        assert len(model.calls) > calls  # the model was asked again first
        calls = len(model.calls)
    assert ledger.trial(again.trial_number).rationale.startswith("Optuna fallback")  # marked in the trial


@pytest.mark.parametrize("fallback, error", [("pause", PolicyPause), ("fail", PolicyError)])
def test_policy_fallback_pause_or_fail(home: Path, tracking, fallback: str, error: type[Exception]) -> None:
    settings = branin().policy.model_dump(mode="json") | {"fallback": fallback}
    ledger = Ledger.open(branin(name=f"stubborn-{fallback}", policy=settings), home)
    bad = {"trials": [{"params": {"x1": 50.0, "x2": 1.0}, "hypothesis": "h", "expected_effect": "e"}]}
    policy = policy_for(ledger, ScriptedProvider(lambda m, t: ToolCall(name="propose_trials", arguments=bad)), tracking)

    with pytest.raises(error, match=f"the model gave no valid proposal .*policy.fallback is {fallback}"):
        policy.propose(PolicyContext.from_ledger(ledger), 1)
    assert ledger.trials() == []


def test_more_trials_than_slots_are_cut_with_a_note(home: Path, tracking) -> None:
    ledger = Ledger.open(branin(name="eager"), home)
    ideas = [{"params": {"x1": float(x), "x2": 1.0}, "hypothesis": "h", "expected_effect": "e"} for x in range(3)]
    model = ScriptedProvider(lambda m, t: ToolCall(name="propose_trials", arguments={"trials": ideas}))
    policy = policy_for(ledger, model, tracking)

    proposals = policy.propose(PolicyContext.from_ledger(ledger), 2)

    assert [p.params["x1"] for p in proposals] == [0.0, 1.0]
    for p in proposals:
        ledger.admit(p)
    complete_all(ledger, lambda p: p["x1"])
    notes = policy.replan(PolicyContext.from_ledger(ledger)).notes
    assert "propose_trials got 3 trials but only 2 slot(s) were free" in notes and "trials[2:] dropped" in notes


def test_code_edit_prompt_and_patch_refusal(home: Path, toy_project: Path, tracking) -> None:
    (toy_project / "program.md").write_text("Only change RATE. Never touch the data.\n")
    campaign = toy_campaign(toy_project, policy={"kind": "llm", "provider": "anthropic", "model": "m",
                                                 "instructions_file": str(toy_project / "program.md")})  # fmt: skip
    ledger = Ledger.open(campaign, home)
    cheat = "evaluation.py\n<<<<<<< SEARCH\n    return (rate - 3.0) ** 2\n=======\n    return 0.0\n>>>>>>> REPLACE\n"
    fix = {"patch": rate_patch("1.0", "3.0"), "hypothesis": "RATE 3 is the optimum", "expected_effect": "loss near 0"}
    model = ScriptedProvider.from_turns([
        ToolCall(name="propose_trials", arguments={"trials": [{**fix, "patch": cheat}]}),
        ToolCall(name="propose_trials", arguments={"trials": [fix]}),
    ])  # fmt: skip
    policy = policy_for(ledger, model, tracking)

    [proposal] = policy.propose(PolicyContext.from_ledger(ledger), 1)

    assert proposal.patch == rate_patch("1.0", "3.0") and proposal.parent_trial is None
    system, user = model.calls[0][0].content, model.calls[0][1].content
    assert "Only change RATE. Never touch the data." in system and "# Campaign instructions (from program.md)" in system
    assert "Fixed (the evaluation every trial is judged by; no patch may touch them): evaluation.py" in system
    assert "def score(rate, seed):" in system  # the fixed evaluation is shown, read-only
    assert "### train.py\n```\n" + (toy_project / "train.py").read_text() in user
    refusal = model.calls[1][-1].tool_results[0]
    assert refusal.is_error and "evaluation.py, which is fixed" in refusal.content
    assert "Change only the editable files: train.py" in refusal.content


def test_the_model_proposes_only_new_ideas_and_is_told_the_leaders_are_confirmed(home: Path, toy_project: Path,
                                                                                  tracking) -> None:
    campaign = toy_campaign(toy_project, name="noisy", confirm={"top_k": 1, "seeds": 1, "when": "new_best"})
    ledger = Ledger.open(campaign, home)
    ledger.admit(Proposal(hypothesis="baseline"))
    complete_all(ledger, lambda p: 4.0)
    idea = {"patch": rate_patch("1.0", "2.0"), "hypothesis": "RATE 2", "expected_effect": "loss 1"}
    model = ScriptedProvider.from_turns([ToolCall(name="propose_trials", arguments={"trials": [idea]})])
    policy = policy_for(ledger, model, tracking)

    [new] = policy.propose(PolicyContext.from_ledger(ledger), 2)  # confirmations are the runner's, not the model's

    assert (new.confirms, new.patch, new.parent_trial) == (None, idea["patch"], 0)
    assert "Propose up to 2 new trial(s)" in model.calls[0][1].content
    assert "the leaders are re-run with 1 new seed(s)" in model.calls[0][0].content


def test_the_tinygpt_code_edit_example_proposes_and_builds_a_workspace(home: Path, tracking) -> None:
    campaign = load_campaign(REPO / "examples" / "tinygpt" / "code-edit.yaml")
    ledger = Ledger.open(campaign, home)
    patch = "train.py\n<<<<<<< SEARCH\nEXIT_NAN = 3\n=======\nEXIT_NAN = 3  # unchanged exit code\n>>>>>>> REPLACE\n"
    idea = {"patch": patch, "hypothesis": "a comment changes nothing", "expected_effect": "same val_bpb"}
    model = ScriptedProvider.from_turns([ToolCall(name="propose_trials", arguments={"trials": [idea]})])

    [proposal] = policy_for(ledger, model, tracking).propose(PolicyContext.from_ledger(ledger), 1)
    number = ledger.admit(proposal).trial_number
    space = Workspaces(ledger).prepare(number)

    assert "EXIT_NAN = 3  # unchanged exit code" in (space / "train.py").read_text()
    assert (space / "evaluation.py").read_text() == (campaign.cwd / "evaluation.py").read_text()
    system = model.calls[0][0].content
    assert "# Campaign instructions (from program.md)" in system and "Edit `train.py` only." in system


def test_the_model_can_stop_the_campaign_with_a_reason(home: Path, tracking) -> None:
    ledger = Ledger.open(branin(name="plateau"), home)
    ledger.admit(Proposal(params={"x1": 3.1, "x2": 2.3}))
    complete_all(ledger, lambda p: 0.4)
    entries = [
        {"learned": "at the optimum", "next": "nothing", "stop": True, "reason": ""},
        {"learned": "0.4 is Branin's minimum", "next": "nothing", "stop": True, "reason": "plateau at the optimum"},
    ]
    model = ScriptedProvider.from_turns([ToolCall(name="write_research_log", arguments=e) for e in entries])

    decision = policy_for(ledger, model, tracking).replan(PolicyContext.from_ledger(ledger))

    assert decision.action is ReplanAction.stop and decision.reason == "plateau at the optimum"
    assert decision.notes == "Learned: 0.4 is Branin's minimum\nNext: nothing\nStop: plateau at the optimum"
    assert "stop is true: give the reason for stopping" in model.calls[1][-1].tool_results[0].content
