from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def mlflow_uri(tmp_path_factory) -> str:
    """One real MLflow SQLite store for the session (its schema takes seconds to create)."""
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"
    MlflowClient(tracking_uri=uri).search_experiments()  # creates the schema now
    return uri


@pytest.fixture
def mlflow_run(mlflow_uri, request) -> tuple[str, str]:
    """(tracking uri, run id) of a fresh run, made the way the campaign runner makes them."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_uri)
    name = request.node.name
    experiment = client.get_experiment_by_name(name)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(name)
    return mlflow_uri, client.create_run(experiment_id).info.run_id
