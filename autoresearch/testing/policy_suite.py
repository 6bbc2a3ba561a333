"""The conformance suite of the `Policy` protocol (and its `Pruning` ability): what every policy
must do, whatever proposes the trials.

Subclass `PolicySuite` in a test module and give it a `harness` fixture (a `PolicyHarness`),
parametrized over the implementations::

    class TestPolicy(PolicySuite):
        @pytest.fixture(params=["optuna"])
        def harness(self, tmp_path, monkeypatch) -> PolicyHarness:
            monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
            return PolicyHarness(build=OptunaPolicy, open=Ledger.open, base_dir=tmp_path)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autoresearch.campaign import (
    Campaign,
    Proposal,
    TrialLedger,
    TrialState,
    check_params,
    free_slots,
)
from autoresearch.policy import Policy, PolicyContext, PruneDecision, Pruning, ReplanAction, ReplanDecision
from autoresearch.testing._checks import score, suite_campaign


@dataclass(frozen=True)
class PolicyHarness:
    """How the suite builds one kind of policy."""

    build: Callable[[TrialLedger], Policy]
    """The policy of the campaign whose ledger this is."""
    open: Callable[[Campaign], TrialLedger]
    """A campaign's writable ledger (the runner's)."""
    base_dir: Path
    """A folder the suite's campaigns run in."""
    policy: dict[str, Any] = field(default_factory=dict)
    """Policy settings of the suite's campaigns (kind, provider ...), over seed 7 and the median pruner."""
    deterministic: bool = True
    """Whether the policy promises the same proposals for the same campaign and seed."""

    def ledger(self, name: str = "suite", **policy: Any) -> TrialLedger:
        settings = {"seed": 7, "pruner": "median", **self.policy, **policy}
        return self.open(suite_campaign(self.base_dir, name, policy=settings))


def _round(policy: Policy, ledger: TrialLedger, n: int) -> list[Proposal]:
    """The runner's cycle: propose `n`, admit, launch and complete each with `score`."""
    admitted = [ledger.admit(p) for p in policy.propose(PolicyContext.from_ledger(ledger), n)]
    for p in admitted:
        assert p.trial_number is not None
        ledger.mark_launched(p.trial_number, f"job-{p.trial_number}")
        ledger.complete(p.trial_number, score(p.params))
    return admitted


def _running(ledger: TrialLedger, params: dict[str, Any]) -> int:
    number = ledger.admit(Proposal(params=params)).trial_number
    assert number is not None
    ledger.mark_launched(number, f"job-{number}")
    return number


