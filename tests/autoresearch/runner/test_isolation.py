"""A trial cannot read the runner's model key through /proc (the runner seals itself: compute/isolation.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from tests.autoresearch.runner.conftest import REPO
from tests.compute.test_isolation import PROBE, SECRET, SECRET_HEAD, SECRET_TAIL


def test_a_trial_reads_neither_the_runners_environment_nor_its_memory(compute_client, tracking, tmp_path):
    name = "probe-runner"
    lock = compute_client.home / "campaigns" / name / "runner.lock"
    config = {
        "name": name,
        "command": ["python", str(PROBE), str(lock), SECRET_HEAD, SECRET_TAIL, "{x}"],
        "cwd": str(tmp_path),
        "objective": {"metric": "objective", "mode": "max"},
        "search_space": {"x": {"type": "float", "low": 0.0, "high": 1.0}},
        "budget": {"max_trials": 1, "max_parallel": 1},
        "policy": {"kind": "optuna", "pruner": "none"},
        "tracking": {"uri": tracking.tracking_uri},
    }  # fmt: skip
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": SECRET, "ANTHROPIC_API_KEY": SECRET}
    done = subprocess.run([sys.executable, "-c", "from autoresearch.cli import main; main()", "run", str(path)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [job] = compute_client.list(labels={"campaign": name}, limit=10)
    log = compute_client.log_path(job.id).read_text()
    assert "probed pid:" in log and "LEAK" not in log, log
    assert "memory: refused" in log, log
