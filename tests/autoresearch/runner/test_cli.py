"""`autoresearch run | resume | status | report` from the outside: bad input, and the digits
quick start as a real subprocess."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

from click.testing import CliRunner

from autoresearch.cli import _register, app
from tests.autoresearch.runner.conftest import REPO, campaign_jobs

_register()
cli = CliRunner()


def _fails_with(args: list[str], *needles: str) -> None:
    result = cli.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.output, result.output


def test_bad_input_exits_2_with_one_paragraph(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
    _fails_with(["run", str(tmp_path / "missing.yaml")], "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text((REPO / "examples/digits/campaign.yaml").read_text().replace("mode: max", "mode: best"))
    _fails_with(["run", str(bad)], "bad.yaml", "objective.mode")
    _fails_with(["run", str(REPO / "examples/digits/campaign.yaml"), "--max-trials", "0"], "--max-trials")
    _fails_with(["status", "nope"], "no campaign named 'nope'")
    _fails_with(["resume", "nope"], "no campaign named 'nope'")
    _fails_with(["report", "nope"], "no campaign named 'nope'")
    listed = cli.invoke(app, ["status"])
    assert listed.exit_code == 0 and "no campaigns yet" in listed.stdout


def test_the_digits_quick_start_runs_end_to_end(compute_client, tracking):
    env = {**os.environ, "PYTHONPATH": str(REPO), "MLFLOW_TRACKING_URI": tracking.tracking_uri}
    command = [sys.executable, "-c", "from autoresearch.cli import main; main()"]
    done = subprocess.run([*command, "run", "examples/digits/campaign.yaml", "--max-trials", "4"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "campaign digits-mlp completed" in done.stdout
    assert "trial 3 complete: val_accuracy" in done.stdout  # plain lines: stdout is not a terminal

    shown = subprocess.run([*command, "status", "digits-mlp", "--json"], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    status = json.loads(shown.stdout)
    assert [t["state"] for t in status["trials"]] == ["complete"] * 4
    assert 0.5 < status["best_trial"]["value"] <= 1.0
    assert len(campaign_jobs(compute_client, "digits-mlp")) == 4
    # confirm: in 4 trials, 2 explore and the leader is re-run with 2 new seeds; the winner is its mean
    assert [t["confirms"] for t in status["trials"]].count(status["best_trial"]["number"]) == 2
    # its mean is over its trusted runs: a confirmation this shared machine ran slowly is suspect, left out
    trusted = [t for t in status["trials"] if t["confirms"] == status["best_trial"]["number"] and not t["suspect"]]
    assert status["best_trial"]["n"] == 1 + len(trusted) and isinstance(status["separable"], bool)
    report = subprocess.run([*command, "report", "digits-mlp", "--out", str(compute_client.home / "report")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert report.returncode == 0, report.stderr
    text = (compute_client.home / "report" / "report.md").read_text()
    best = status["best_trial"]
    spread = f" ± {best['sd']:.2g}" if best["sd"] is not None else ""
    assert f"val_accuracy = {best['mean']:.6g}{spread} (n={best['n']})" in text
    assert f"Separable from the runner-up, trial #{status['runner_up']}" in text

    graph = sqlite3.connect(compute_client.home / "campaigns" / "digits-mlp" / "graph.db")
    threads = {row[0] for row in graph.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert threads == {"digits-mlp"}  # one LangGraph thread per campaign