class PolicySuite:
    """The rules of the `Policy` protocol (and `Pruning`), one test each, on the `harness` fixture's policies."""

    def test_proposals_are_inside_the_search_space(self, harness: PolicyHarness) -> None:
        ledger = harness.ledger()
        policy = harness.build(ledger)
        space = ledger.campaign.search_space
        for _ in range(3):
            proposals = policy.propose(PolicyContext.from_ledger(ledger), 3)
            assert proposals, "a policy with free slots and a search space proposed nothing"
            for p in proposals:
                assert set(p.params) == set(space), f"proposal {p.params} does not set every parameter"
                assert check_params(space, p.params) == p.params, f"proposal {p.params} is outside the space"
            for p in proposals:
                admitted = ledger.admit(p)
                assert admitted.params == p.params and ledger.trial(admitted.trial_number or 0).params == p.params
            for t in ledger.unlaunched():
                ledger.mark_launched(t.number, f"job-{t.number}")
                ledger.complete(t.number, score(t.params))

    def test_respects_free_slots(self, harness: PolicyHarness) -> None:
        ledger = harness.ledger()
        policy = harness.build(ledger)
        assert policy.propose(PolicyContext.from_ledger(ledger), 0) == []
        asked = [1, 2]
        for n in asked:
            proposals = policy.propose(PolicyContext.from_ledger(ledger), n)
            assert len(proposals) <= n, f"asked for {n} trials, got {len(proposals)}"
            for p in proposals:
                ledger.mark_launched(ledger.admit(p).trial_number or 0, "job")
        for _ in range(4):  # the runner's way: as many as there are free slots, until none is left
            slots = free_slots(ledger.campaign, ledger.trials())
            proposals = policy.propose(PolicyContext.from_ledger(ledger), slots)
            assert len(proposals) <= slots, f"{slots} free slots, got {len(proposals)} proposals"
            for p in proposals:
                ledger.mark_launched(ledger.admit(p).trial_number or 0, "job")
        assert 0 < len(ledger.running()) <= ledger.campaign.budget.max_parallel
        assert policy.propose(PolicyContext.from_ledger(ledger), 0) == []

    def test_never_ends_a_trial(self, harness: PolicyHarness) -> None:
        """Only the ledger ends trials: proposing and replanning leave every trial as it was."""
        ledger = harness.ledger()
        policy = harness.build(ledger)
        _round(policy, ledger, 2)
        for p in policy.propose(PolicyContext.from_ledger(ledger), 2):
            ledger.admit(p)
        running = ledger.unlaunched()[0].number
        ledger.mark_launched(running, "job-r")
        ledger.report(running, 0, -50.0)
        before = ledger.trials()
        policy.replan(PolicyContext.from_ledger(ledger, steering=["focus on x"]))
        assert ledger.trials() == before
        assert [t.state for t in ledger.trials()].count(TrialState.complete) == 2

    def test_replan_goes_on_within_the_budget(self, harness: PolicyHarness) -> None:
        """A replan decides; budget and target are the runner's to check (a reached target is no stop)."""
        ledger = harness.ledger()
        policy = harness.build(ledger)
        first = policy.replan(PolicyContext.from_ledger(ledger))
        assert isinstance(first, ReplanDecision) and first.action is ReplanAction.continue_
        _round(policy, ledger, 2)
        target = ledger.campaign.objective.model_copy(update={"target": -1000.0})  # reached by every trial
        ledger.set_campaign(ledger.campaign.model_copy(update={"objective": target}))
        decision = policy.replan(PolicyContext.from_ledger(ledger))
        assert decision.action is ReplanAction.continue_, decision

    def test_deterministic_with_a_seed(self, harness: PolicyHarness) -> None:
        if not harness.deterministic:
            return
        runs = []
        for name in ("seeded-a", "seeded-b"):
            ledger = harness.ledger(name)
            policy = harness.build(ledger)
            runs.append([p.params for _ in range(3) for p in _round(policy, ledger, 2)])
        assert runs[0] == runs[1], "the same campaign and seed gave other proposals"

    def test_prunes_a_loser_below_the_median(self, harness: PolicyHarness) -> None:
        ledger = harness.ledger(pruner="median")
        policy = harness.build(ledger)
        assert isinstance(policy, Pruning), f"{type(policy).__name__} does not judge running trials"
        params = {"x": 0.0, "y": 1, "kind": "a"}
        early = _running(ledger, params)
        ledger.report(early, 0, 0.0)
        assert policy.judge(ledger.trial(early)) is PruneDecision.keep  # no complete trial yet
        for k in range(5):  # curves 1s + k: the median at step s is s + 2
            n = _running(ledger, {**params, "y": k + 2})
            for step in range(4):
                ledger.report(n, step, step + k)
            ledger.complete(n, 3.0 + k)
        fresh = _running(ledger, params)
        assert policy.judge(ledger.trial(fresh)) is PruneDecision.keep  # nothing reported yet
        ledger.report(fresh, 0, 2.5)
        ledger.report(fresh, 1, 3.5)
        assert policy.judge(ledger.trial(fresh)) is PruneDecision.keep  # above the median (3) at step 1
        loser = _running(ledger, params)
        ledger.report(loser, 0, 1.0)
        ledger.report(loser, 1, 2.0)
        assert policy.judge(ledger.trial(loser)) is PruneDecision.prune  # below the median at step 1
        ledger.prune(loser)
        assert policy.judge(ledger.trial(loser)) is PruneDecision.keep  # only running trials are judged

    def test_no_pruner_never_prunes(self, harness: PolicyHarness) -> None:
        ledger = harness.ledger(pruner="none")
        policy = harness.build(ledger)
        assert isinstance(policy, Pruning)
        params = {"x": 0.0, "y": 1, "kind": "a"}
        for k in range(5):
            n = _running(ledger, {**params, "y": k})
            ledger.report(n, 0, 10.0)
            ledger.complete(n, 10.0)
        loser = _running(ledger, params)
        ledger.report(loser, 0, -100.0)
        assert policy.judge(ledger.trial(loser)) is PruneDecision.keep
