"""Confirmation planning and aggregation on constructed trials: the winner is the best mean, the
separable rule, the reserve that gives confirmation precedence, and budgets too small for top_k."""

from __future__ import annotations

from pathlib import Path

from autoresearch.campaign import (
    Standing, TrialRecord, TrialState, best_trial, confirmations_due, confirmed_early, declared_order, exploration_room,
    separable, standings,
)
from tests.autoresearch.campaign.conftest import make_campaign


def trial(number: int, value: float | None, confirms: int | None = None,
          state: TrialState = TrialState.complete) -> TrialRecord:
    return TrialRecord(number=number, state=state, params={"x": float(number), "y": 1, "kind": "a"}, value=value,
                       confirms=confirms)  # fmt: skip


def test_the_declared_best_is_the_best_mean_not_the_luckiest_reading(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path, objective={"metric": "acc", "mode": "max"})
    trials = [trial(0, 10.0), trial(1, 5.0), trial(2, 1.0, confirms=0), trial(3, 1.0, confirms=0),
              trial(4, 5.0, confirms=1), trial(5, None, confirms=1, state=TrialState.running)]  # fmt: skip
    assert best_trial(trials, campaign.objective).number == 1
    lucky = [*trials, trial(6, 9.0)]  # one reading, not re-run (the budget ran out): it is not compared
    assert best_trial(lucky, campaign.objective).number == 1
    assert [s.trial for s in declared_order(lucky, campaign.objective)] == [1, 0, 6]
    assert [s.trial for s in standings(lucky, campaign.objective)] == [6, 1, 0]  # what confirmation plans by
    [one, zero] = standings(trials, campaign.objective)
    assert (one.trial, one.mean, one.sd, one.n, one.confirmations) == (1, 5.0, 0.0, 2, [4, 5])
    assert (zero.trial, zero.mean, zero.n) == (0, 4.0, 3) and abs(zero.sd - 5.196152422706632) < 1e-12


def test_separable_compares_the_gap_of_the_means_with_twice_the_larger_sd() -> None:
    def s(mean: float, sd: float | None, n: int) -> Standing:
        return Standing(trial=0, mean=mean, sd=sd, n=n, confirmations=[])

    from autoresearch.campaign import Objective

    up, down = Objective(metric="acc", mode="max"), Objective(metric="loss", mode="min")
    assert separable(s(1.0, 0.10, 3), s(0.7, 0.05, 3), up)  # gap 0.3 > 2 x 0.10
    assert not separable(s(1.0, 0.05, 3), s(0.85, 0.10, 3), up)  # gap 0.15 < 2 x 0.10 (the larger sd)
    assert separable(s(1.0, 0.05, 3), s(0.85, None, 1), up)  # one sd known: it is the noise
    assert not separable(s(1.0, None, 1), s(0.5, None, 1), up)  # nothing measured the noise
    # A confirmed winner behind a single lucky reading (declared first: a confirmed mean is never
    # compared with one reading) is not separable from it, however far apart they are.
    assert not separable(s(0.904, 0.02, 3), s(0.975, None, 1), up)
    assert separable(s(0.2, 0.01, 3), s(0.5, 0.02, 3), down) and not separable(s(0.5, 0.01, 3), s(0.2, None, 1), down)


def test_confirmation_takes_precedence_once_the_budget_left_is_the_reserve(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path, budget={"max_trials": 10, "max_parallel": 4}, confirm={"top_k": 2, "seeds": 2},
                             objective={"metric": "loss", "mode": "min"})  # fmt: skip
    assert exploration_room(campaign, []) == 6  # 4 of the 10 kept for the top 2's confirmations
    five = [trial(n, float(n)) for n in range(5)]
    assert exploration_room(campaign, five) == 1 and confirmations_due(campaign, five, 4) == []  # when: end
    six = [*five, trial(5, 0.5)]
    due = confirmations_due(campaign, six, 9)  # trials 0 and 5 lead
    assert exploration_room(campaign, six) == 0 and [p.confirms for p in due] == [0, 0, 5, 5]
    assert due[0].params == six[0].params and "confirmation of trial 0" in due[0].rationale
    done = [*six, trial(6, 0.1, confirms=0), trial(7, 0.2, confirms=0), trial(8, 0.4, confirms=5)]
    assert [p.confirms for p in confirmations_due(campaign, done, 9)] == [5]  # only the missing one
    # once the leaders are confirmed and the last trial is the reserve for a new leader, it ends there
    assert confirmed_early(campaign, done) == 0
    assert confirmed_early(campaign, [*done, trial(9, 0.6, confirms=5)]) == 0  # the budget is spent anyway


def test_a_budget_too_small_for_top_k_confirms_fewer_leaders(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path, budget={"max_trials": 4, "max_parallel": 4},
                             confirm={"top_k": 3, "seeds": 2})  # fmt: skip
    assert exploration_room(campaign, []) == 2  # room for one leader and its 2 confirmations
    two = [trial(0, 2.0), trial(1, 1.0)]
    assert [p.confirms for p in confirmations_due(campaign, two, 4)] == [0, 0]
    tiny = make_campaign(tmp_path, budget={"max_trials": 2, "max_parallel": 2}, confirm={"top_k": 3, "seeds": 2})
    assert exploration_room(tiny, []) == 2 and confirmations_due(tiny, two, 4) == []  # none fits: plain exploration


def test_the_reserve_for_a_new_leader_is_left_unused_when_none_comes(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path, budget={"max_trials": 6, "max_parallel": 1},
                             confirm={"top_k": 1, "seeds": 1, "when": "new_best"})  # fmt: skip
    trials = [trial(0, 3.0), trial(1, 3.1, confirms=0), trial(2, 1.0), trial(3, 2.0), trial(4, 2.5)]
    assert exploration_room(campaign, trials) == 0 and confirmations_due(campaign, trials, 1) == []
    assert confirmed_early(campaign, trials) == 1


