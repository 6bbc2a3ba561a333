"""benchmarks/validity_bench.py: the known truth it scores against, its arithmetic on known rows,
and the real benchmark run small (`--quick`) through every part, read back from its `--json`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.validity_bench import BRANIN_RANGE, summarise, table, true_regret

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks" / "validity_bench.py"


def test_true_regret_is_zero_at_a_known_minimum_and_one_at_the_worst_corner():
    assert true_regret({"x1": 3.14159265, "x2": 2.275}) == pytest.approx(0.0, abs=1e-7)
    assert true_regret({"x1": -5.0, "x2": 0.0}) == pytest.approx(1.0)
    assert BRANIN_RANGE == pytest.approx(307.731, abs=1e-3)


def test_the_summary_compares_each_arm_on_the_same_seeds():
    rows = [{"sigma": 0.025, "seed": s, "arm": arm, "true_regret": r, "trials": t, "confirmations": c,
             "separable": arm == "on" and s == 0}
            for s, (off, on) in enumerate([(0.4, 0.1), (0.2, 0.3), (0.3, 0.2)])
            for arm, r, t, c in (("off", off, 60, 0), ("on", on, 69, 9))]  # fmt: skip
    noise = summarise({"noise": rows})["noise 0.025"]
    assert (noise["regret_off"], noise["regret_on"]) == (0.3, 0.2) and noise["regret_ratio"] == pytest.approx(2 / 3)
    assert noise["extra_trials_pct"] == pytest.approx(15.0) and (noise["wins_on"], noise["losses_on"]) == (2, 1)
    assert noise["separable_on"] == 1 and noise["seeds"] == 3


def test_an_unknown_part_is_refused_with_the_choices():
    bad = subprocess.run([sys.executable, str(BENCH), "--parts", "noise,speed"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "unknown part(s) ['speed']; choose from noise, degraded, holdout" in bad.stderr


@pytest.mark.slow
@pytest.mark.timeout(1500)  # a few minutes on an idle machine: 12 campaigns, each a daemon's subprocesses
def test_the_quick_run_confirms_flags_the_slow_node_and_shows_the_holdout_gap(tmp_path):
    out = subprocess.run([sys.executable, str(BENCH), "--quick", "--json", "--figures", str(tmp_path)],
                         capture_output=True, text=True, timeout=1450)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout)  # stdout holds the JSON document and nothing else
    s = doc["settings"]
    assert s["quick"] and s["parts"] == ["noise", "degraded", "holdout"]

    noise = doc["noise"]
    assert len(noise) == 2 * s["seeds"] * 2  # levels x seeds x arms
    for row in noise:
        assert row["true_regret"] >= 0
        if row["arm"] == "on":  # the leaders were re-run, and the declared winner is a mean over runs
            assert row["confirmations"] > 0 and row["trials"] > s["trials"] and row["n"] >= 2, row
        else:
            assert row["confirmations"] == 0 and row["trials"] == s["trials"] and row["n"] == 1, row
    assert set(doc["summary"]) >= {"noise 0.0003", "noise 0.025", "degraded", "holdout"}

    degraded = {row["arm"]: row for row in doc["degraded"]}
    assert set(degraded) == {"off", "on"}
    on = degraded["on"]
    assert on["slow_trials"] > 0 and on["slow_flagged"] > 0, on  # local-3's slow results were seen as suspect
    assert not on["biased"], on  # and none is declared the winner

    holdout = {row["task"]: row for row in doc["holdout"]}
    assert holdout["overfit"]["evaluated"] == 5 and holdout["overfit"]["gap"] is not None
    assert "Spearman rank correlation of validation and holdout" in holdout["overfit"]["report_section"]

    text = table(doc)
    assert "true regret off" in text and "biased winners" in text and "overfitting gap" in text
    assert sorted(Path(p).name for p in doc["figures"]) == ["validity-holdout.png", "validity-noise-regret.png"]
