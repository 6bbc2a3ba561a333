"""The runner's MLflow writes go through the campaign's durable outbox: a runner SIGKILLed with
writes pending loses none, the resumed campaign (and the writer it leaves) applies each one exactly
once, and `autoresearch status` says how many are pending until MLflow has every run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from autoresearch import api
from autoresearch.campaign import CampaignPaths, Ledger, TrialState
from tracking import Outbox, mlflow_client, pending_writes, writer_turn
from tests.autoresearch.runner.conftest import REPO, synthetic_config, write_config
from tests.autoresearch.runner.test_resume import start_runner

STEPS = 5


def _status(name: str) -> tuple[dict, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cli = [sys.executable, "-c", "from autoresearch.cli import main; main()", "status", name]
    as_json = subprocess.run([*cli, "--json"], capture_output=True, text=True, env=env, timeout=120)
    text = subprocess.run(cli, capture_output=True, text=True, env=env, timeout=120)
    assert as_json.returncode == 0 and text.returncode == 0, as_json.stderr + text.stderr
    return json.loads(as_json.stdout), text.stdout


def test_a_killed_runner_loses_no_pending_write_and_the_resumed_campaign_applies_each_once(
    compute_client, tracking, tmp_path
) -> None:
    data = synthetic_config(tracking, steps=STEPS, budget={"max_trials": 6, "max_parallel": 2})
    config = write_config(tmp_path, data)
    name = data["name"]
    outbox_path = CampaignPaths.of(name, compute_client.home).tracking_outbox
    outbox_path.parent.mkdir(parents=True, exist_ok=True)
    blocker = Outbox(outbox_path)
    with writer_turn(blocker):  # a writer that never gets on: every write the runner makes stays queued
        runner = start_runner(config, crash_at="evaluate.ended:4")
        output, _ = runner.communicate(timeout=180)
        assert runner.returncode == -signal.SIGKILL, output
        pending = pending_writes(outbox_path)
        assert pending > 0
        status, text = _status(name)
        assert status["tracking_pending"] == pending and status["tracking_writer_pid"] == os.getpid()
        assert f"tracking: {pending} writes pending (writer pid {os.getpid()}" in text
    blocker.close()
    ended = [t for t in Ledger.load(name, compute_client.home).trials() if t.state is TrialState.complete]
    mlflow = mlflow_client(tracking)
    assert ended and all(mlflow.get_metric_history(t.mlflow_run_id, "objective") == [] for t in ended)

    final = start_runner(config)
    output, _ = final.communicate(timeout=180)
    assert final.returncode == 0, output
    assert api.wait_for_tracking(name, timeout_s=120) == 0

    trials = Ledger.load(name, compute_client.home).trials()
    assert [t.state for t in trials] == [TrialState.complete] * 6
    experiment = mlflow.get_experiment_by_name(name)
    runs = {r.info.run_id: r for r in mlflow.search_runs([experiment.experiment_id])}
    assert sorted(runs) == sorted(t.mlflow_run_id for t in trials)
    for t in trials:
        assert runs[t.mlflow_run_id].info.status == "FINISHED"
        points = mlflow.get_metric_history(t.mlflow_run_id, "objective")
        assert sorted(m.step for m in points) == list(range(1, STEPS + 1)), (t.number, points)  # each point once
    status, text = _status(name)
    assert status["tracking_pending"] == 0 and "tracking:" not in text