def test_the_declared_winner_leaves_suspects_out_of_the_confirmed_means(tmp_path: Path) -> None:
    """One function declares the winner: suspect trials out (unless every one is), then the best
    confirmed mean; a suspect re-run is an origin of its own; the holdout's leaders follow it."""
    from autoresearch.campaign.holdout import leaders
    from autoresearch.campaign.ranking import declared_best, declared_ranking
    from autoresearch.campaign.validity import AttemptProvenance, Provenance

    campaign = make_campaign(tmp_path, objective={"metric": "acc", "mode": "max", "holdout": {"command": ["true"], "metric": "h", "top_k": 2}},
                             confirm={"top_k": 2, "seeds": 2})  # fmt: skip
    bad = Provenance(attempts=[AttemptProvenance(attempt=1, node="n2", started_at=0.0, degraded=["thermal: throttled"])])

    def suspect(t: TrialRecord) -> TrialRecord:
        return t.model_copy(update={"provenance": bad})

    # origin 0: 9 (suspect), 5, 5; origin 1: 6, 6, 6; trial 6 re-runs suspect trial 0 elsewhere
    trials = [trial(0, 9.0), trial(1, 6.0), suspect(trial(2, 9.0, confirms=0)), trial(3, 5.0, confirms=0),
              trial(4, 6.0, confirms=1), trial(5, 6.0, confirms=1),
              trial(6, 5.5).model_copy(update={"suspect_rerun_of": 0})]  # fmt: skip
    assert declared_best(trials, campaign).number == 0  # (9 + 5) / 2 = 7 over its trusted runs
    assert [(s.trial, s.n) for s in declared_ranking(trials, campaign)[:2]] == [(0, 2), (1, 3)]
    trials[0] = suspect(trials[0])  # the origin itself is suspect: its group is not declared
    assert [s.trial for s in declared_ranking(trials, campaign)] == [1, 6]
    assert declared_best(trials, campaign).number == 1 and [t.number for t in leaders(campaign, trials)] == [1, 6]
    everything = [suspect(t) for t in trials]  # every result suspect: they are ranked all the same
    assert declared_best(everything, campaign).number == 0


def test_the_leaders_confirmed_are_the_best_estimates_not_the_luckiest_readings(tmp_path: Path) -> None:
    """A noisy search's best reading is mostly luck: at x = -2 one reads 3.0 where the truth is
    -4.5 and its neighbours read -6.4 and -4.3. The Gaussian process over x (its noise level fitted
    from the readings) shrinks it towards them; the origin confirmed is the best estimate, x = 1
    (the true maximum), not the lucky reading. Without an estimate (a code patch, too few
    origins) the leaders are the best means, as before."""
    campaign = make_campaign(tmp_path, command=["python", "job.py", "{x}"], objective={"metric": "acc", "mode": "max"},
                             search_space={"x": {"type": "float", "low": -5.0, "high": 5.0}},
                             budget={"max_trials": 19, "max_parallel": 1}, confirm={"top_k": 1, "seeds": 2})  # fmt: skip
    noise = [0.4, -0.9, 0.6, -0.3, 1.1, -1.2, 0.2, 0.8, -0.5, 0.9, -0.7, 0.3, -1.0, 0.5, -0.2, 0.7, -0.6]
    xs = [-4.0 + 0.5 * i for i in range(17)]
    values = [-0.5 * (x - 1.0) ** 2 + e for x, e in zip(xs, noise)]
    values[4] = 3.0  # x = -2: the luckiest reading, 7.5 above its truth
    trials = [TrialRecord(number=i, state=TrialState.complete, params={"x": x}, value=v)
              for i, (x, v) in enumerate(zip(xs, values))]  # fmt: skip
    assert standings(trials, campaign.objective)[0].trial == 4  # the best single reading
    due = confirmations_due(campaign, trials, 4)
    assert [p.confirms for p in due] == [10, 10] and due[0].params == {"x": 1.0}
    assert best_trial([*trials, trial(17, -0.1, confirms=10)], campaign.objective).number == 10
    patched = [t.model_copy(update={"patch": "--- a/f\n+++ b/f\n"}) for t in trials]  # the parameters are not the config
    assert [p.confirms for p in confirmations_due(campaign, patched, 4)] == [4, 4]
    assert [p.confirms for p in confirmations_due(campaign.model_copy(update={"budget": campaign.budget.model_copy(
        update={"max_trials": 11})}), trials[:9], 4)] == [4, 4]  # 9 origins: too few to fit a noise level


def test_the_estimate_reads_floats_ints_and_categoricals_and_declines_a_trial_outside_the_space(tmp_path: Path) -> None:
    from autoresearch.campaign.smoothing import estimates
    from autoresearch.testing import score

    campaign = make_campaign(tmp_path, confirm={"top_k": 2, "seeds": 2})  # x float, y int, kind categorical; max
    points = [{"x": -4.0 + 0.7 * i, "y": i % 11, "kind": "abc"[i % 3]} for i in range(12)]
    trials = [TrialRecord(number=i, state=TrialState.complete, params=p, value=score(p)) for i, p in enumerate(points)]
    estimate = estimates(trials, campaign)
    assert estimate is not None and sorted(estimate) == list(range(12))
    assert max(estimate, key=lambda n: estimate[n]) == max(range(12), key=lambda n: score(points[n]))  # no noise: the best reading
    outside = [*trials[:11], trials[11].model_copy(update={"params": {"x": 1.0, "y": 3, "kind": "d"}})]
    assert estimates(outside, campaign) is None and estimates(trials[:9], campaign) is None
