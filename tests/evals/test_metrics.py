"""The metric functions on small fixed inputs."""

from __future__ import annotations

import math

import pytest

from evals import (
    best_so_far,
    paired_wilcoxon,
    regret_at,
    regret_at_time,
    regret_within_steps,
    spread,
    time_curve,
    time_to_target,
    utilization,
)


def test_best_so_far_skips_missing_and_nan_values_and_clips_at_zero():
    curve = best_so_far([None, 5.0, float("nan"), 3.0, 4.0, 0.5], minimum=1.0)
    assert curve == [math.inf, 4.0, 4.0, 2.0, 2.0, 0.0]


def test_regret_at_counts_trials_from_one_and_holds_the_last_value():
    curve = [4.0, 2.0, 1.0]
    assert regret_at(curve, 1) == 4.0
    assert regret_at(curve, 3) == 1.0
    assert regret_at(curve, 100) == 1.0
    assert regret_at([], 5) == math.inf
    with pytest.raises(ValueError, match="n >= 1"):
        regret_at(curve, 0)


def test_spread_gives_median_and_interpolated_quartiles():
    s = spread([4.0, 1.0, 3.0, 2.0, 5.0])
    assert (s.median, s.q25, s.q75, s.n) == (3.0, 2.0, 4.0, 5)
    even = spread([1.0, 2.0, 3.0, 4.0])
    assert (even.median, even.q25, even.q75) == (2.5, 1.75, 3.25)
    assert spread([1.0, math.inf, math.inf]).median == math.inf


def test_paired_wilcoxon_on_a_clear_win_an_even_split_and_a_tie():
    b = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    better = [x - d for x, d in zip(b, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])]
    test = paired_wilcoxon(better, b)
    assert (test.n, test.wins, test.losses) == (6, 6, 0)
    assert test.p_value == pytest.approx(2 / 2**6)  # exact: every sign negative, two-sided
    assert test.median_diff == pytest.approx(-0.35)

    mixed = paired_wilcoxon([1.0, 3.0, 2.0, 4.0], [2.0, 2.0, 3.0, 3.0])
    assert (mixed.wins, mixed.losses) == (2, 2) and mixed.p_value == pytest.approx(1.0)

    same = paired_wilcoxon([1.0, 2.0], [1.0, 2.0])
    assert (same.p_value, same.wins, same.losses, same.median_diff) == (1.0, 0, 0, 0.0)

    # A job log's 10 significant digits against the in-process value: ties, not 2 wins and 1 loss.
    printed = paired_wilcoxon([0.4278880392, -3.03455974, 1.5], [0.4278880392302913, -3.034559739823, 1.5 + 3e-11])
    assert (printed.p_value, printed.wins, printed.losses, printed.median_diff) == (1.0, 0, 0, 0.0)
    near = paired_wilcoxon([1.0, 2.0, 3.0 - 1e-11, 4.0 - 0.5], [1.5, 2.5, 3.0, 4.0])
    assert (near.wins, near.losses) == (3, 0)  # the tie is dropped, real differences count


def test_paired_wilcoxon_refuses_unpaired_or_infinite_values():
    with pytest.raises(ValueError, match="equal lengths"):
        paired_wilcoxon([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        paired_wilcoxon([math.inf, 1.0], [1.0, 2.0])


def test_time_curve_orders_by_end_and_time_to_target_finds_the_first_crossing():
    ends = [3.0, 1.0, None, 2.0]
    values = [0.5, 4.0, 0.0, None]  # trial 2 never ended: its value does not count
    curve = time_curve(ends, values, minimum=0.0)
    assert curve == [(1.0, 4.0), (2.0, 4.0), (3.0, 0.5)]
    assert time_to_target(curve, 1.0) == 3.0
    assert time_to_target(curve, 4.0) == 1.0
    assert time_to_target(curve, 0.1) is None
    assert regret_at_time(curve, 0.5) == math.inf
    assert regret_at_time(curve, 2.5) == 4.0


def test_regret_within_steps_counts_steps_in_order_of_end():
    steps = [10, 3, 10, 10]
    values = [5.0, None, 1.0, 0.2]  # trial 1 was pruned after 3 steps
    ends = [1.0, 0.5, 2.0, 3.0]
    assert regret_within_steps(steps, values, ends, 0.0, budget=13) == 5.0
    assert regret_within_steps(steps, values, ends, 0.0, budget=23) == 1.0
    assert regret_within_steps(steps, values, ends, 0.0, budget=2) == math.inf
    assert regret_within_steps(steps, values, ends, 0.0, budget=100) == pytest.approx(0.2)


def test_utilization_is_work_over_slot_time():
    assert utilization(30.0, 4, 10.0) == 0.75
    with pytest.raises(ValueError, match="slots >= 1"):
        utilization(1.0, 0, 10.0)
