"""A real MLflow tracking store shared by the whole test session.

Creating a SQLite store's schema costs ~3 s, so one store serves every test; tests keep
apart by using their own experiment names (`experiment_name`).
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracking import TrackingConfig, mlflow_client, resolve_tracking


@pytest.fixture(scope="session")
def tracking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrackingConfig]:
    """A TrackingConfig on a session-wide `sqlite:///.../mlflow.db` store (schema created once)."""
    root: Path = tmp_path_factory.mktemp("mlflow")
    config = resolve_tracking(str(root / "mlflow.db"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mlflow_client(config).search_experiments()  # creates the schema now, once
    yield config


@pytest.fixture
def experiment_name() -> str:
    """A fresh experiment name, so tests sharing the store do not see each other's runs."""
    return f"test-{uuid.uuid4().hex[:10]}"
