"""OptunaPolicy: reproduces plain Optuna, draws parallel proposals up front, prunes with the median rule."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import optuna
import pytest

from autoresearch.campaign import Ledger, Proposal, TrialState
from autoresearch.policy import (
    OptunaPolicy,
    Policy,
    PolicyContext,
    PolicyError,
    PruneDecision,
    Pruning,
    ReplanAction,
    build_sampler,
)
from tests.autoresearch.campaign.conftest import make_campaign, toy_objective


def _plain_optuna(sampler: optuna.samplers.BaseSampler, n: int) -> list[dict[str, Any]]:
    """The reference: an in-memory study, ask / suggest / tell, one trial at a time."""
    study = optuna.create_study(direction="maximize", sampler=sampler)
    history = []
    for _ in range(n):
        trial = study.ask()
        params = {
            "x": trial.suggest_float("x", -5.0, 5.0),
            "y": trial.suggest_int("y", 0, 10),
            "kind": trial.suggest_categorical("kind", ["a", "b", "c"]),
        }
        study.tell(trial, toy_objective(params))
        history.append(params)
    return history


def _through_the_ledger(policy: OptunaPolicy, ledger: Ledger, n: int) -> list[dict[str, Any]]:
    """The runner's cycle with max_parallel 1: propose, admit, launch, complete."""
    history = []
    for _ in range(n):
        (proposal,) = policy.propose(PolicyContext.from_ledger(ledger), 1)
        proposal = ledger.admit(proposal)
        ledger.mark_launched(proposal.trial_number, f"job-{proposal.trial_number:010d}")
        ledger.complete(proposal.trial_number, toy_objective(proposal.params))
        history.append(proposal.params)
    return history


@pytest.mark.parametrize(
    ("sampler", "reference"),
    [
        ("tpe", lambda: optuna.samplers.TPESampler(seed=7, multivariate=True, constant_liar=True)),
        ("random", lambda: optuna.samplers.RandomSampler(seed=7)),
    ],
)
def test_seeded_policy_reproduces_plain_optuna(home: Path, tmp_path: Path, sampler: str, reference: Any) -> None:
    n = 14  # past TPE's 10 random startup trials, so the model-based draws are compared too
    campaign = make_campaign(tmp_path, policy={"kind": "optuna", "sampler": sampler, "seed": 7})
    ledger = Ledger.open(campaign)

    ours = _through_the_ledger(OptunaPolicy(ledger), ledger, n)

    assert ours == _plain_optuna(reference(), n)


def test_confirmations_are_no_samples_to_the_sampler(home: Path, tmp_path: Path) -> None:
    """Confirmations of trial 0 (its parameters again, other values) leave the TPE draws of the new
    trials exactly plain Optuna's: they neither end its random start-up early nor enter its model."""
    campaign = make_campaign(tmp_path, policy={"kind": "optuna", "sampler": "tpe", "seed": 7})
    ledger = Ledger.open(campaign)
    policy = OptunaPolicy(ledger)
    ours = _through_the_ledger(policy, ledger, 1)
    for value in (100.0, -100.0):
        confirmation = ledger.admit(Proposal(params=ours[0], confirms=0))
        ledger.mark_launched(confirmation.trial_number, f"job-{confirmation.trial_number:010d}")
        ledger.complete(confirmation.trial_number, value)

    ours += _through_the_ledger(policy, ledger, 13)

    assert ours == _plain_optuna(optuna.samplers.TPESampler(seed=7, multivariate=True, constant_liar=True), 14)
    assert [t.confirms for t in ledger.trials()][:3] == [None, 0, 0]


def test_parallel_proposals_are_drawn_before_any_result_and_differ(home: Path, tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path, budget={"max_trials": 30, "max_parallel": 4})
    ledger = Ledger.open(campaign)
    policy = OptunaPolicy(ledger)
    _through_the_ledger(policy, ledger, 11)

    batch = [ledger.admit(p) for p in policy.propose(PolicyContext.from_ledger(ledger), 4)]

    assert [p.trial_number for p in batch] == [11, 12, 13, 14]
    assert all(set(p.params) == {"x", "y", "kind"} for p in batch)
    assert len({tuple(sorted(p.params.items())) for p in batch}) == 4  # the constant liar spreads them
    assert [t.params for t in ledger.unlaunched()] == [p.params for p in batch]  # stored at propose time
    assert all(p.rationale == "tpe sample" for p in batch)


