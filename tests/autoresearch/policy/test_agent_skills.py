"""The policy's read skills on a real ledger: paging, best first, details, Optuna without a trial."""

from __future__ import annotations

from pathlib import Path

from autoresearch.campaign import Ledger, Proposal, TrialFailure
from autoresearch.policy import AgentContext, agent_registry
from skills import BUILTIN_SKILLS, SkillContext, SkillError

from tests.autoresearch.conftest import branin


def setup(home: Path) -> tuple[Ledger, AgentContext]:
    ledger = Ledger.open(branin(), home)
    for i, (x1, value) in enumerate([(1.0, 5.0), (2.0, 1.0), (3.0, 3.0), (4.0, None)]):
        n = ledger.admit(Proposal(params={"x1": x1, "x2": 1.0}, hypothesis=f"idea {i}")).trial_number
        ledger.mark_launched(n, f"job-{n}")
        for step in range(30):
            ledger.report(n, step, 10.0 - step * 0.1 - (0.5 if step == 7 else 0.0))
        if value is None:
            ledger.fail(n, TrialFailure.user, log_excerpt="Traceback ...\nValueError: boom")
        else:
            ledger.complete(n, value)
    base = SkillContext.create(home=home)
    return ledger, AgentContext(home=base.home, tracking=base.tracking, ledger=ledger)


def test_list_best_and_details(home: Path) -> None:
    ledger, ctx = setup(home)
    skills = agent_registry()
    assert {fn.__name__ for fn in BUILTIN_SKILLS} < set(skills.names())

    page = skills.call("list_trials", {"offset": 1, "limit": 2}, ctx)
    assert page.total == 4 and [t.number for t in page.trials] == [1, 2] and page.next_offset == 3
    failed = skills.call("list_trials", {"state": "failed"}, ctx)
    assert [(t.number, t.failure_class) for t in failed.trials] == [(3, TrialFailure.user)] and failed.next_offset is None

    best = skills.call("best_trials", {"k": 2}, ctx)
    assert [(t.number, t.value) for t in best.trials] == [(1, 1.0), (2, 3.0)]  # mode min

    details = skills.call("trial_details", {"number": 3, "max_points": 5}, ctx)
    assert details.curve_points == 30 and len(details.curve) == 5
    steps = [step for step, _ in details.curve]
    assert steps[0] == 0 and steps[-1] == 29 and 7 in steps  # first, last and best kept
    assert details.log_excerpt.endswith("ValueError: boom") and details.trial.hypothesis == "idea 3"
    missing = skills.call("trial_details", {"number": 9}, ctx)
    assert isinstance(missing, SkillError) and missing.error.value == "not_found" and "0..3" in missing.message


def test_suggest_with_optuna_costs_no_trial(home: Path) -> None:
    ledger, ctx = setup(home)
    before = len(ledger.trials())
    out = agent_registry().call("suggest_with_optuna", {"n": 3}, ctx)
    assert out.based_on == 3 and len(out.suggestions) == 3
    for params in out.suggestions:
        assert set(params) == {"x1", "x2"} and -5 <= params["x1"] <= 10 and 0 <= params["x2"] <= 15
    assert len(ledger.trials()) == before


def test_agent_skills_need_the_policy_context(home: Path) -> None:
    out = agent_registry().call("list_trials", {}, SkillContext.create(home=home))
    assert isinstance(out, SkillError) and "only inside a campaign's LLM policy" in out.message


def test_read_trial_logs_before_launch(home: Path) -> None:
    ledger = Ledger.open(branin(), home)
    ledger.admit(Proposal(params={"x1": 1.0, "x2": 1.0}))
    base = SkillContext.create(home=home)
    ctx = AgentContext(home=base.home, tracking=base.tracking, ledger=ledger)
    out = agent_registry().call("read_trial_logs", {"number": 0}, ctx)
    assert isinstance(out, SkillError) and out.message == "trial 0 has no job yet (it is proposed)"


def test_compare_trials_shows_params_diff_values_curves_and_patch_diff(home: Path) -> None:
    ledger = Ledger.open(branin(), home)
    patches = ["--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr = 0.01\n",
               "--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr = 0.02\n"]  # fmt: skip
    for i, (x1, patch) in enumerate([(1.0, patches[0]), (2.0, patches[1])]):
        n = ledger.admit(Proposal(params={"x1": x1, "x2": 1.0}, patch=patch, hypothesis=f"idea {i}")).trial_number
        ledger.mark_launched(n, f"job-{n}")
        for step in range(10):  # trial 0 still falls at the end; trial 1 bottoms out at step 4 and rises
            ledger.report(n, step, 10.0 - step if i == 0 else 5.0 + abs(step - 4))
        ledger.complete(n, 1.0) if i == 0 else ledger.prune(n)
    base = SkillContext.create(home=home)
    ctx = AgentContext(home=base.home, tracking=base.tracking, ledger=ledger)

    out = agent_registry().call("compare_trials", {"numbers": [0, 1]}, ctx).comparison

    assert [(p.name, p.values) for p in out.differing_params] == [("x1", {0: 1.0, 1: 2.0})]
    assert out.same_params == {"x2": 1.0}
    first, second = out.trials
    assert (first.final_value, first.best_value, second.final_value, second.best_value) == (1.0, 1.0, 10.0, 5.0)
    assert first.curve.first == (0, 10.0) and first.curve.last == (9, 1.0) and first.curve.improving is True
    assert second.curve.best == (4, 5.0) and second.curve.slope == 1.0 and second.curve.improving is False
    assert "-+lr = 0.01\n" in out.patch_diffs[0].diff and "++lr = 0.02\n" in out.patch_diffs[0].diff
    missing = agent_registry().call("compare_trials", {"numbers": [0, 7]}, ctx)
    assert isinstance(missing, SkillError) and missing.error.value == "not_found" and "no trial 7" in missing.message
    alone = agent_registry().call("compare_trials", {"numbers": [1, 1]}, ctx)
    assert isinstance(alone, SkillError) and "two different trials" in alone.message
