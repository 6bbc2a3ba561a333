"""Where runs are tracked: the one resolver of the tracking shorthand.

compute/ knows nothing of MLflow. A job is tied to a run by what the caller puts in its
spec: the env (`MLFLOW_TRACKING_URI`, `MLFLOW_EXPERIMENT_ID`, `MLFLOW_RUN_ID`, so that
`mlflow.start_run()` inside the script resumes that run) and labels (`tracking.tags`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from compute.jobenv import MLFLOW_TRACKING_URI
from compute.paths import resolve_home

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_STORE_SCHEMES = frozenset({"sqlite", "http", "https", "postgresql", "mysql", "mssql", "databricks", "databricks-uc"})
"""The MLflow stores a tracking URI may name (`postgresql+psycopg2://` counts as postgresql; the
./mlruns file store is not supported)."""

LOCAL_MLFLOW_UI = "http://127.0.0.1:5000"
"""Where `mlflow ui --backend-store-uri sqlite:///...` serves by default."""


class TrackingConfig(BaseModel):
    """Where MLflow runs are stored."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    tracking_uri: str
    """An MLflow tracking URI (`sqlite:///...`, `http://host:5000`, `databricks`, ...)."""
    artifact_location: str | None = None
    """Artifact root for experiments this config creates; None lets the tracking server decide."""


def resolve_tracking(uri: str | None = None, home: str | os.PathLike[str] | None = None) -> TrackingConfig:
    """The one place the tracking shorthand is resolved (runner, skills, report links, evals).

    - None or "": $MLFLOW_TRACKING_URI if set, else `sqlite:///$AUTORESEARCH_HOME/mlflow.db`
      with artifacts in `$AUTORESEARCH_HOME/mlartifacts`;
    - a path to a `.db` file: a SQLite store there, artifacts in `mlartifacts/` beside it;
    - a URI of a known store (`sqlite:///`, `http://`, `postgresql://`, `databricks`): as is.

    Anything else is a ValueError saying what to give instead.
    """
    uri = (uri or "").strip() or os.environ.get(MLFLOW_TRACKING_URI.name, "").strip()
    if not uri:
        root = resolve_home(home)
        return _sqlite(root / "mlflow.db", root / "mlartifacts")
    if _SCHEME.match(uri) or uri in ("databricks", "databricks-uc"):
        scheme = uri.partition(":")[0].partition("+")[0].lower()
        if scheme not in _STORE_SCHEMES:
            raise ValueError(
                f"tracking store {uri!r} has the unknown scheme {scheme!r}: use sqlite:///path/to/mlflow.db, "
                "a path ending in .db, or a server URI like http://host:5000"
            )
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


def mlflow_ui_base(tracking_uri: str) -> str | None:
    """The MLflow UI address for runs in this store: the server itself for an http(s) URI,
    `mlflow ui`'s default address for a SQLite store, None for anything else."""
    if tracking_uri.startswith(("http://", "https://")):
        return tracking_uri.rstrip("/")
    if tracking_uri.startswith("sqlite:"):
        return LOCAL_MLFLOW_UI
    return None


def mlflow_ui_url(base: str, experiment_id: str, run_id: str | None = None) -> str:
    """The one builder of MLflow UI links (`base` from `mlflow_ui_base`): an experiment's runs table
    (`#/experiments/ID/runs`; MLflow 3 opens a bare `#/experiments/ID` on its GenAI "Overview"
    page), or with `run_id` that run's page (`#/experiments/ID/runs/RUN_ID`)."""
    runs = f"{base}/#/experiments/{experiment_id}/runs"
    return runs if run_id is None else f"{runs}/{run_id}"
