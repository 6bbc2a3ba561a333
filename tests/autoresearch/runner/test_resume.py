"""The runner SIGKILLed at any point and run again: no lost trials, no duplicate trials or jobs."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from autoresearch import api
from autoresearch.campaign import Ledger, TrialState
from autoresearch.runner.crash import ENV
from tracking import mlflow_client
from tests.autoresearch.runner.conftest import REPO, campaign_jobs, synthetic_config, wait_until, write_config

RUNNER = (
    "import sys; from autoresearch import api; from autoresearch.runner import RunnerSettings; "
    "api.run(sys.argv[1], settings=RunnerSettings(poll_s=0.2, heartbeat_s=1.0))"
)


def start_runner(config: Path, crash_at: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(ENV, None)
    if crash_at:
        env[ENV] = crash_at
    return subprocess.Popen([sys.executable, "-c", RUNNER, str(config)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip


def assert_exactly_once(name: str, max_trials: int, client, tracking) -> None:
    assert api.wait_for_tracking(name, timeout_s=120) == 0  # the last runner left its MLflow writes to a writer
    trials = Ledger.load(name).trials()
    counted = [t for t in trials if t.state is not TrialState.cancelled]
    assert len(counted) == max_trials, [(t.number, t.state, t.log_excerpt) for t in trials]
    assert all(t.state is TrialState.complete for t in counted)
    launched = [t for t in trials if t.job_id]
    job_ids = [t.job_id for t in launched]
    assert len(set(job_ids)) == len(job_ids), "two trials share a job"
    jobs = campaign_jobs(client, name)
    assert sorted(j.id for j in jobs) == sorted(job_ids), "a job exists that no trial owns"
    assert all(j.state.value == "succeeded" for j in jobs if j.id in {t.job_id for t in counted})
    runs = [t.mlflow_run_id for t in launched]
    assert len(set(runs)) == len(runs)
    mlflow = mlflow_client(tracking)
    experiment = mlflow.get_experiment_by_name(name)
    assert sorted(r.info.run_id for r in mlflow.search_runs([experiment.experiment_id])) == sorted(runs)
    for t in counted:  # runs a killed runner left RUNNING, with metrics still queued, are finished on resume
        assert mlflow.get_run(t.mlflow_run_id).info.status == "FINISHED"
        steps = sorted(m.step for m in mlflow.get_metric_history(t.mlflow_run_id, "objective"))
        assert steps == list(range(1, len(steps) + 1)) and steps, (t.number, steps)
    assert Ledger.load(name).state.value == "completed"


def test_killed_at_each_crash_point_then_resumed_runs_each_trial_exactly_once(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, budget={"max_trials": 7, "max_parallel": 2})
    config = write_config(tmp_path, data)
    for point in ("propose.asked:2", "launch.submitted:2", "evaluate.ended:2", "replan.start:3"):
        runner = start_runner(config, crash_at=point)
        output, _ = runner.communicate(timeout=120)
        assert runner.returncode == -signal.SIGKILL, f"{point}: {output}"
    final = start_runner(config)
    output, _ = final.communicate(timeout=120)
    assert final.returncode == 0, output
    assert_exactly_once(data["name"], 7, compute_client, tracking)


def test_killed_at_random_times_then_resumed_runs_each_trial_exactly_once(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, steps=4, step_seconds=0.1, budget={"max_trials": 8, "max_parallel": 3})
    config = write_config(tmp_path, data)
    rng = random.Random(5)
    lock = compute_client.home / "campaigns" / data["name"] / "runner.lock"
    for _ in range(3):
        runner = start_runner(config)
        wait_until(lambda: lock.exists(), what="the runner lock")
        time.sleep(rng.uniform(1.0, 3.0))
        if runner.poll() is None:
            runner.kill()
        runner.communicate(timeout=60)
    final = start_runner(config)
    output, _ = final.communicate(timeout=120)
    assert final.returncode == 0, output
    assert_exactly_once(data["name"], 8, compute_client, tracking)
