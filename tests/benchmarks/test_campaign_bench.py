"""benchmarks/campaign_bench.py: the overhead arithmetic on known spans, and the real benchmark
run small (one seed, a few short trials) through every arm, read back from its `--json`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.campaign_timing import Span, ideal_makespan, overhead_ms, paired_test, refill_gaps

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks" / "campaign_bench.py"


def test_the_ideal_makespan_list_schedules_the_measured_durations_in_start_order():
    # durations 3, 1, 1, 1 on 2 slots: slot A runs 3; slot B runs 1, 1, 1 -> makespan 3
    spans = [Span(0, 3), Span(0.1, 1.1), Span(1.3, 2.3), Span(2.5, 3.5)]
    assert ideal_makespan(spans, 2) == pytest.approx(3.0)
    # the run took 4 s of wall clock: 1 s beyond the ideal, over 4 trials
    assert overhead_ms(4.0, spans, 2) == pytest.approx(250.0)


def test_a_refill_gap_runs_from_a_job_end_to_the_start_that_takes_its_slot():
    # 2 slots; job 3 starts 0.2 s after job 1 ends (submitted after 0.15 s), job 4 0.4 s after job 2
    spans = [Span(0.0, 1.0, 0.0), Span(0.0, 2.0, 0.0), Span(1.2, 3.0, 1.15), Span(2.4, 4.0, 2.3)]
    gaps = refill_gaps(spans, 2)
    assert gaps.gap_ms == pytest.approx(300.0)  # median of 200 and 400
    assert gaps.runner_ms == pytest.approx(225.0)  # median of 150 and 300
    assert gaps.daemon_ms == pytest.approx(75.0)  # median of 50 and 100
    assert refill_gaps([Span(s.start, s.end) for s in spans], 2).runner_ms is None
    with pytest.raises(ValueError, match="never refill a slot"):
        refill_gaps(spans[:2], 2)


def test_the_paired_test_counts_lower_regret_as_a_win_and_near_equal_as_a_tie():
    result = paired_test([0.1, 0.2, 0.3, 0.5, 0.5], [0.2, 0.3, 0.4, 0.4, 0.5 + 1e-12])
    assert (result["wins"], result["losses"], result["ties"]) == (3, 1, 1)
    assert result["seeds"] == 5 and 0 < result["p_value"] <= 1


def test_an_unknown_peer_is_refused_with_the_choices():
    bad = subprocess.run([sys.executable, str(BENCH), "--peers", "optuna,hyperopt"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "unknown arm(s) ['hyperopt']; choose from optuna, ray-tune" in bad.stderr


@pytest.mark.slow
@pytest.mark.timeout(600)  # a minute on an idle machine; Ray's start-up alone took minutes at load 25
def test_every_arm_runs_all_its_trials_and_the_json_has_one_row_per_arm(tmp_path):
    trials = 5
    out = subprocess.run(
        [sys.executable, str(BENCH), "--trials", str(trials), "--seeds", "1", "--parallel", "2",
         "--step-seconds", "0.005", "--peers", "optuna,ray-tune", "--warmup", "1", "--json"],
        capture_output=True, text=True, timeout=570,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout)  # stdout holds the JSON document and nothing else
    assert [row["arm"] for row in doc["rows"]] == ["autoresearch", "optuna", "ray-tune"]
    for row in doc["rows"]:
        assert row["completed"] == trials, row
        assert row["wall_s"] > 0 and row["regret"] >= 0
        assert isinstance(row["per_trial_overhead_ms"], float)
    assert [r["arm"] for r in doc["per_seed"]] == ["autoresearch", "optuna", "ray-tune"]
    assert all(r["jobs"] == trials and r["seed"] == 0 for r in doc["per_seed"])
    ours = doc["rows"][0]
    assert ours["ratio_to_ours"] == 1.0 and ours["refill_runner_ms"] is not None
    assert [t["peer"] for t in doc["tests"]] == ["optuna", "ray-tune"]
    assert doc["settings"]["ray"] == "2.60.0" and doc["settings"]["trials"] == trials
    assert doc["settings"]["warmup"] == 1  # one unmeasured trial per arm first: not among the rows
