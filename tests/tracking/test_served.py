"""The SQLite store served over HTTP to jobs on other hosts (tracking/served.py). The Ray path that
decides to serve it is covered in tests/compute/backends/test_ray_private_nodes.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from tracking import SERVER_FILE, MlflowTracker, TrackingConfig, create_job_run, node_tracking_uri, serve_store
from tracking import proxy_run_artifacts, stop_tracking_server
from tests.compute.helpers import wait_until

LOG = "import mlflow\nwith mlflow.start_run():\n    mlflow.log_metric('loss', 0.5, step=3)\n"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2):
            return True
    except OSError:
        return False


def test_a_job_logs_through_the_served_store_which_comes_back_on_its_port(
    tracking: TrackingConfig, tmp_path: Path, experiment_name: str
) -> None:
    tracker = MlflowTracker(tracking)
    binding = create_job_run(tracker, experiment_name, home=tmp_path)
    assert binding.env["MLFLOW_TRACKING_URI"] == tracking.tracking_uri  # no daemon on a Ray cluster: as is
    url = serve_store(tracking, tmp_path, "127.0.0.1")
    try:
        env = {**os.environ, **binding.env, "MLFLOW_TRACKING_URI": url}
        subprocess.run([sys.executable, "-c", LOG], env=env, cwd=tmp_path, check=True, timeout=300)
        assert [(m.step, m.value) for m in tracker.metric_history(binding.run_id, "loss")] == [(3, 0.5)]
        assert not (tmp_path / "mlflow.db").exists()
        assert serve_store(tracking, tmp_path, "127.0.0.1") == url  # reused while it answers

        os.killpg(json.loads((tmp_path / SERVER_FILE).read_text())["pid"], signal.SIGKILL)
        wait_until(lambda: not _answers(url), what="the killed server gone")
        assert serve_store(tracking, tmp_path, "127.0.0.1") == url  # restarted on the port jobs were given
    finally:
        assert stop_tracking_server(tmp_path)
    assert not (tmp_path / SERVER_FILE).exists() and not stop_tracking_server(tmp_path)


ARTIFACT = "import mlflow\nwith mlflow.start_run():\n    mlflow.log_text('w = 0.5', 'model/weights.txt')\n"


def test_a_proxied_runs_artifacts_from_a_job_and_from_this_host_meet_in_the_stores_folder(
    tracking: TrackingConfig, tmp_path: Path, experiment_name: str
) -> None:
    """A job logging through the served store uploads its artifacts through the server's proxy (as on
    another host: its cwd has no access to the folder), and this host's writers put theirs in the same
    folder; the MLflow UI's REST API lists both."""
    tracker = MlflowTracker(tracking)
    binding = create_job_run(tracker, experiment_name, home=tmp_path)
    folder = Path(tracking.artifact_location.removeprefix("file://")) / binding.run_id / "artifacts"
    assert tracker.client.get_run(binding.run_id).info.artifact_uri == folder.as_uri()
    assert proxy_run_artifacts(tracking, binding.run_id) and proxy_run_artifacts(tracking, binding.run_id)
    assert tracker.client.get_run(binding.run_id).info.artifact_uri == f"mlflow-artifacts:/{binding.run_id}/artifacts"
    url = serve_store(tracking, tmp_path, "127.0.0.1")
    try:
        env = {**os.environ, **binding.env, "MLFLOW_TRACKING_URI": url}
        subprocess.run([sys.executable, "-c", ARTIFACT], env=env, cwd=tmp_path, check=True, timeout=300)
        tracker.log_text(binding.run_id, "written here", "trial/command.json")
        assert (folder / "model/weights.txt").read_text() == "w = 0.5"
        assert (folder / "trial/command.json").read_text() == "written here"
        with urllib.request.urlopen(f"{url}/api/2.0/mlflow/artifacts/list?run_id={binding.run_id}", timeout=30) as r:
            assert sorted(f["path"] for f in json.load(r)["files"]) == ["model", "trial"]
    finally:
        assert stop_tracking_server(tmp_path)


def test_a_server_store_is_given_to_jobs_as_is(tmp_path: Path) -> None:
    config = TrackingConfig(tracking_uri="http://tracking.example:5000")
    assert node_tracking_uri(config, tmp_path) == "http://tracking.example:5000"
