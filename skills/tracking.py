"""The MLflow binding: where runs are tracked, and how a job is tied to a run.

compute/ knows nothing of MLflow. A job is tied to a run by what the caller puts in its
spec: the env (`MLFLOW_TRACKING_URI`, `MLFLOW_EXPERIMENT_ID`, `MLFLOW_RUN_ID`, so that
`mlflow.start_run()` inside the script resumes that run) and labels (`mlflow_run_id`,
`mlflow_experiment_id`, so skills find the run of a job). The run gets an
`autoresearch.job_id` tag once the job exists, so the MLflow UI links back.

mlflow is imported lazily: importing it costs ~2 s, and most callers never track.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from compute.paths import resolve_home

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

RUN_LABEL = "mlflow_run_id"
"""Job label holding the id of the MLflow run the job logs into."""
EXPERIMENT_LABEL = "mlflow_experiment_id"
"""Job label holding the experiment id of that run."""
JOB_TAG = "autoresearch.job_id"
"""Run tag holding the id of the job that logs into the run."""

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class TrackingConfig(BaseModel):
    """Where MLflow runs are stored."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    tracking_uri: str
    """An MLflow tracking URI (`sqlite:///...`, `http://host:5000`, `databricks`, ...)."""
    artifact_location: str | None = None
    """Artifact root for experiments this config creates; None lets the tracking server decide."""


class RunBinding(BaseModel):
    """A new MLflow run for a job: what to put in the job's env and labels."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    run_id: str
    """The MLflow run the job logs into."""
    experiment_id: str
    """Its experiment."""
    env: dict[str, str]
    """MLFLOW_TRACKING_URI, MLFLOW_EXPERIMENT_ID, MLFLOW_RUN_ID for the job's environment."""
    labels: dict[str, str]
    """`mlflow_run_id` and `mlflow_experiment_id` labels for the job."""


def resolve_tracking(uri: str | None = None, home: str | os.PathLike[str] | None = None) -> TrackingConfig:
    """The one place the tracking shorthand is resolved.

    - None or "": $MLFLOW_TRACKING_URI if set, else `sqlite:///$AUTORESEARCH_HOME/mlflow.db`
      with artifacts in `$AUTORESEARCH_HOME/mlartifacts`;
    - a path to a `.db` file: a SQLite store there, artifacts in `mlartifacts/` beside it;
    - anything with a scheme (`sqlite:///`, `http://`, `postgresql://`, `databricks`): as is.
    """
    uri = (uri or "").strip() or os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if not uri:
        root = resolve_home(home)
        return _sqlite(root / "mlflow.db", root / "mlartifacts")
    if _SCHEME.match(uri) or uri in ("databricks", "databricks-uc"):
        if uri.startswith("sqlite:///"):
            db = Path(uri.removeprefix("sqlite:///")).resolve()  # absolute: jobs run in other dirs
            return _sqlite(db, db.parent / "mlartifacts")
        return TrackingConfig(tracking_uri=uri)
    path = Path(uri).expanduser().resolve()
    if path.suffix != ".db":
        raise ValueError(
            f"tracking store {uri!r} is neither a URI nor a .db file: use sqlite:///path/to/mlflow.db, "
            "a path ending in .db, or a server URI like http://host:5000 (the ./mlruns file store is not supported)"
        )
    return _sqlite(path, path.parent / "mlartifacts")


def _sqlite(db: Path, artifacts: Path) -> TrackingConfig:
    return TrackingConfig(tracking_uri=f"sqlite:///{db}", artifact_location=artifacts.as_uri())


def mlflow_client(config: TrackingConfig) -> MlflowClient:
    """An MlflowClient on the configured store (creates a local SQLite store's directory)."""
    # mlflow's SQLAlchemy store triggers SQLAlchemy deprecation warnings on first use.
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"mlflow\.store")
    from mlflow.tracking import MlflowClient

    if config.tracking_uri.startswith("sqlite:///"):
        Path(config.tracking_uri.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    return MlflowClient(tracking_uri=config.tracking_uri)


def ensure_experiment(client: MlflowClient, config: TrackingConfig, name: str) -> str:
    """The id of experiment `name`, created (with the configured artifact root) if absent."""
    from mlflow.exceptions import MlflowException

    found = client.get_experiment_by_name(name)
    if found is not None:
        return found.experiment_id
    try:
        return client.create_experiment(name, artifact_location=config.artifact_location)
    except MlflowException:  # created concurrently by another client
        found = client.get_experiment_by_name(name)
        if found is None:
            raise
        return found.experiment_id


def create_job_run(
    client: MlflowClient,
    config: TrackingConfig,
    experiment: str,
    run_name: str | None = None,
    tags: dict[str, str] | None = None,
) -> RunBinding:
    """Create a run in `experiment` (by name; created if absent) for a job about to be submitted."""
    experiment_id = ensure_experiment(client, config, experiment)
    run = client.create_run(experiment_id, run_name=run_name, tags=tags or {})
    run_id = run.info.run_id
    return RunBinding(
        run_id=run_id,
        experiment_id=experiment_id,
        env={
            "MLFLOW_TRACKING_URI": config.tracking_uri,
            "MLFLOW_EXPERIMENT_ID": experiment_id,
            "MLFLOW_RUN_ID": run_id,
        },
        labels={RUN_LABEL: run_id, EXPERIMENT_LABEL: experiment_id},
    )


def tag_run_with_job(client: MlflowClient, run_id: str, job_id: str) -> None:
    """Record on the run which job logs into it."""
    client.set_tag(run_id, JOB_TAG, job_id)


_RUN_STATUS = {"succeeded": "FINISHED", "failed": "FAILED", "cancelled": "KILLED"}


def finish_run(client: MlflowClient, run_id: str, job_state: str) -> bool:
    """End a still-RUNNING run with the status matching its job's final state
    (succeeded -> FINISHED, failed -> FAILED, cancelled -> KILLED). A run the script
    ended itself is left alone. Returns whether the run was ended here."""
    if job_state not in _RUN_STATUS or client.get_run(run_id).info.status != "RUNNING":
        return False
    client.set_terminated(run_id, status=_RUN_STATUS[job_state])
    return True
