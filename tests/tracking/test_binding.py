"""Resolving the tracking store, and tying a run to a job through env and labels."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracking as tracking_pkg
from tracking import (
    MlflowTracker,
    RunStatus,
    TrackingConfig,
    create_job_run,
    finish_run,
    resolve_tracking,
)


def test_default_store_lives_under_the_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
    assert resolve_tracking() == TrackingConfig(
        tracking_uri=f"sqlite:///{tmp_path}/home/mlflow.db",
        artifact_location=(tmp_path / "home" / "mlartifacts").as_uri(),
    )


def test_shorthands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_tracking("runs.db").tracking_uri == f"sqlite:///{tmp_path}/runs.db"
    assert resolve_tracking("sqlite:///rel.db").tracking_uri == f"sqlite:///{tmp_path}/rel.db"  # absolute for jobs
    assert resolve_tracking("http://mlflow:5000") == TrackingConfig(tracking_uri="http://mlflow:5000")
    assert resolve_tracking("databricks").tracking_uri == "databricks"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://from-env:5000")
    assert resolve_tracking().tracking_uri == "http://from-env:5000"
    with pytest.raises(ValueError, match="neither a URI nor a .db file"):
        resolve_tracking("./mlruns")


def test_create_job_run_gives_env_and_labels(tracking: TrackingConfig, experiment_name: str) -> None:
    tracker = MlflowTracker(tracking)
    client = tracker.client
    binding = create_job_run(tracker, experiment_name, run_name="trial-3", tags={"campaign": "c1"})
    assert binding.env == {
        "MLFLOW_TRACKING_URI": tracking.tracking_uri,
        "MLFLOW_EXPERIMENT_ID": binding.experiment_id,
        "MLFLOW_RUN_ID": binding.run_id,
    }
    assert binding.labels == {"mlflow_run_id": binding.run_id, "mlflow_experiment_id": binding.experiment_id}
    run = client.get_run(binding.run_id)
    assert (run.info.run_name, run.info.status, run.data.tags["campaign"]) == ("trial-3", "RUNNING", "c1")
    experiment = client.get_experiment(binding.experiment_id)
    assert experiment.name == experiment_name and experiment.artifact_location == tracking.artifact_location
    again = create_job_run(tracker, experiment_name)
    assert again.experiment_id == binding.experiment_id and again.run_id != binding.run_id


def test_finish_run_ends_only_a_running_run_with_the_jobs_state(tracking: TrackingConfig, experiment_name: str) -> None:
    tracker = MlflowTracker(tracking)
    run_id = create_job_run(tracker, experiment_name).run_id
    assert not finish_run(tracker, run_id, "running")
    assert finish_run(tracker, run_id, "failed") and tracker.get_run(run_id).status is RunStatus.FAILED
    assert not finish_run(tracker, run_id, "succeeded")  # already ended: left alone
    assert tracker.get_run(run_id).status is RunStatus.FAILED


def test_finish_run_ends_the_run_when_its_job_ended_not_when_synced(tracking: TrackingConfig,
                                                                   experiment_name: str) -> None:  # fmt: skip
    tracker = MlflowTracker(tracking)
    run_id = create_job_run(tracker, experiment_name).run_id
    job_ended = (tracker.get_run(run_id).start_time or 0) / 1000 + 27.0  # a 27 s job, synced later
    assert finish_run(tracker, run_id, "succeeded", job_ended)
    assert tracker.get_run(run_id).end_time == int(job_ended * 1000)


def test_public_names_are_exported() -> None:
    modules = [getattr(tracking_pkg, name) for name in ("base", "binding", "config", "logparse", "logsync", "memory",
                                                         "mlflow_tracker", "outbox", "queued", "served", "sources", "tags", "usage")]  # fmt: skip
    public = {
        name
        for module in modules
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", module.__name__) == module.__name__
        and not isinstance(value, type(tracking_pkg)) and name not in ("annotations", "TYPE_CHECKING")
    }
    assert public - set(tracking_pkg.__all__) == set()
