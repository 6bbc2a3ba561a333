"""Tying a compute job to a run: what goes in the job's env and labels, and ending the run with it.

The run gets a `JOB_TAG` tag once the job exists, so the MLflow UI links back to it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from compute.jobenv import MLFLOW_EXPERIMENT_ID, MLFLOW_RUN_ID, MLFLOW_TRACKING_URI
from tracking.base import RunStatus, Tracker
from tracking.served import node_tracking_uri, proxy_run_artifacts
from tracking.tags import EXPERIMENT_LABEL, JOB_TAG, RUN_LABEL


class RunBinding(BaseModel):
    """A new run for a job: what to put in the job's env and labels."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    run_id: str
    """The run the job logs into."""
    experiment_id: str
    """Its experiment."""
    env: dict[str, str]
    """MLFLOW_TRACKING_URI, MLFLOW_EXPERIMENT_ID, MLFLOW_RUN_ID for the job's environment."""
    labels: dict[str, str]
    """`mlflow_run_id` and `mlflow_experiment_id` labels for the job."""


def run_env(tracker: Tracker, experiment_id: str, run_id: str,
            home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """The env that makes `mlflow.start_run()` in a job's script log into `run_id`, for a job of
    `home`'s daemon (default $AUTORESEARCH_HOME): a local SQLite store is served over HTTP when
    that daemon may run the job on another host, and the run's artifacts go through that server
    (tracking.served)."""
    uri = node_tracking_uri(tracker.config, home)
    if uri != tracker.config.tracking_uri:
        proxy_run_artifacts(tracker.config, run_id)
    return {
        MLFLOW_TRACKING_URI.name: uri,
        MLFLOW_EXPERIMENT_ID.name: experiment_id,
        MLFLOW_RUN_ID.name: run_id,
    }


def run_labels(experiment_id: str, run_id: str) -> dict[str, str]:
    """The job labels naming the run a job logs into."""
    return {RUN_LABEL: run_id, EXPERIMENT_LABEL: experiment_id}


def create_job_run(
    tracker: Tracker, experiment: str, run_name: str | None = None, tags: Mapping[str, str] | None = None,
    home: str | os.PathLike[str] | None = None,
) -> RunBinding:
    """Create a run in `experiment` (by name; created if absent) for a job about to be submitted to
    `home`'s daemon."""
    experiment_id = tracker.experiment(experiment)
    run_id = tracker.create_run(experiment_id, name=run_name, tags=tags)
    return RunBinding(
        run_id=run_id,
        experiment_id=experiment_id,
        env=run_env(tracker, experiment_id, run_id, home),
        labels=run_labels(experiment_id, run_id),
    )


def tag_run_with_job(tracker: Tracker, run_id: str, job_id: str) -> None:
    """Record on the run which job logs into it."""
    tracker.log(run_id, tags={JOB_TAG: job_id})


JOB_RUN_STATUS = {"succeeded": RunStatus.FINISHED, "failed": RunStatus.FAILED, "cancelled": RunStatus.KILLED}
"""The run status matching a job's final state."""


def finish_run(tracker: Tracker, run_id: str, job_state: str, ended_at: float | None = None) -> bool:
    """End a still-RUNNING run with the status matching its job's final state
    (succeeded -> FINISHED, failed -> FAILED, cancelled -> KILLED), at `ended_at` (Unix time: its
    job's last attempt's end; else now). A run the script ended itself is left alone. Returns
    whether the run was ended here."""
    status = JOB_RUN_STATUS.get(job_state)
    if status is None or tracker.get_run(run_id).status is not RunStatus.RUNNING:
        return False
    tracker.set_status(run_id, status, end_time=None if ended_at is None else int(ended_at * 1000))
    return True
