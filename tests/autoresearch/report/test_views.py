"""The report's views read well: PNGs for campaigns of 1, 2 and 200 trials with pruned and failed
trials, a log axis when values span decades, whole-number trial ticks, pruned trials shown, and the
interactive page left out with a clear reason when plotly is missing."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from PIL import Image
from click.testing import CliRunner

from autoresearch.campaign import Ledger, Proposal, TrialFailure
import autoresearch.cli.campaign_cmds  # noqa: F401 - registers `report`
from autoresearch.cli import app
from autoresearch.report import write_report
from autoresearch.report.plots import draw_best_by_trial, draw_learning_curves
from autoresearch.report.scale import integer_step, value_scale
from tests.autoresearch.campaign.conftest import make_campaign

SPACE = {"x": {"type": "float", "low": -5.0, "high": 5.0}, "y": {"type": "int", "low": 0, "high": 10},
         "kind": {"type": "categorical", "choices": ["a", "b", "c"]}}  # fmt: skip


def loss_ledger(tmp_path: Path, values: list[float | None], *, steps: int = 3) -> Ledger:
    """A minimizing campaign whose trial i ends with values[i]; None: failed (user) for even i,
    pruned after its curve for odd i. Each trial reports `steps` intermediate values falling to its value."""
    ledger = Ledger.open(make_campaign(tmp_path, objective={"metric": "loss", "mode": "min"},
                                       budget={"max_trials": max(len(values), 1), "max_parallel": 1}))  # fmt: skip
    rng = random.Random(1)
    for i, value in enumerate(values):
        params = {"x": rng.uniform(-5, 5), "y": rng.randint(0, 10), "kind": rng.choice("abc")}
        number = ledger.admit(Proposal(params=params)).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        end = value if value is not None else 5.0 + i
        for step in range(steps):
            ledger.report(number, step, end * (steps - step))
        if value is not None:
            ledger.complete(number, value)
        elif i % 2 == 0:
            ledger.fail(number, TrialFailure.user, log_excerpt="Traceback (most recent call last):\nValueError: x")
        else:
            ledger.prune(number)
    return ledger


def _is_png(path: Path) -> bool:
    with Image.open(path) as image:
        image.verify()
        return image.format == "PNG" and image.size[0] > 100 and image.size[1] > 100


def _x_tick_labels(fig: Figure) -> list[str]:
    fig.canvas.draw()
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    return [label.get_text() for label in ax.get_xticklabels() if low <= label.get_position()[0] <= high]


@pytest.mark.parametrize("values", [[0.5], [214.0, 0.4]], ids=["1-trial", "2-trials"])
def test_small_campaigns_get_whole_number_trial_ticks(home: Path, tmp_path: Path, values: list[float]) -> None:
    ledger = loss_ledger(tmp_path, values)

    path = write_report(ledger, tmp_path / "report")

    for name in ("best_by_trial.png", "best_by_time.png", "learning_curves.png"):
        assert _is_png(path.parent / name), name
    for fig in (draw_best_by_trial(ledger.trials(), ledger.campaign.objective),
                draw_learning_curves(ledger.trials(), ledger.campaign.objective)):  # fmt: skip
        labels = _x_tick_labels(fig)
        assert labels and all(label.replace("\N{MINUS SIGN}", "-").lstrip("-").isdigit() for label in labels), labels


def test_values_spanning_decades_get_a_log_axis(home: Path, tmp_path: Path) -> None:
    ledger = loss_ledger(tmp_path, [214.0, 0.4])

    fig = draw_best_by_trial(ledger.trials(), ledger.campaign.objective)

    assert fig.axes[0].get_yscale() == "log"
    assert "log scale: values span 2.7 decades" in fig.axes[0].get_title()


def test_a_few_outliers_below_zero_clip_the_axis_and_say_so() -> None:
    scale = value_scale([-300.0, 0.40, 0.41, 0.42, 0.43, 0.45, 0.5], keep=[0.40])
    assert not scale.log and scale.limits is not None
    assert -300 < scale.limits[0] <= 0.40 and scale.note == "clipped: 1 outlying value(s) off the chart"
    assert value_scale([0.1 * i for i in range(30)]).limits is None  # an even spread stays linear
    assert [integer_step(0, n) for n in (1, 9, 25, 199)] == [1, 1, 5, 20]


@pytest.mark.slow
def test_two_hundred_trials_with_pruned_and_failed(home: Path, tmp_path: Path) -> None:
    values: list[float | None] = [None if i % 17 in (3, 4) else 0.3 + ((i * 37) % 100) / 100 for i in range(200)]
    ledger = loss_ledger(tmp_path, values, steps=2)

    path = write_report(ledger, tmp_path / "report")

    text = path.read_text()
    for name in ("best_by_trial.png", "best_by_time.png", "learning_curves.png", "importances.png", "failures.png"):
        assert _is_png(path.parent / name), name
    pruned = sum(v is None and i % 2 for i, v in enumerate(values))
    failed = sum(v is None and not i % 2 for i, v in enumerate(values))
    assert f"{pruned} pruned trial(s) are drawn as x at their last value before the cut" in text
    assert f"Not drawn (no value): {failed} failed." in text
    fig = draw_best_by_trial(ledger.trials(), ledger.campaign.objective)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "pruned (last value before the cut)" in legend
    assert all(math.isclose(float(x), round(float(x))) for x in _x_tick_labels(fig))


def test_without_plotly_the_markdown_says_why_there_is_no_html(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = loss_ledger(tmp_path, [1.0, 0.5])
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "report.html").write_text("an earlier run's page")
    monkeypatch.setitem(sys.modules, "plotly", None)  # what `import plotly` meets when it is not installed
    path = write_report(ledger, tmp_path / "report")

    assert "No interactive report (report.html): plotly is not installed in this environment; " \
           "`pip install plotly==7.1.0` and run the report again." in path.read_text()  # fmt: skip
    assert not (path.parent / "report.html").exists()
    assert _is_png(path.parent / "best_by_trial.png")


def test_the_report_command_names_both_files(home: Path, tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="report.html needs plotly (a dependency in pyproject.toml): pip install -c constraints.txt -e .")
    loss_ledger(tmp_path, [1.0, 0.5])

    shown = CliRunner().invoke(app, ["report", "toy", "--out", str(tmp_path / "out")])

    assert shown.exit_code == 0, shown.output
    assert f"report written to {tmp_path / 'out' / 'report.md'}" in shown.output
    assert f"interactive views: {tmp_path / 'out' / 'report.html'}" in shown.output


def test_a_view_optuna_cannot_draw_says_why_and_the_page_keeps_the_others(home: Path, tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="report.html needs plotly (a dependency in pyproject.toml): pip install -c constraints.txt -e .")
    ledger = loss_ledger(tmp_path, [1e308, -1e308, 0.5, 1.7976931348623157e308, -5e307, 3.0], steps=1)

    page = (write_report(ledger, tmp_path / "report").parent / "report.html").read_text()

    assert "Optuna could not draw this view (ValueError: cannot convert float NaN to integer)." in page
    assert page.count('class="plotly-graph-div"') >= 3  # ours (best so far, twice) and those Optuna could draw


def test_the_top_trials_show_suspect_results_and_the_holdout_the_campaign_recorded(home: Path, tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="report.html needs plotly (a dependency in pyproject.toml): pip install -c constraints.txt -e .")
    from autoresearch.campaign import campaign_status
    from autoresearch.campaign.holdout import HoldoutRow, HoldoutSummary
    from autoresearch.report.html_page import write_html

    ledger = loss_ledger(tmp_path, [0.5, 0.2, 0.9])
    status = campaign_status(ledger)
    trials = [t.model_copy(update={"suspect": True, "suspect_reason": "node n2 throttled", "nodes": ["n2"]})
              if t.number == 1 else t for t in status.trials]  # fmt: skip
    holdout = HoldoutSummary(metric="test_loss", rows=[HoldoutRow(trial=0, validation=0.5, holdout=0.61),
                                                       HoldoutRow(trial=1, validation=0.2, holdout=None, error="oom")],
                             spearman=1.0, gap=-0.11)  # fmt: skip

    trusted = status.model_copy(update={"trials": trials, "holdout": holdout})
    page = write_html(ledger, trusted, {}, tmp_path / "report.html", ledger.started_at).read_text()

    assert "<th>suspect</th><th>holdout test_loss</th>" in page
    assert "<td>node n2 throttled</td><td>none (oom)</td>" in page and "<td>0.61</td>" in page
    assert "overfitting gap (mean validation minus mean holdout) <b>-0.11</b>" in page
    assert "1 suspect result(s), never declared best (nodes: n2)" in page


def test_the_top_trials_show_the_mean_sd_n_over_confirmations_and_whether_the_winner_is_separable(
        home: Path, tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="report.html needs plotly (a dependency in pyproject.toml): pip install -c constraints.txt -e .")
    from autoresearch.campaign import campaign_status
    from autoresearch.report.html_page import write_html

    ledger = Ledger.open(make_campaign(tmp_path, objective={"metric": "loss", "mode": "min"},
                                       confirm={"top_k": 2, "seeds": 2}))  # fmt: skip
    # trial 0: 0.2 0.22 0.18 -> 0.2 +- 0.02 (n=3); trial 1: 0.5 (n=1); 0.5 - 0.2 > 2 x 0.02: separable
    for params, confirms, value in [({"x": 1.0, "y": 3, "kind": "b"}, None, 0.2), ({"x": 2.0, "y": 1, "kind": "a"}, None, 0.5),
                                    ({"x": 1.0, "y": 3, "kind": "b"}, 0, 0.22), ({"x": 1.0, "y": 3, "kind": "b"}, 0, 0.18)]:
        number = ledger.admit(Proposal(params=params, confirms=confirms)).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        ledger.complete(number, value)
    page = write_html(ledger, campaign_status(ledger), {}, tmp_path / "report.html", ledger.started_at).read_text()

    assert "<th>mean ± sd (n)</th><th>suspect</th>" in page
    assert "<td>0.2 ± 0.02 (n=3)</td>" in page and "<td>0.5 (n=1)</td>" in page
    assert page.count("<td>confirms #0</td>") == 2
    assert "Winner: trial 0, mean ± sd over its runs <b>0.2 ± 0.02 (n=3)</b>; separable from the runner-up, trial 1: <b>yes</b>" in page
