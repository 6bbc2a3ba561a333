"""write_report: Markdown with valid PNG plots, MLflow links, and graceful gaps."""

from __future__ import annotations

import random
from pathlib import Path

from PIL import Image
from click.testing import CliRunner

from autoresearch.campaign import Ledger, Proposal, TrialFailure
from autoresearch.cli import _register, app
from autoresearch.report import write_report
from tests.autoresearch.campaign.conftest import make_campaign, toy_objective

_register()

PLOTS = ("best_by_trial.png", "best_by_time.png", "importances.png", "failures.png")


def _synthetic_ledger(tmp_path: Path, n: int = 30, **overrides: object) -> Ledger:
    """n trials: mostly complete, three failed (two classes), one pruned, one cancelled, one running."""
    ledger = Ledger.open(make_campaign(tmp_path, **overrides))
    ledger.set_mlflow_experiment("7")
    rng = random.Random(0)
    for i in range(n):
        params = {"x": rng.uniform(-5, 5), "y": rng.randint(0, 10), "kind": rng.choice("abc")}
        number = ledger.admit(Proposal(params=params, rationale="synthetic")).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        ledger.set_mlflow_run(number, f"run-{number}")
        ledger.report(number, 0, toy_objective(params) - 1)
        if i in (4, 11):
            ledger.fail(number, TrialFailure.user, log_excerpt="Traceback (most recent call last):\nValueError: boom")
        elif i == 17:
            ledger.fail(number, TrialFailure.resource, log_excerpt="CUDA out of memory")
        elif i == 20:
            ledger.prune(number)
        elif i == 21:
            ledger.cancel(number, "stopped")
        elif i < n - 1:
            ledger.complete(number, toy_objective(params), gpu_seconds=60)
    return ledger


def _is_png(path: Path) -> bool:
    with Image.open(path) as image:
        image.verify()
        return image.format == "PNG" and image.size[0] > 100 and image.size[1] > 100


def test_report_of_thirty_trials(home: Path, tmp_path: Path) -> None:
    ledger = _synthetic_ledger(tmp_path)
    ledger.append_note("x near 1 scores best; kind b adds a point")

    path = write_report(ledger, tmp_path / "report")

    assert path == tmp_path / "report" / "report.md"
    text = path.read_text()
    for name in PLOTS:
        assert (path.parent / name).is_file() and _is_png(path.parent / name), name
        assert f"]({name})" in text
    assert text.startswith("# Campaign report: toy")
    assert "| user | 2 |" in text and "| resource | 1 |" in text
    assert "ValueError: boom" in text
    for param in ("x", "y", "kind"):
        assert f"\n| {param} | " in text  # the importances table
    best = ledger.best()
    assert f"**Best trial: #{best.number}**" in text
    assert f"mlflow ui --backend-store-uri sqlite:///{home}/mlflow.db" in text
    assert "- Runs: http://127.0.0.1:5000/#/experiments/7/runs\n" in text  # the runs table, not MLflow 3's Overview
    assert "(http://127.0.0.1:5000/#/experiments/7/runs/run-0)" in text
    assert "## Research log" in text and "x near 1 scores best" in text
    assert f"optuna-dashboard {ledger.storage_url}" in text
    assert "| 29 | running |" in text and "| 21 | cancelled |" in text and "| 20 | pruned |" in text


def test_report_with_few_trials_explains_what_is_missing(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path, tracking={"uri": "http://mlflow.internal:5000/"}))
    ledger.set_mlflow_experiment("3")
    for x in (0.0, 1.0):
        n = ledger.admit(Proposal(params={"x": x, "y": 3, "kind": "b"})).trial_number
        ledger.mark_launched(n, f"job-{n:010d}")
        ledger.set_mlflow_run(n, f"r{n}")
        ledger.complete(n, toy_objective({"x": x, "y": 3, "kind": "b"}))

    path = write_report(ledger, tmp_path / "out")

    text = path.read_text()
    assert "Not enough complete trials for parameter importances (2; 5 needed)" in text
    assert "No trial failed." in text and "## Research log" not in text
    assert not (path.parent / "importances.png").exists() and not (path.parent / "failures.png").exists()
    assert _is_png(path.parent / "best_by_trial.png") and _is_png(path.parent / "best_by_time.png")
    assert "(http://mlflow.internal:5000/#/experiments/3/runs/r1)" in text
    assert "- Runs: http://mlflow.internal:5000/#/experiments/3/runs\n" in text
    assert "mlflow ui" not in text


def test_report_before_any_trial(home: Path, tmp_path: Path) -> None:
    path = write_report(Ledger.open(make_campaign(tmp_path)), tmp_path / "empty")
    text = path.read_text()
    assert "No trial has completed yet." in text
    assert list(path.parent.glob("*.png")) == []


def test_report_of_enormous_objective_values_draws_its_plots(home: Path, tmp_path: Path) -> None:
    """Issue 33 item 8: stored objectives of +-1e308 crashed `autoresearch report` in matplotlib
    (`arange: cannot compute length`) and fANOVA; any finite float is drawn, and said why not ranked."""
    ledger = Ledger.open(make_campaign(tmp_path, name="huge"))
    for i, value in enumerate([1e308, -1e308, 0.5, 1.7976931348623157e308, -5e307, 3.0]):
        number = ledger.admit(Proposal(params={"x": i - 2.0, "y": i, "kind": "abc"[i % 3]})).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        ledger.report(number, 0, value)
        ledger.complete(number, value)

    result = CliRunner().invoke(app, ["report", "huge", "--out", str(tmp_path / "out")], env={"COLUMNS": "400"})

    assert result.exit_code == 0, result.output
    text = (tmp_path / "out" / "report.md").read_text()
    assert _is_png(tmp_path / "out" / "best_by_trial.png") and _is_png(tmp_path / "out" / "best_by_time.png")
    assert "an objective value reaches 1.8e+308, whose variance overflows a float" in text
    assert "| 1 | complete | -1e+308 |" in text