def test_other_proposals_enter_the_same_study(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path))
    policy = OptunaPolicy(ledger)
    mine = ledger.admit(Proposal(params={"x": 1.0, "y": 3, "kind": "b"}, rationale="from chat /try"))
    ledger.mark_launched(mine.trial_number, "job-0000000000")
    ledger.complete(mine.trial_number, 10.0)

    (sampled,) = policy.propose(PolicyContext.from_ledger(ledger), 1)

    assert sampled.trial_number == 1
    assert [t.params for t in policy.study.get_trials()][0] == {"x": 1.0, "y": 3, "kind": "b"}
    assert policy.study.best_value == 10.0  # the sampler sees the chat trial


def test_resumed_policy_does_not_replay_its_first_draws(home: Path, tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path, policy={"kind": "optuna", "sampler": "random", "seed": 7})
    ledger = Ledger.open(campaign)
    first = _through_the_ledger(OptunaPolicy(ledger), ledger, 3)

    resumed = Ledger.open(campaign)
    later = _through_the_ledger(OptunaPolicy(resumed), resumed, 3)

    assert not set(map(str, first)) & set(map(str, later))
    assert later == _plain_optuna(optuna.samplers.RandomSampler(seed=7 + 3), 3)  # reseeded: seed + trials so far


def test_median_pruner_decisions(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path, policy={"kind": "optuna", "pruner": "median", "seed": 1}))
    policy = OptunaPolicy(ledger)
    assert isinstance(policy, Policy) and isinstance(policy, Pruning)

    def start() -> int:
        (p,) = policy.propose(PolicyContext.from_ledger(ledger), 1)
        number = ledger.admit(p).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        return number

    early = start()
    ledger.report(early, 0, 0.0)
    assert policy.judge(ledger.trial(early)) is PruneDecision.keep  # no completed trials yet

    # Five completed trials whose curves at step s are 1s + k, k = 0..4: the median at step s is 1s + 2.
    for k in range(5):
        n = start()
        for step in range(4):
            ledger.report(n, step, step + k)
        ledger.complete(n, 3 + k)

    fresh = start()
    assert policy.judge(ledger.trial(fresh)) is PruneDecision.keep  # nothing reported yet
    ledger.report(fresh, 0, 2.5)
    ledger.report(fresh, 1, 3.5)
    assert policy.judge(ledger.trial(fresh)) is PruneDecision.keep  # above the median (3) at step 1

    loser = start()
    ledger.report(loser, 0, 1.0)
    ledger.report(loser, 1, 2.0)
    assert policy.judge(ledger.trial(loser)) is PruneDecision.prune  # below the median (3) at step 1
    assert ledger.prune(loser).state is TrialState.pruned
    assert policy.judge(ledger.trial(loser)) is PruneDecision.keep  # only running trials are judged


def test_no_pruner_never_prunes(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path, policy={"kind": "optuna", "pruner": "none"}))
    policy = OptunaPolicy(ledger)
    numbers = [ledger.admit(p).trial_number for p in policy.propose(PolicyContext.from_ledger(ledger), 6)]
    for n in numbers[:5]:
        ledger.mark_launched(n, f"job-{n:010d}")
        ledger.report(n, 0, 10.0)
        ledger.complete(n, 10.0)
    ledger.mark_launched(numbers[5], "job-0000000005")
    ledger.report(numbers[5], 0, -100.0)
    assert policy.judge(ledger.trial(numbers[5])) is PruneDecision.keep


def test_replan_continues_and_bad_setups_say_what_to_do(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path))
    decision = OptunaPolicy(ledger).replan(PolicyContext.from_ledger(ledger, steering=["focus on x"]))
    assert decision.action is ReplanAction.continue_ and decision.notes == ""

    (tmp_path / "train.py").write_text("")
    code_only = make_campaign(tmp_path, name="edits", search_space={}, command=["python", "train.py"],
                              code={"editable": ["train.py"]})
    with pytest.raises(PolicyError, match="needs policy.kind: llm"):
        OptunaPolicy(Ledger.open(code_only))

    cmaes = make_campaign(tmp_path, policy={"kind": "optuna", "sampler": "cmaes"}).policy
    if importlib.util.find_spec("cmaes") is None:
        with pytest.raises(PolicyError, match="pip install cmaes"):
            build_sampler(cmaes)
    else:
        assert isinstance(build_sampler(cmaes), optuna.samplers.CmaEsSampler)
